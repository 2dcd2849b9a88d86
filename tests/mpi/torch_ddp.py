# PyTorch distributed under Cohort: init_process_group("gloo") from the variables the launcher
# sets (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), a DDP step and an all_reduce.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo")
rank = dist.get_rank()
world = dist.get_world_size()
model = DistributedDataParallel(torch.nn.Linear(4, 1))
model(torch.ones(2, 4)).sum().backward()  # gradients all-reduced across the ranks
value = torch.tensor([float(rank)])
dist.all_reduce(value)
print(f"torch rank {rank} of {world} local {os.environ['LOCAL_RANK']} sum {int(value.item())}",
      flush=True)
dist.destroy_process_group()
