#!/bin/bash
# Durability under fire: 8 parallel clients submit JOBS held jobs in all while cohortctld is
# killed with SIGKILL KILLS times and restarted each time. A submission counts as
# acknowledged when its client printed the job id; a client whose request failed submits
# again. Afterwards every acknowledged id must be in the controller (lost: 0), no id may
# have been printed twice (duplicates: 0), and once released and run, every job must reach a
# final state (here COMPLETED: they run `true`). Prints a table and writes CSV.
#   benchmarks/storm/run.sh [JOBS] [KILLS] [CSV] [BIN_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
JOBS=${1:-10000}
KILLS=${2:-20}
CSV=$(realpath -m "${3:-benchmarks/results/storm.csv}")
BIN=$(realpath "${4:-build/bin}")
CLIENTS=8
WORK=$(mktemp -d /tmp/cohort-storm.XXXXXX)
cleanup() {
    "$BIN/cohort" stop --state-dir "$WORK/state" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$(dirname "$CSV")" "$WORK/jobs"
cd "$WORK/jobs"
eval "$("$BIN/cohort" start --nodes 2 --state-dir "$WORK/state")"
ctld_pid() { cat "$WORK/state/cohortctld.pid"; }
restart_controller() {
    # In a subshell, so the daemon is no job of this shell (the final `wait` is for clients).
    (setsid "$BIN/cohortctld" --config "$COHORT_CONF" --pid-file "$WORK/state/cohortctld.pid" \
        >> "$WORK/state/cohortctld.log" 2>&1 < /dev/null &)
    for _ in $(seq 100); do "$BIN/cohort" queue -h -t R >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "cohortctld did not come back" >&2
    return 1
}

start=$(date +%s%3N)
for c in $(seq "$CLIENTS"); do
    (
        retries=0
        for _ in $(seq $((JOBS / CLIENTS))); do
            # Bounded: a submission is retried until acknowledged, at most 100 times.
            for attempt in $(seq 100); do
                if id=$("$BIN/cohort" batch --parsable -H -o /dev/null --wrap true 2>/dev/null); then
                    echo "$id" >> "$WORK/acked.$c"
                    break
                fi
                retries=$((retries + 1))
                sleep 0.05
            done
        done
        echo "$retries" > "$WORK/retries.$c"
    ) &
done
kills=0
while [ "$kills" -lt "$KILLS" ] && [ "$(jobs -rp | wc -l)" -gt 0 ]; do
    sleep 0.$((RANDOM % 9 + 1))
    kill -KILL "$(ctld_pid)"
    kills=$((kills + 1))
    sleep 0.2
    restart_controller
done
wait
end=$(date +%s%3N)

cat "$WORK"/acked.* | sort > "$WORK/acked"
acked=$(wc -l < "$WORK/acked")
duplicates=$(uniq -d "$WORK/acked" | wc -l)
"$BIN/cohort" queue -h -t PD -o %i | sort > "$WORK/stored"
lost=$(comm -23 "$WORK/acked" "$WORK/stored" | wc -l)
unacknowledged=$(comm -13 "$WORK/acked" "$WORK/stored" | wc -l)
retries=$(cat "$WORK"/retries.* | awk '{ s += $1 } END { print s + 0 }')
# Every job runs to a final state once released (bounded wait).
"$BIN/cohort" release $(cat "$WORK/stored") >/dev/null
for _ in $(seq 1200); do [ -z "$("$BIN/cohort" queue -h)" ] && break; sleep 0.5; done
unfinished=$("$BIN/cohort" queue -h | wc -l)
completed=$("$BIN/cohort" acct -S 2000-01-01 -s CD -j "$(paste -sd, "$WORK/stored")" \
    | grep -c " COMPLETED ") || completed=0

echo "clients,jobs,controller_kills,acknowledged,lost,duplicates,stored_not_acknowledged,client_retries,unfinished,completed,seconds" > "$CSV"
echo "$CLIENTS,$JOBS,$kills,$acked,$lost,$duplicates,$unacknowledged,$retries,$unfinished,$completed,$(( (end - start) / 1000 ))" >> "$CSV"
column -s, -t < "$CSV"
echo "csv: $CSV"
