/* A real MPI job for the launch tests: every rank reports its rank, the world size and the
 * sum of all ranks (MPI_Allreduce), then meets the others in MPI_Barrier.
 * With an argument N >= 0, rank N calls MPI_Abort(MPI_COMM_WORLD, 7) after the barrier. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
    int rank = 0;
    int size = 0;
    int sum = 0;
    char host[256] = "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    gethostname(host, sizeof(host) - 1);
    printf("rank %d of %d sum %d\n", rank, size, sum);
    fflush(stdout);
    if (argc > 1 && atoi(argv[1]) == rank) {
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    MPI_Finalize();
    return 0;
}
