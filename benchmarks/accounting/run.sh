#!/bin/sh
# Accounting at size on both backends: 10^5 and 10^6 job records drawn from the CTC SP2 trace
# loaded into SQLite and into a private PostgreSQL server (started here, on a Unix socket in
# a temporary directory, with its default durability; as root it runs as `postgres`), then
# the queries behind `cohort acct` and `cohort report` timed. Writes CSV (and a PNG where
# gnuplot is installed).
#   benchmarks/accounting/run.sh [CSV] [BIN_DIR] [TRACE]
set -eu
cd "$(dirname "$0")/../.."
CSV=$(realpath -m "${1:-benchmarks/results/accounting.csv}")
BIN="$(realpath "${2:-build/bin}")/bench_accounting"
TRACE=${3:-../shared/data/traces/CTC-SP2-1996-3.1-cln.swf.gz}
[ -r "$TRACE" ] || { echo "no trace at $TRACE (pass one as the third argument)" >&2; exit 1; }
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
DIR=$(mktemp -d /tmp/cohort-acct-bench.XXXXXX)
AS=""
if [ "$(id -u)" = 0 ]; then
    chown postgres: "$DIR"
    AS="runuser -u postgres --"
fi
stop_server() {
    [ -f "$DIR/data/postmaster.pid" ] && $AS "$PGBIN/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap stop_server EXIT
$AS "$PGBIN/initdb" -D "$DIR/data" -A trust -U cohort >/dev/null
$AS "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w \
    -o "-k $DIR -c listen_addresses=" start >/dev/null
mkdir -p "$(dirname "$CSV")"
echo "backend,jobs,users_active_last_week,load_s,ingest_per_s,median_user_week_ms,median_user_week_rows,top_user_week_ms,top_user_week_rows,everyone_last_day_ms,everyone_last_day_rows,month_utilization_ms,fairshare_read_ms" > "$CSV"
printf '%-10s %8s %9s %12s %16s %16s %16s %14s %14s\n' backend jobs "load s" "ingest /s" \
    "user week ms" "top user wk ms" "all, 1 day ms" "month util ms" "fairshare ms"
n=0
for jobs in 100000 1000000; do
    for backend in sqlite postgresql; do
        n=$((n + 1))
        if [ "$backend" = sqlite ]; then
            location="$DIR/acct-$n.db"
        else
            $AS "$PGBIN/createdb" -h "$DIR" -U cohort "acct$n"
            location="postgresql:///acct$n?host=$DIR&user=cohort"
        fi
        "$BIN" --trace "$TRACE" --location "$location" --jobs "$jobs" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
keys = ("backend", "jobs", "users_active_last_week", "load_s", "ingest_per_s", "median_user_week_ms",
        "median_user_week_rows", "top_user_week_ms", "top_user_week_rows",
        "everyone_last_day_ms", "everyone_last_day_rows", "month_utilization_ms",
        "fairshare_read_ms")
print(",".join(str(r[k]) for k in keys))
print("%-10s %8d %9.1f %12.0f %16.1f %16.1f %16.1f %14.1f %14.1f" % tuple(r[k] for k in (
      "backend", "jobs", "load_s", "ingest_per_s", "median_user_week_ms", "top_user_week_ms",
      "everyone_last_day_ms", "month_utilization_ms", "fairshare_read_ms")), file=sys.stderr)
' >> "$CSV"
    done
done
echo "csv: $CSV"
if command -v gnuplot >/dev/null; then
    gnuplot <<PLOT
set terminal pngcairo noenhanced size 900,500
set output "${CSV%.csv}.png"
set datafile separator ","
set title "Accounting queries at 10^6 jobs (ms, lower is better)"
set style data histograms
set style fill solid
set logscale y
plot "< grep ',1000000,' $CSV" using 6:xtic(1) title "one user, last week", \
     "" using 8 title "busiest user, last week", "" using 10 title "everyone, last day", \
     "" using 12 title "month utilization", "" using 13 title "fair-share read at start"
PLOT
    echo "plot: ${CSV%.csv}.png"
fi
