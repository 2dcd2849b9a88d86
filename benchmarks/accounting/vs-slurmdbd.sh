#!/bin/bash
# cohort acct next to Slurm's sacct on the same history, in one run: N job records drawn
# from the CTC SP2 trace (bench_accounting) go into a local Cohort instance's SQLite
# accounting and, row for row, into Slurm 22.05's slurmdbd on a private MariaDB server
# (both started here in a temporary folder, with a throw-away munge key). Each query runs
# REPS times (best time kept) through the command a user types, with its rows and the
# client's peak RSS. Writes CSV (and a PNG where gnuplot is installed).
#   benchmarks/accounting/vs-slurmdbd.sh [CSV] [BIN_DIR] [TRACE]
#   JOBS=1000000 DAYS=30 REPS=3 by default.
set -euo pipefail
cd "$(dirname "$0")/../.."
CSV=$(realpath -m "${1:-benchmarks/results/accounting-vs-slurmdbd.csv}")
BIN=$(realpath "${2:-build/bin}")
TRACE=${3:-../shared/data/traces/CTC-SP2-1996-3.1-cln.swf.gz}
JOBS=${JOBS:-1000000}
DAYS=${DAYS:-30}
REPS=${REPS:-3}
DB_PORT=${DB_PORT:-33061}
DBD_PORT=${DBD_PORT:-36819}
[ -r "$TRACE" ] || { echo "no trace at $TRACE (pass one as the third argument)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run as root: slurmdbd and MariaDB are started as root here" >&2; exit 1; }

missing=""
for b in slurmdbd sacct sacctmgr munged mariadbd; do
    command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || missing="$missing $b"
done
if [ -n "$missing" ]; then
    echo "installing (missing:$missing)"
    apt-get update >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y slurmdbd slurm-client munge \
        mariadb-server >/dev/null
fi

WORK=$(mktemp -d /tmp/cohort-vs-slurmdbd.XXXXXX)
PIDS=()
cleanup() {
    "$BIN/cohort" stop --state-dir "$WORK/cohort" >/dev/null 2>&1 || true
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK"/etc "$WORK"/munge "$WORK"/log
chmod 700 "$WORK/munge"

# munge. sacct and sacctmgr reach slurmdbd through munge's default socket whatever AuthInfo
# says (Slurm 22.05), so a munged already serving it is used; otherwise one starts there
# with a key of its own.
MUNGE_SOCKET=/run/munge/munge.socket.2
if ! /usr/bin/munge -n -S "$MUNGE_SOCKET" >/dev/null 2>&1; then
    mkdir -p /run/munge
    dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$WORK/munge/munge.key"
    /usr/sbin/munged --foreground --force --key-file="$WORK/munge/munge.key" \
        --socket="$MUNGE_SOCKET" --pid-file="$WORK/munge/munged.pid" \
        --log-file="$WORK/log/munged.log" --seed-file="$WORK/munge/seed" >/dev/null 2>&1 &
    PIDS+=($!)
    for _ in $(seq 50); do [ -S "$MUNGE_SOCKET" ] && break; sleep 0.1; done
fi

# MariaDB with a data folder of its own, on loopback, as slurmdbd's sites run it (a
# buffer pool that holds the table).
/usr/bin/mariadb-install-db --datadir="$WORK/db" --user=root --skip-test-db \
    --auth-root-authentication-method=normal >"$WORK/log/mariadb-install.log" 2>&1
DB_SOCKET="$WORK/mysqld.sock"
/usr/sbin/mariadbd --datadir="$WORK/db" --user=root --socket="$DB_SOCKET" --port="$DB_PORT" \
    --bind-address=127.0.0.1 --pid-file="$WORK/mysqld.pid" --innodb-buffer-pool-size=1G \
    --innodb-lock-wait-timeout=900 --local-infile=1 --log-error="$WORK/log/mariadb.log" &
PIDS+=($!)
sql() { /usr/bin/mariadb --socket="$DB_SOCKET" -u root --local-infile=1 "$@"; }
for _ in $(seq 100); do sql -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
sql -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'bench'; GRANT ALL ON *.* TO 'slurm'@'127.0.0.1'"

# slurmdbd, and the slurm.conf through which sacct finds it.
cat >"$WORK/etc/slurm.conf" <<CONF
ClusterName=benchdbd
SlurmctldHost=localhost(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
NodeName=n1 NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES
CONF
cat >"$WORK/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$WORK/slurmdbd.pid
LogFile=$WORK/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=bench
StorageLoc=slurm_bench_acct
CONF
chmod 600 "$WORK/etc/slurmdbd.conf"
export SLURM_CONF="$WORK/etc/slurm.conf"
/usr/sbin/slurmdbd -D >"$WORK/log/slurmdbd.out" 2>&1 &
PIDS+=($!)
added=""
for _ in $(seq 150); do
    if sacctmgr -i add cluster benchdbd >/dev/null 2>&1; then added=yes; break; fi
    sleep 0.2
done
[ -n "$added" ] || { echo "slurmdbd did not come up:" >&2; sacctmgr -i add cluster benchdbd >&2; tail -5 "$WORK/log/slurmdbd.log" >&2; exit 1; }

# The same records on both sides: bench_accounting loads them into a Cohort instance's
# accounting database (stopped meanwhile) and writes them out for the job table.
"$BIN/cohort" start --nodes 2 --state-dir "$WORK/cohort" >/dev/null
"$BIN/cohort" stop --state-dir "$WORK/cohort" >/dev/null
echo "loading $JOBS records over $DAYS days into Cohort (SQLite) ..."
"$BIN/bench_accounting" --trace "$TRACE" --location "$WORK/cohort/accounting.db" \
    --jobs "$JOBS" --days "$DAYS" --records-tsv "$WORK/jobs.tsv" >"$WORK/cohort-load.json"
MEDIAN_USER=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["median_user"])' <"$WORK/cohort-load.json")
MEDIAN_UID=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["median_user_uid"])' <"$WORK/cohort-load.json")
# sacct -u takes only users this host knows: the median user's jobs go to `nobody`.
awk -F'\t' -v OFS='\t' -v uid="$MEDIAN_UID" '$2 == uid { $2 = 65534; $3 = 65534 } 1' \
    "$WORK/jobs.tsv" >"$WORK/slurm-jobs.tsv"
