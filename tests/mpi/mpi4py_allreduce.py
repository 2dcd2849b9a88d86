# mpi4py under Cohort: MPI_Init through PMIx, an allreduce of the ranks.
from mpi4py import MPI

comm = MPI.COMM_WORLD
total = comm.allreduce(comm.Get_rank(), op=MPI.SUM)
print(f"mpi4py rank {comm.Get_rank()} of {comm.Get_size()} sum {total}", flush=True)
