#!/bin/sh
# Controller memory per pending job: starts a local 4-node instance, submits JOBS held
# `--wrap true` jobs with a realistic environment, and reports the growth of cohortctld's
# resident set (VmRSS) per job. Writes CSV.
#   benchmarks/controller_memory/run.sh [JOBS] [CSV] [BIN_DIR]
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
i=1
while [ $i -lt "$JOBS" ]; do "$BIN/cohort" batch -H --wrap true >/dev/null; i=$((i + 1)); done
after=$(rss_kib)
env_bytes=$(env | wc -c)
per_job=$(echo "$before $after $JOBS" | awk '{ printf "%.2f", ($2 - $1) / ($3 - 1) }')
echo "pending_jobs,rss_before_kib,rss_after_kib,kib_per_pending_job,submit_env_bytes" > "$CSV"
echo "$JOBS,$before,$after,$per_job,$env_bytes" >> "$CSV"
echo "controller RSS: $before KiB -> $after KiB over $JOBS pending jobs: $per_job KiB per job" \
     "(submitting environment: $env_bytes bytes)"
