#!/bin/sh
# cohort acct over a long history: the store query for one user's last week and for
# everyone's last day, with 10^5 and 10^6 finished jobs in the database. Writes CSV.
#   benchmarks/acct_history/run.sh [CSV] [BIN_DIR]
set -eu
cd "$(dirname "$0")/../.."
CSV=$(realpath -m "${1:-benchmarks/results/acct_history.csv}")
BIN="$(realpath "${2:-build/bin}")/bench_acct_history"
DB=$(mktemp -d /tmp/cohort-acct.XXXXXX)
trap 'rm -rf "$DB"' EXIT
mkdir -p "$(dirname "$CSV")"
echo "finished_jobs,users,days,fill_s,one_user_last_week_ms,one_user_last_week_rows,everyone_last_day_ms,everyone_last_day_rows" > "$CSV"
printf '%14s %22s %10s %22s %10s\n' "finished jobs" "one user, last week ms" rows "everyone, last day ms" rows
for jobs in 100000 1000000; do
    "$BIN" --jobs "$jobs" --db "$DB/state.db" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
keys = ("jobs", "users", "days", "fill_s", "one_user_last_week_ms", "one_user_last_week_rows",
        "everyone_last_day_ms", "everyone_last_day_rows")
print(",".join(str(r[k]) for k in keys))
print("%14d %22.1f %10d %22.1f %10d" % tuple(r[k] for k in (
      "jobs", "one_user_last_week_ms", "one_user_last_week_rows", "everyone_last_day_ms",
      "everyone_last_day_rows")), file=sys.stderr)
' >> "$CSV"
done
echo "csv: $CSV"
