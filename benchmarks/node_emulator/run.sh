#!/bin/bash
# The live controller at cluster size: a real cohortctld drives NODES emulated nodes
# (bench_node_emulator: one process speaking the agent protocol) of 64 CPUs each. Measures
# registration, the controller's CPU for heartbeats, starting a job per node, scheduling
# passes over PENDING jobs that cannot start yet, how soon a job that fits starts, and
# queries from 64 concurrent clients during passes (64 `cohort` processes, then 64 threads
# of bench_clients). Prints a table and writes CSV.
#   benchmarks/node_emulator/run.sh [NODES] [PENDING] [CSV] [BIN_DIR]
#   NODES default 10000, PENDING default 100000; HEARTBEAT_MS (default 1000) is the agents'
#   shortest heartbeat interval, which the controller lengthens so that all nodes together
#   send at most MAX_HEARTBEATS_PER_S (default: the controller's, 2000); a node is DOWN after
#   ten missed.
set -euo pipefail
cd "$(dirname "$0")/../.."
NODES=${1:-10000}
PENDING=${2:-100000}
CSV=$(realpath -m "${3:-benchmarks/results/node_emulator.csv}")
BIN=$(realpath "${4:-build/bin}")
WORK=$(mktemp -d /tmp/cohort-emulator.XXXXXX)
PORT=${PORT:-26917}
HEARTBEAT_MS=${HEARTBEAT_MS:-1000}
MAX_HEARTBEATS_PER_S=${MAX_HEARTBEATS_PER_S:-2000}
interval_ms=$(( HEARTBEAT_MS > (NODES * 1000 + MAX_HEARTBEATS_PER_S - 1) / MAX_HEARTBEATS_PER_S
    ? HEARTBEAT_MS : (NODES * 1000 + MAX_HEARTBEATS_PER_S - 1) / MAX_HEARTBEATS_PER_S ))
