#!/bin/sh
# Throughput of a local 4-node instance: sequential CLI submission, submit-to-completion of
# trivial jobs, and the wall time of a small step. Prints figures and writes CSV.
#   benchmarks/throughput.sh [JOBS] [CSV] [BIN_DIR]
# BIN_DIR (default build/bin) lets two builds be compared in one run.
# Each figure comes with a baseline measured in the same run: the same shell loop running
# /bin/true, i.e. the cost of starting a process at all on this machine.
set -eu
cd "$(dirname "$0")/.."
JOBS=${1:-1000}
CSV=$(realpath -m "${2:-benchmarks/results/throughput.csv}")
BIN=$(realpath "${3:-build/bin}")
STATE="$(mktemp -d /tmp/cohort-bench.XXXXXX)"
mkdir -p "$(dirname "$CSV")" "$STATE/work"
trap 'for d in "$STATE"/state*; do "$BIN/cohort" stop --state-dir "$d" >/dev/null 2>&1; done; rm -rf "$STATE"' EXIT

now() { date +%s.%N; }
rate() { echo "$1 $2 $3" | awk '{ printf "%.1f", $1 / ($3 - $2) }'; }

# 64 CPUs per agent (as a slurm.conf CPUs= override) so the 2-core machine's job slots do
# not bound the submit-to-completion figure.
eval "$("$BIN/cohort" start --nodes 4 --cpus 64 --state-dir "$STATE/state")"
cd "$STATE/work"

t0=$(now); i=0
while [ $i -lt "$JOBS" ]; do /bin/true; i=$((i + 1)); done
t1=$(now)
baseline=$(rate "$JOBS" "$t0" "$t1")

t0=$(now); i=0
while [ $i -lt "$JOBS" ]; do "$BIN/cohort" batch -H --wrap true >/dev/null; i=$((i + 1)); done
t1=$(now)
submit=$(rate "$JOBS" "$t0" "$t1")
"$BIN/cohort" cancel $(seq -s ' ' 1 "$JOBS")

# Submits JOBS trivial jobs and waits until the queue is empty; prints the rate.
# $1: the first job id of this round.
submit_and_complete() {
    first=$1; last=$(($1 + JOBS - 1))
    t0=$(now); i=0
    while [ $i -lt "$JOBS" ]; do "$BIN/cohort" batch -o /dev/null --wrap true >/dev/null; i=$((i + 1)); done
    deadline=$(( $(date +%s) + 600 ))
    while [ "$("$BIN/cohort" queue | wc -l)" -gt 1 ] && [ "$(date +%s)" -lt "$deadline" ]; do
        sleep 0.05
    done
    t1=$(now)
    completed=$("$BIN/cohort" acct -s CD | awk -v f="$first" -v l="$last" '$1 >= f && $1 <= l' | wc -l)
    echo "$(rate "$JOBS" "$t0" "$t1") $completed"
}
set -- $(submit_and_complete $((JOBS + 1)))
complete=$1; completed=$2

runs=20; t0=$(now); i=0
while [ $i -lt $runs ]; do "$BIN/cohort" run -N2 -n4 true; i=$((i + 1)); done
t1=$(now)
step_ms=$(echo "$t0 $t1 $runs" | awk '{ printf "%.1f", ($2 - $1) * 1000 / $3 }')

# The same round with the CPUs hwloc finds (2 per agent here): 8 job slots in all.
"$BIN/cohort" stop --state-dir "$STATE/state" >/dev/null
eval "$("$BIN/cohort" start --nodes 4 --state-dir "$STATE/state-real")"
set -- $(submit_and_complete 1)
complete_real=$1; completed_real=$2
"$BIN/cohort" stop --state-dir "$STATE/state-real" >/dev/null

echo "baseline /bin/true loop:            $baseline per s"
echo "sequential cohort batch -H:         $submit jobs/s"
echo "submit-to-completion ($completed/$JOBS completed): $complete jobs/s"
echo "  with probed CPUs ($completed_real/$JOBS completed): $complete_real jobs/s"
echo "cohort run -N2 -n4 true:            $step_ms ms (mean of $runs)"
{
    echo "metric,value,unit,baseline_true_per_s"
    echo "sequential_submit,$submit,jobs_per_s,$baseline"
    echo "submit_to_completion,$complete,jobs_per_s,$baseline"
    echo "submit_to_completion_probed_cpus,$complete_real,jobs_per_s,$baseline"
    echo "step_N2_n4_true,$step_ms,ms,$baseline"
} > "$CSV.tmp"
mv "$CSV.tmp" "$CSV"
echo "wrote $CSV"
