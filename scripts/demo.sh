#!/bin/sh
# The demo: a local 4-node instance that runs a batch job, a 4-rank step and an Open MPI
# job whose ranks bootstrap through Cohort's PMIx server.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
BIN="$(pwd)/build/bin"
MPI_HELLO="$(pwd)/build/tests/mpi/allreduce_ompi"
STATE="$(mktemp -d /tmp/cohort-demo.XXXXXX)"
cd "$STATE"
cat > demo.sh <<'SCRIPT'
#!/bin/sh
#SBATCH --job-name=demo
#SBATCH --nodes=2 --ntasks=4
#SBATCH --output=demo-%j.out
echo "batch job $SLURM_JOB_ID on $SLURMD_NODENAME, nodes $SLURM_JOB_NODELIST"
"$COHORT_BIN/cohort" run -l sh -c 'echo "rank $RANK of $WORLD_SIZE on $SLURMD_NODENAME"'
SCRIPT
export COHORT_BIN="$BIN" COHORT_MPI_HELLO="$MPI_HELLO"
exec "$BIN/cohort" start --nodes 4 --state-dir "$STATE/state" -- sh -c '
  set -e
  "$COHORT_BIN/cohort" nodes
  id=$("$COHORT_BIN/cohort" batch --parsable demo.sh)
  echo "Submitted batch job $id"
  while "$COHORT_BIN/cohort" queue -t PD,R,CG | grep -q " $id "; do sleep 0.2; done
  echo "--- demo-$id.out"; cat "demo-$id.out"
  echo "--- cohort run -N2 -n4 -l hostname-like step"
  "$COHORT_BIN/cohort" run -N2 -n4 -l sh -c "echo rank \$RANK of \$WORLD_SIZE on \$SLURMD_NODENAME, master \$MASTER_ADDR:\$MASTER_PORT"
  echo "--- Open MPI: 4 ranks on 2 nodes, MPI_Allreduce of the ranks (PMIx wire-up)"
  "$COHORT_BIN/cohort" run -N2 -n4 -l "$COHORT_MPI_HELLO"
  "$COHORT_BIN/cohort" acct'
