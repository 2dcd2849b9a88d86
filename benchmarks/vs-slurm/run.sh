#!/bin/bash
# Cohort next to Debian's Slurm 22.05 on this machine, in one run: both as 4-node loopback
# clusters, held `--wrap true` jobs. For each queue size: sequential submission rate, the
# controller's memory per pending job, `queue`/`squeue` (text and JSON), and cancelling all
# of them; then 8 parallel submitters, 1,000 trivial jobs to completion and a 2-node step;
# then Cohort alone at the largest size: one array of that many tasks (one record
# until they start), then that many pending jobs of their own. Timings alternate
# Cohort and Slurm, best of REPEATS; every figure is lower-is-better, and the ratio column is
# Cohort's over Slurm's. Prints a table, writes CSV and, with gnuplot, a PNG.
#   benchmarks/vs-slurm/run.sh [SIZES] [CSV] [BIN_DIR]     (as root: Slurm's daemons are)
#   SIZES default "1000 10000"; COHORT_ALONE default 100000; REPEATS default 3.
#   QUICK=1: only the per-size figures and the step (no parallel submitters, no turnaround,
#   no Cohort-alone part), for checking a change to submission, listing or cancel.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
SIZES=${1:-1000 10000}
CSV=$(realpath -m "${2:-benchmarks/results/vs-slurm.csv}")
BIN=$(realpath "${3:-build/bin}")
COHORT_ALONE=${COHORT_ALONE:-100000}
REPEATS=${REPEATS:-3}
. benchmarks/vs-slurm/slurm.sh

WORK=$(mktemp -d /tmp/cohort-vs-slurm.XXXXXX)
cleanup() {
    "$BIN/cohort" stop --state-dir "$WORK/cohort" >/dev/null 2>&1 || true
    slurm_down
    rm -rf "$WORK"
}
trap cleanup EXIT
slurm_install
slurm_up "$WORK/slurm" 26817
eval "$("$BIN/cohort" start --nodes 4 --state-dir "$WORK/cohort")"
cohortctld_pid=$(pgrep -n -f "cohortctld.*$WORK/cohort")
mkdir -p "$WORK/jobs" "$(dirname "$CSV")"
cd "$WORK/jobs"

now_ms() { date +%s%3N; }
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
# Best (lowest) wall time in ms of REPEATS runs of a command, output discarded.
best_ms() {
    local best="" t0 t1 i
    for i in $(seq "$REPEATS"); do
        t0=$(now_ms); "$@" >/dev/null 2>&1 || true; t1=$(now_ms)
        if [ -z "$best" ] || [ $((t1 - t0)) -lt "$best" ]; then best=$((t1 - t0)); fi
    done
    echo "$best"
}
wait_empty() {  # bounded: until the listing is empty or WAIT_S (default 120) seconds
    local polls=$(( ${WAIT_S:-120} * 5 ))
    for _ in $(seq "$polls"); do [ -z "$("$@" 2>/dev/null)" ] && return 0; sleep 0.2; done
    echo "still not empty after ${WAIT_S:-120} s: $*" >&2
}
# 8 loops at once, each submitting JOBS/8 held jobs with "$@"; prints the wall ms.
parallel_submit_ms() {
    local t0 t1 i
    t0=$(now_ms)
    for i in $(seq 8); do
        (for _ in $(seq $((JOBS / 8))); do "$@" -H --wrap true >/dev/null; done) &
    done
    wait
    t1=$(now_ms)
    echo $((t1 - t0))
}
row() {  # size, what, cohort, slurm, unit
    local ratio
    ratio=$(awk -v c="$3" -v s="$4" 'BEGIN { if (s > 0 && c != "") printf "%.2f", c / s; else print "" }')
    echo "$1,$2,$3,$4,$5,$ratio" >> "$CSV"
    printf '%8s  %-34s %12s %12s %-9s %7s\n' "$1" "$2" "$3" "${4:--}" "$5" "${ratio:--}"
}

