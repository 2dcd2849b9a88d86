# Data-parallel training that survives a lost node: PyTorch DDP over gloo, a checkpoint every
# few steps, and a restart that resumes from the last one. Run it as a step of a batch job
# (`cohort run` or `srun` inside an `#SBATCH --requeue` script): when a node of the job is
# lost, Cohort requeues the job with the same id, the script runs again on healthy nodes,
# and training continues from the checkpoint instead of step 0.
#
# Deterministic on purpose (fixed seeds, one thread, each step's batch derived from the step
# and the rank), so a run that was interrupted and resumed ends with exactly the weights of
# one that was not.
#
#   python3 ddp_checkpoint.py --dir CKPT_DIR --steps 200 --every 10 [--step-seconds 0.1]
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", required=True, help="checkpoint directory, shared by the nodes")
    parser.add_argument("--steps", type=int, default=200, help="training steps in all")
    parser.add_argument("--every", type=int, default=10, help="checkpoint every N steps")
    parser.add_argument("--step-seconds", type=float, default=0.0,
                        help="sleep per step, standing in for real work")
    return parser.parse_args()


def make_model():
    torch.manual_seed(1234)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))


def batch(step, rank):
    """The same synthetic batch for (step, rank) in every attempt."""
    generator = torch.Generator().manual_seed(step * 1000 + rank)
    x = torch.randn(64, 16, generator=generator)
    y = x[:, :4].sum(dim=1, keepdim=True) - x[:, 4:8].sum(dim=1, keepdim=True)
    return x, y


def save_atomically(state, path):
    """Write then rename, so a node lost mid-write never leaves a torn checkpoint."""
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def main():
    args = parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    checkpoint = os.path.join(args.dir, "checkpoint.pt")

    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    start = 0
    if os.path.exists(checkpoint):
        state = torch.load(checkpoint)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["step"]
        if rank == 0:
            print(f"resumed from step {start} (restart {os.environ.get('SLURM_RESTART_COUNT', '0')})",
                  flush=True)
    ddp = DistributedDataParallel(model)

    for step in range(start, args.steps):
        x, y = batch(step, rank)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()  # gradients averaged over the ranks
        optimizer.step()
        done = step + 1
        if rank == 0 and (done % args.every == 0 or done == args.steps):
            os.makedirs(args.dir, exist_ok=True)
            save_atomically({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                             "step": done}, checkpoint)
            print(f"checkpoint at step {done} loss {loss.item():.6f}", flush=True)
        time.sleep(args.step_seconds)

    if rank == 0:
        save_atomically(model.state_dict(), os.path.join(args.dir, "final.pt"))
        print(f"finished {args.steps} steps", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
