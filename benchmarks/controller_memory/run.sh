#!/bin/sh
# Controller memory per pending job: starts a local 4-node instance, submits JOBS held
# `--wrap true` jobs with a realistic environment, and reports the growth of cohortctld's
# resident set (VmRSS) per job. Writes CSV.
#   benchmarks/controller_memory/run.sh [JOBS] [CSV] [BIN_DIR]
# SPLIT=1 makes the jobs as held arrays of 1,000 whose tasks are split off by holding them by
# id (whole in-memory jobs, as sequential submissions are), so 100,000 take seconds, not
# minutes; JOBS is then rounded down to a multiple of 1,000.
set -eu
cd "$(dirname "$0")/../.."
JOBS=${1:-10000}
CSV=$(realpath -m "${2:-benchmarks/results/controller_memory.csv}")
BIN=$(realpath "${3:-build/bin}")
STATE="$(mktemp -d /tmp/cohort-mem.XXXXXX)"
mkdir -p "$(dirname "$CSV")" "$STATE/work"
trap '"$BIN/cohort" stop --state-dir "$STATE/state" >/dev/null 2>&1; rm -rf "$STATE"' EXIT

eval "$("$BIN/cohort" start --nodes 4 --state-dir "$STATE/state")"
cd "$STATE/work"
pid=$(pgrep -n -f "cohortctld.*$STATE/state")
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"; }

# One job first, so that lazily built structures are not counted as per-job cost.
"$BIN/cohort" batch -H --wrap true >/dev/null
before=$(rss_kib)
if [ "${SPLIT:-0}" = 1 ]; then
    JOBS=$((JOBS / 1000 * 1000 + 1))  # the arrays' tasks and the first job
    for _ in $(seq $((JOBS / 1000))); do
        first=$("$BIN/cohort" batch --parsable -H --array=0-999 --wrap true)
        "$BIN/cohort" hold $(seq "$first" $((first + 999))) >/dev/null
    done
else
    i=1
    while [ $i -lt "$JOBS" ]; do "$BIN/cohort" batch -H --wrap true >/dev/null; i=$((i + 1)); done
fi
after=$(rss_kib)
env_bytes=$(env | wc -c)
per_job=$(echo "$before $after $JOBS" | awk '{ printf "%.2f", ($2 - $1) / ($3 - 1) }')
made_as=$([ "${SPLIT:-0}" = 1 ] && echo "split arrays" || echo "submissions")
echo "pending_jobs,made_as,rss_before_kib,rss_after_kib,kib_per_pending_job,submit_env_bytes" > "$CSV"
echo "$JOBS,$made_as,$before,$after,$per_job,$env_bytes" >> "$CSV"
echo "controller RSS: $before KiB -> $after KiB over $JOBS pending jobs: $per_job KiB per job" \
     "(submitting environment: $env_bytes bytes)"