ctld_pid=""
emulator_pid=""
cleanup() {
    [ -n "$emulator_pid" ] && kill "$emulator_pid" 2>/dev/null && wait "$emulator_pid" 2>/dev/null
    [ -n "$ctld_pid" ] && kill "$ctld_pid" 2>/dev/null && wait "$ctld_pid" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
mkdir -p "$(dirname "$CSV")" "$WORK/state" "$WORK/jobs"

last=$(printf "%05d" "$NODES")
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$WORK/key"
chmod 600 "$WORK/key"
cat > "$WORK/cohort.conf" <<EOF
{
  "cluster_name": "emulated",
  "controller": {"host": "127.0.0.1", "port": $PORT},
  "key_file": "$WORK/key",
  "state_dir": "$WORK/state",
  "nodes": "emu[00001-$last]",
  "heartbeat_interval_ms": $HEARTBEAT_MS,
  "max_heartbeats_per_s": $MAX_HEARTBEATS_PER_S,
  "node_timeout_ms": $((interval_ms * 10)),
  "partitions": [{"name": "emu", "nodes": "emu[00001-$last]", "default": true}]
}
EOF
export COHORT_CONF="$WORK/cohort.conf"
cohort() { "$BIN/cohort" "$@"; }
now_ms() { date +%s%3N; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
row() { echo "$1,$2,$3" >> "$CSV"; printf "%-58s %12s %s\n" "$1" "$2" "$3"; }
# Waits (at most $1 s) until the command's output has $2 lines; polls every 0.1 s, so the
# times it ends are not rounded up to whole seconds.
wait_lines() {
    local limit=$1 want=$2
    shift 2
    for _ in $(seq $((limit * 10))); do
        [ "$("$@" | wc -l)" -ge "$want" ] && return 0
        sleep 0.1
    done
    echo "run.sh: gave up after $limit s waiting for $want lines of: $*" >&2
    return 1
}

echo "measure,value,unit" > "$CSV"
# At debug the controller logs every scheduling pass (and nothing per heartbeat).
"$BIN/cohortctld" --config "$WORK/cohort.conf" --log-level debug > "$WORK/ctld.log" 2>&1 &
ctld_pid=$!
for _ in $(seq 100); do
    grep -q "listening" "$WORK/ctld.log" && break
    sleep 0.1
done
t0=$(now_ms)
"$BIN/bench_node_emulator" --conf "$WORK/cohort.conf" --cpus 64 > "$WORK/emulator.log" 2>&1 &
emulator_pid=$!
for _ in $(seq 600); do
    grep -q "nodes registered in" "$WORK/emulator.log" && break
    sleep 0.5
done
grep -q "nodes registered in" "$WORK/emulator.log" || { cat "$WORK/emulator.log"; exit 1; }
row "$NODES nodes registered" "$(( $(now_ms) - t0 ))" "ms"

# Heartbeats only: every node sends one per heartbeat interval.
sleep 5
c0=$(cpu_ticks "$ctld_pid"); t0=$(now_ms); sleep 20; c1=$(cpu_ticks "$ctld_pid"); t1=$(now_ms)
ticks=$(getconf CLK_TCK)
row "controller CPU, heartbeats of $NODES idle nodes every $interval_ms ms" \
    "$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) -v hz="$ticks" 'BEGIN { printf "%.1f", 100 * c / hz / (t / 1000) }')" \
    "% of one core"

# Nine nodes in ten each start a job of 64 CPUs: one array, split as nodes are free.
busy=$((NODES * 9 / 10))
cd "$WORK/jobs"
t0=$(now_ms)
cohort batch --parsable --array=0-$((busy - 1)) -n 64 --wrap 'sleep 1000000' > /dev/null
wait_lines 900 "$busy" cohort queue -h -t R
row "$busy jobs of 64 CPUs from submission to all running" "$(( $(now_ms) - t0 ))" "ms"

# Pending jobs that cannot start yet: each asks for more nodes than are idle. Held arrays
# of 1,000 are split into jobs of their own by naming them, then released.
wide=$((NODES / 5))
t0=$(now_ms)
for _ in $(seq $((PENDING / 1000))); do
    first=$(cohort batch --parsable -H --array=0-999 -N "$wide" -t 60 --wrap 'sleep 60')
    first=${first%%_*}
    cohort hold $(seq "$first" $((first + 999))) > /dev/null
    cohort release $(seq "$first" $((first + 999))) > /dev/null
done
row "$PENDING pending jobs of $wide nodes submitted" "$(( $(now_ms) - t0 ))" "ms"
probe=$((first + 1))  # one task of that array: the clients below ask for this job alone
sleep 10
{ grep "scheduling pass:" "$WORK/ctld.log" || true; } | tail -n 3 | sed 's/^/  ctld: /'
pass_ms=$({ grep -E "scheduling pass: [0-9]{$((${#PENDING} - 1)),} pending" "$WORK/ctld.log" || true; } | tail -n 5 \
    | sed -E 's/.*, ([0-9]+) ms in ([0-9]+) steps.*/\1/' | sort -n | tail -n 1)
row "full pass: $PENDING pending x $NODES nodes (slowest of the last 5)" "${pass_ms:-n/a}" "ms"

# A job that fits (one idle node, one minute): submission to RUNNING, five times.
latencies=()
for _ in 1 2 3 4 5; do
    t0=$(now_ms)
    id=$(cohort batch --parsable -N1 -n1 -t 1 --wrap 'sleep 5')
    for _ in $(seq 300); do
        [ "$(cohort queue -h -j "$id" -o %T)" = RUNNING ] && break
        sleep 0.05
    done
    latencies+=($(( $(now_ms) - t0 )))
done
row "a job that fits: submission to RUNNING (max of 5)" \
    "$(printf "%s\n" "${latencies[@]}" | sort -n | tail -n 1)" "ms"

c0=$(cpu_ticks "$ctld_pid"); t0=$(now_ms); sleep 20; c1=$(cpu_ticks "$ctld_pid"); t1=$(now_ms)
row "controller CPU, $busy running + $PENDING pending, no requests" \
    "$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) -v hz="$ticks" 'BEGIN { printf "%.1f", 100 * c / hz / (t / 1000) }')" \
    "% of one core"

# 64 clients at once, each 5 queries of one pending job, 5 submissions and 5 cancels, while the
# submissions make the controller plan over the pending jobs again.
clients=()
for c in $(seq 64); do
    (
        for _ in 1 2 3 4 5; do
            t0=$(date +%s%N)
            cohort queue -h -j "$probe" > /dev/null 2>&1 || echo "error" >> "$WORK/client.errors"
            echo $(( ($(date +%s%N) - t0) / 1000000 )) >> "$WORK/query.ms.$c"
            id=$(cohort batch --parsable -N1 -n1 -t 1 --wrap 'sleep 5' 2>/dev/null) \
                || { echo "error" >> "$WORK/client.errors"; continue; }
            cohort cancel "$id" > /dev/null 2>&1 || echo "error" >> "$WORK/client.errors"
        done
    ) &
    clients+=($!)
done
wait "${clients[@]}"
cat "$WORK"/query.ms.* | sort -n > "$WORK/query.ms"
n=$(wc -l < "$WORK/query.ms")
row "64 clients: errors" "$(cat "$WORK/client.errors" 2>/dev/null | wc -l)" "of $((64 * 15)) requests"
row "64 clients: query latency p50" "$(sed -n "$(( (n + 1) / 2 ))p" "$WORK/query.ms")" "ms"
row "64 clients: query latency p99" "$(sed -n "$(( (n * 99 + 99) / 100 ))p" "$WORK/query.ms")" "ms"

# The same loops from 64 threads of one process (bench_clients): the controller's latency
# as a client sees it, without 64 processes starting at once on this machine's cores.
"$BIN/bench_clients" --clients 64 --rounds 5 --job "$probe" > "$WORK/clients.out" \
    || cat "$WORK/clients.out" >&2  # exits 1 when a request failed: the errors row says so
field() { awk -v what="$1" -v at="$2" '$1 == what { print $at }' "$WORK/clients.out"; }
row "64 client threads: errors" "$(field errors 2)" "of $((64 * 15)) requests"
for what in queries submissions cancels; do
    row "64 client threads: $what latency p50" "$(field $what 4)" "ms"
    row "64 client threads: $what latency p99" "$(field $what 6)" "ms"
done
tail -n 2 "$WORK/emulator.log"
echo "CSV: $CSV"