# Mean wall ms of 200 runs of a command, output discarded.
mean_ms() {
    local t0 t1
    t0=$(date +%s%N)
    for _ in $(seq 200); do "$@" >/dev/null 2>&1 || true; done
    t1=$(date +%s%N)
    awk -v t=$((t1 - t0)) 'BEGIN { printf "%.2f", t / 200 / 1e6 }'
}

echo "size,measure,cohort,slurm,unit,cohort_over_slurm" > "$CSV"
printf '%8s  %-34s %12s %12s %-9s %7s\n' size measure cohort slurm unit ratio
# Start-up: every submission and poll pays it. --help builds every option and prints them,
# before any connection; /bin/true is the floor of fork and exec from this shell. Then a
# submission's own: from spawning `cohort batch` to the first byte it sends a stand-in
# controller, next to spawning /bin/true until it has exited (first_byte.py).
row 1 "start-up: batch --help / sbatch --help" "$(mean_ms "$BIN/cohort" batch --help)" \
    "$(mean_ms sbatch --help)" "ms"
row 1 "start-up floor: /bin/true" "$(mean_ms /bin/true)" "" "ms"
read -r first_byte true_exit < <(python3 "$ROOT/benchmarks/vs-slurm/first_byte.py" "$BIN/cohort" \
    "$WORK/cohort/cohort.json" 300)
row 1 "start-up: spawn to first byte sent (batch)" "$first_byte" "" "ms"
row 1 "start-up floor: spawn to exit (/bin/true)" "$true_exit" "" "ms"
for n in $SIZES; do
    # Submission: alternate 100-job rounds so drift in this machine hits both alike.
    c_ms=0; s_ms=0; done_n=0
    c_rss0=$(rss_kib "$cohortctld_pid"); s_rss0=$(rss_kib "$SLURMCTLD_PID")
    while [ "$done_n" -lt "$n" ]; do
        k=$(( n - done_n < 100 ? n - done_n : 100 ))
        t0=$(now_ms)
        for _ in $(seq "$k"); do "$BIN/cohort" batch -H --wrap true >/dev/null; done
        t1=$(now_ms)
        for _ in $(seq "$k"); do sbatch -H --wrap true >/dev/null; done
        t2=$(now_ms)
        c_ms=$((c_ms + t1 - t0)); s_ms=$((s_ms + t2 - t1)); done_n=$((done_n + k))
    done
    row "$n" "sequential submission per job" "$(awk -v n="$n" -v t="$c_ms" 'BEGIN { printf "%.2f", t / n }')" \
        "$(awk -v n="$n" -v t="$s_ms" 'BEGIN { printf "%.2f", t / n }')" "ms"
    row "$n" "controller RSS per pending job" \
        "$(awk -v a="$c_rss0" -v b="$(rss_kib "$cohortctld_pid")" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }')" \
        "$(awk -v a="$s_rss0" -v b="$(rss_kib "$SLURMCTLD_PID")" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }')" "KiB"
    row "$n" "queue / squeue" "$(best_ms "$BIN/cohort" queue)" "$(best_ms squeue)" "ms"
    row "$n" "queue -h -t PD (a script's poll)" "$(best_ms "$BIN/cohort" queue -h -t PD)" \
        "$(best_ms squeue -h -t PD)" "ms"
    row "$n" "queue --json / squeue --json" "$(best_ms "$BIN/cohort" queue --json)" \
        "$(best_ms squeue --json)" "ms"
    # Until the queue is empty: scancel returns before slurmctld has cancelled them all.
    t0=$(now_ms); "$BIN/cohort" cancel --me >/dev/null; wait_empty "$BIN/cohort" queue -h
    t1=$(now_ms); scancel -u "$(id -un)"; wait_empty squeue -h; t2=$(now_ms)
    row "$n" "cancel all until the queue is empty" "$((t1 - t0))" "$((t2 - t1))" "ms"
done

if [ "${QUICK:-0}" = 1 ]; then
    row 1 "run / srun -N2 -n4 true" "$(best_ms "$BIN/cohort" run -N2 -n4 true)" \
        "$(best_ms srun -N2 -n4 true)" "ms"
    "$ROOT/benchmarks/vs-slurm/plot.sh" "$CSV"
    echo "csv: $CSV"
    exit 0
