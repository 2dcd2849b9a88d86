#!/bin/bash
# From a lost node to a training job running again. A 3-node local instance runs the PyTorch
# DDP example (examples/training/ddp_checkpoint.py) on 2 nodes; once it has checkpointed,
# one of its nodes dies (SIGKILL to that node's agent and every process the agent started).
# The controller's and agents' logs say when the node went DOWN, when the job was requeued and
# when its next batch script started; the job's output says when training resumed. REPEATS
# runs; prints a table and writes CSV (milliseconds after the kill).
#   benchmarks/requeue/run.sh [REPEATS] [CSV] [BIN_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
REPEATS=${1:-3}
CSV=$(realpath -m "${2:-benchmarks/results/requeue.csv}")
BIN=$(realpath "${3:-build/bin}")
PYTHON=/usr/bin/python3
WORK=$(mktemp -d /tmp/cohort-requeue.XXXXXX)
cleanup() {
    "$BIN/cohort" stop --state-dir "$WORK/state" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$(dirname "$CSV")"

now_ms() { date +%s%3N; }
log_ms() {  # the time of the first line of log $1 matching $2, in ms since the epoch
    local stamp
    stamp=$(grep -m1 -E "$2" "$1" | sed -E 's/^\[([^]]+)\].*/\1/')
    [ -n "$stamp" ] && date -d "$stamp" +%s%3N
}
wait_for() {  # bounded: until command $2... succeeds or $1 seconds pass
    local limit=$(( $1 * 20 )); shift
    for _ in $(seq "$limit"); do "$@" && return 0; sleep 0.05; done
    echo "gave up waiting for: $*" >&2
    return 1
}
in_file() { grep -q -- "$2" "$1" 2>/dev/null; }
# Every process below pid $1.
descendants() {
    local child
    for child in $(ps -o pid= --ppid "$1"); do
        echo "$child"
        descendants "$child"
    done
}
kill_node() {
    local agent
    agent=$(cat "$WORK/state/cohortd-$1.pid")
    kill -STOP "$agent"
    local tree
    tree=$(descendants "$agent")
    [ -n "$tree" ] && kill -STOP $tree
    tree=$(descendants "$agent")
    kill -KILL "$agent" $tree
}

echo "repeat,node_down_ms,requeued_ms,running_again_ms,training_resumed_ms,resumed_from_step" > "$CSV"
printf '%6s %12s %12s %16s %19s %12s\n' repeat node_down requeued running_again training_resumed from_step
for repeat in $(seq "$REPEATS"); do
    rm -rf "$WORK/state" "$WORK/jobs"
    mkdir -p "$WORK/jobs"
    cd "$WORK/jobs"
    eval "$("$BIN/cohort" start --nodes 3 --state-dir "$WORK/state")"
    id=$("$BIN/cohort" batch --parsable -N2 --ntasks-per-node=1 -o train.out --wrap \
        "$BIN/cohort run $PYTHON $ROOT/examples/training/ddp_checkpoint.py --dir ckpt --steps 40 --every 5 --step-seconds 0.3")
    wait_for 180 in_file train.out "checkpoint at step 10"
    # The job's nodes but its first, where the batch script runs.
    lost=$("$BIN/cohort" show job "$id" --json | $PYTHON -c '
import json, re, sys
nodes = json.load(sys.stdin)["jobs"][0]["nodes"]
prefix, ranges = re.fullmatch(r"(\D+)\[(.*)\]", nodes).groups()
names = []
for part in ranges.split(","):
    lo, _, hi = part.partition("-")
    names += [prefix + str(i) for i in range(int(lo), int(hi or lo) + 1)]
print(names[1])')
    t_kill=$(now_ms)
    kill_node "$lost"
    wait_for 180 in_file train.out "resumed from step"
    t_resumed=$(now_ms)
    wait_for 300 in_file train.out "finished 40 steps"
    t_down=$(log_ms "$WORK/state/cohortctld.log" "node $lost is DOWN")
    t_requeued=$(log_ms "$WORK/state/cohortctld.log" "job $id requeued")
    t_running=""
    for log in "$WORK"/state/cohortd-node*.log; do
        t=$({ grep -E "job $id: batch script started" "$log" || true; } | sed -E 's/^\[([^]]+)\].*/\1/' \
            | while read -r stamp; do date -d "$stamp" +%s%3N; done | awk -v k="$t_kill" '$1 > k' | sort -n | head -1)
        if [ -n "$t" ] && { [ -z "$t_running" ] || [ "$t" -lt "$t_running" ]; }; then t_running=$t; fi
    done
    from=$(grep -m1 -oE "resumed from step [0-9]+" train.out | grep -oE "[0-9]+$")
    row="$repeat,$((t_down - t_kill)),$((t_requeued - t_kill)),$((t_running - t_kill)),$((t_resumed - t_kill)),$from"
    echo "$row" >> "$CSV"
    printf '%6s %12s %12s %16s %19s %12s\n' ${row//,/ }
    "$BIN/cohort" stop --state-dir "$WORK/state" >/dev/null
    cd "$ROOT"
done
echo "csv: $CSV"
if command -v gnuplot >/dev/null; then
    gnuplot <<PLOT
set terminal pngcairo noenhanced size 900,500
set output "${CSV%.csv}.png"
set title "From the kill of a node to: node DOWN, job requeued, running again, training resumed"
set datafile separator ","; set key top left; set ylabel "ms after the kill"; set yrange [0:*]
set style data histogram; set style histogram cluster gap 1; set style fill solid 0.6
plot "$CSV" every ::1 using 2:xtic(1) title "node DOWN", "" every ::1 using 3 title "requeued", \
     "" every ::1 using 4 title "running again", "" every ::1 using 5 title "training resumed"
PLOT
    echo "plot: ${CSV%.csv}.png"
fi