echo "loading them into slurmdbd's job table (MariaDB) ..."
load_start=$(date +%s.%N)
sql slurm_bench_acct -e "SET SESSION sql_mode = '';
    LOAD DATA LOCAL INFILE '$WORK/slurm-jobs.tsv' INTO TABLE benchdbd_job_table
    (id_job, id_user, id_group, account, job_name, \`partition\`, time_submit, time_eligible,
     time_start, time_end, state, exit_code, cpus_req, nodes_alloc, nodelist, timelimit,
     tres_req, tres_alloc)
    SET mod_time = UNIX_TIMESTAMP(), id_assoc = 0"
echo "  $(/usr/bin/python3 -c "print(round($(date +%s.%N) - $load_start, 1))") s"
"$BIN/cohort" start --nodes 2 --state-dir "$WORK/cohort" >/dev/null
export COHORT_CONF="$WORK/cohort/cohort.json"

# best_of SYSTEM QUERY CMD...: the best of REPS runs; prints a CSV line.
best_of() {
    local system=$1 query=$2 best="" rss="" rows=0 i
    shift 2
    for i in $(seq "$REPS"); do
        local started ended secs kb
        started=$(date +%s%N)
        /usr/bin/time -f "%M" -o "$WORK/time" "$@" >"$WORK/out" 2>"$WORK/err" || {
            echo "$system $query failed: $(head -3 "$WORK/err")" >&2; return 1; }
        ended=$(date +%s%N)
        secs=$(/usr/bin/python3 -c "print('%.3f' % (($ended - $started) / 1e9))")
        kb=$(cat "$WORK/time")
        rows=$(wc -l <"$WORK/out")
        if [ -z "$best" ] || /usr/bin/python3 -c "import sys; sys.exit(not $secs < $best)"; then
            best=$secs
            rss=$kb
        fi
    done
    echo "$query,$system,$rows,$best,$rss"
}

NOW=$(date +%Y-%m-%dT%H:%M:%S)
DAY=$(date -d '1 day ago' +%Y-%m-%dT%H:%M:%S)
WEEK=$(date -d '7 days ago' +%Y-%m-%dT%H:%M:%S)
ALL=$(date -d "$((DAYS + 1)) days ago" +%Y-%m-%dT%H:%M:%S)
FIELDS=(-X -n -P -o JobID,State,Elapsed)
mkdir -p "$(dirname "$CSV")"
echo "query,system,rows,seconds,client_max_rss_kb" >"$CSV"
run_query() {
    local query=$1 cohort_filter=$2 slurm_filter=$3 start=$4
    # shellcheck disable=SC2086 # the filters are words
    best_of cohort "$query" "$BIN/cohort" acct "${FIELDS[@]}" $cohort_filter -S "$start" -E "$NOW" >>"$CSV"
    # shellcheck disable=SC2086
    best_of slurm "$query" sacct "${FIELDS[@]}" $slurm_filter -S "$start" -E "$NOW" >>"$CSV"
}
run_query "one user week" "-u $MEDIAN_USER" "-u nobody" "$WEEK"
run_query "all users day" "-a" "-a" "$DAY"
run_query "all users week" "-a" "-a" "$WEEK"
run_query "all users $DAYS days" "-a" "-a" "$ALL"

/usr/bin/python3 - "$CSV" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("%-24s %10s %9s %10s %9s %10s %9s" % ("query", "cohort", "rows", "RSS MB", "sacct", "rows", "RSS MB"))
for i in range(0, len(rows), 2):
    c, s = rows[i], rows[i + 1]
    print("%-24s %9.2fs %9s %10.1f %8.2fs %10s %9.1f   sacct/cohort %.1fx" % (
        c["query"], float(c["seconds"]), c["rows"], int(c["client_max_rss_kb"]) / 1024,
        float(s["seconds"]), s["rows"], int(s["client_max_rss_kb"]) / 1024,
        float(s["seconds"]) / max(float(c["seconds"]), 0.005)))
PY
echo "csv: $CSV"
if command -v gnuplot >/dev/null; then
    gnuplot <<PLOT
set terminal pngcairo noenhanced size 900,500
set output "${CSV%.csv}.png"
set datafile separator ","
set title "cohort acct and sacct on the same $JOBS jobs (seconds, lower is better)"
set style data histograms
set style fill solid
set logscale y
set key top left
plot "< grep ',cohort,' $CSV" using 4:xtic(1) title "cohort acct", \
     "< grep ',slurm,' $CSV" using 4 title "sacct (slurmdbd, MariaDB)"
PLOT
    echo "plot: ${CSV%.csv}.png"
fi