fi

# Eight submitting loops at once, on empty queues.
JOBS=1000
c_ms=$(parallel_submit_ms "$BIN/cohort" batch)
s_ms=$(parallel_submit_ms sbatch)
row "$JOBS" "8 parallel submitters (per job)" "$(awk -v t="$c_ms" 'BEGIN { printf "%.2f", t / 1000 }')" \
    "$(awk -v t="$s_ms" 'BEGIN { printf "%.2f", t / 1000 }')" "ms"
# The same 8 loops spawning /bin/true: what process creation alone costs on this machine's cores.
floor_ms=$(parallel_submit_ms /bin/true)
row "$JOBS" "8 parallel loops of /bin/true (floor)" \
    "$(awk -v t="$floor_ms" 'BEGIN { printf "%.2f", t / 1000 }')" "" "ms"
"$BIN/cohort" cancel --me >/dev/null; scancel -u "$(id -un)"
wait_empty "$BIN/cohort" queue -h; wait_empty squeue -h

# Turnaround: 1,000 trivial jobs, from the first submission until none is left.
t0=$(now_ms)
for _ in $(seq 1000); do "$BIN/cohort" batch -o /dev/null --wrap true >/dev/null; done
WAIT_S=600 wait_empty "$BIN/cohort" queue -h
t1=$(now_ms)
for _ in $(seq 1000); do sbatch -o /dev/null --wrap true >/dev/null; done
WAIT_S=600 wait_empty squeue -h
t2=$(now_ms)
row 1000 "1000 trivial jobs from submit to all done" "$((t1 - t0))" "$((t2 - t1))" "ms"

# A step over two nodes, from the command to its end.
row 1 "run / srun -N2 -n4 true" "$(best_ms "$BIN/cohort" run -N2 -n4 true)" \
    "$(best_ms srun -N2 -n4 true)" "ms"

# Cohort alone at the largest size. First as one array: its pending tasks are one record.
rss0=$(rss_kib "$cohortctld_pid")
t0=$(now_ms)
array=$("$BIN/cohort" batch --parsable -H --array=0-$((COHORT_ALONE - 1)) --wrap true)
t1=$(now_ms)
row "$COHORT_ALONE" "submission of one array of them" "$((t1 - t0))" "" "ms"
row "$COHORT_ALONE" "controller RSS of that array" "$(( $(rss_kib "$cohortctld_pid") - rss0 ))" "" "KiB"
"$BIN/cohort" cancel "$array" >/dev/null
wait_empty "$BIN/cohort" queue -h
# Then as jobs of their own: held arrays of 1,000 whose tasks are split off by naming them.
arrays=$(( COHORT_ALONE / 1000 ))
rss0=$(rss_kib "$cohortctld_pid")
for _ in $(seq "$arrays"); do
    first=$("$BIN/cohort" batch --parsable -H --array=0-999 --wrap true)
    "$BIN/cohort" hold $(seq "$first" $((first + 999))) >/dev/null
done
n=$((arrays * 1000))
row "$n" "controller RSS per pending job" \
    "$(awk -v a="$rss0" -v b="$(rss_kib "$cohortctld_pid")" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }')" "" "KiB"
row "$n" "queue" "$(best_ms "$BIN/cohort" queue)" "" "ms"
row "$n" "queue -h -t PD" "$(best_ms "$BIN/cohort" queue -h -t PD)" "" "ms"
row "$n" "queue --json" "$(best_ms "$BIN/cohort" queue --json)" "" "ms"
t0=$(now_ms); "$BIN/cohort" cancel --me >/dev/null; wait_empty "$BIN/cohort" queue -h; t1=$(now_ms)
row "$n" "cancel all until the queue is empty" "$((t1 - t0))" "" "ms"

"$ROOT/benchmarks/vs-slurm/plot.sh" "$CSV"
echo "csv: $CSV"
