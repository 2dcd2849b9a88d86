#!/bin/sh
# Replaying a real center's year at the node level: `cohort sim --nodes N --policy easy`
# against trace size (first N jobs) and node count, beside the processor-pool model
# (`--compat pyss`) on the same trace. Prints a table, writes CSV and, with gnuplot, a PNG.
#   benchmarks/sim_replay/run.sh [TRACE] [CSV] [BIN_DIR]
# TRACE defaults to CEA Curie 2011 (benchmarks/data/traces, 312,826 jobs; 5,040 thin nodes
# of 16 CPUs). SIZES (default "25000 50000 100000 200000 all") are replayed on 5,040 nodes;
# NODES (default "10080 20160") replay the whole trace on larger machines.
set -eu
cd "$(dirname "$0")/../.."
TRACE=$(realpath "${1:-benchmarks/data/traces/CEA-Curie-2011-2.1-cln.swf.gz}")
CSV=$(realpath -m "${2:-benchmarks/results/sim_replay.csv}")
BIN=$(realpath "${3:-build/bin}")
SIZES=${SIZES:-25000 50000 100000 200000 all}
NODES=${NODES:-10080 20160}
WORK=$(mktemp -d /tmp/cohort-sim-replay.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$(dirname "$CSV")"

# The trace's header and its first $1 jobs (all: the whole trace), as plain SWF.
first_jobs() {
    if [ "$1" = all ]; then
        zcat -f "$TRACE"
    else
        zcat -f "$TRACE" | awk -v n="$1" '/^;/ { print; next } { if (++jobs > n) exit; print }'
    fi
}

# One replay: wall seconds and peak RSS from /usr/bin/time, the rest from --json.
replay() {  # model size nodes args...
    model=$1 size=$2 nodes=$3
    shift 3
    first_jobs "$size" > "$WORK/trace.swf"
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$BIN/cohort" sim --trace "$WORK/trace.swf" "$@" \
        --json > "$WORK/out.json"
    read -r wall rss < "$WORK/time"
    /usr/bin/python3 - "$WORK/out.json" "$model" "$nodes" "$wall" "$rss" >> "$CSV" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
model, nodes, wall, rss = sys.argv[2:]
print(",".join(str(v) for v in (model, r["jobs"], nodes, r.get("policy", "pyss"), wall,
      round(int(rss) / 1024, 1), r.get("passes", ""), round(r.get("mean_pass_ms", 0), 4),
      round(r.get("max_pass_ms", 0), 3), round(r["utilization"], 4), round(r["mean_wait_s"]))))
PY
    tail -n 1 "$CSV"
}

echo "model,jobs,nodes,policy,wall_s,peak_rss_mib,passes,mean_pass_ms,max_pass_ms,utilization,mean_wait_s" > "$CSV"
for size in $SIZES; do
    replay node "$size" 5040 --nodes 5040 --policy easy
done
for nodes in $NODES; do
    replay node all "$nodes" --nodes "$nodes" --policy easy
done
# The processor-pool model over the same CPUs: 5,040 x 16.
replay pool all 5040 --procs 80640 --compat pyss

/usr/bin/python3 - "$CSV" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'model':>5} {'jobs':>7} {'nodes':>6} {'replay s':>9} {'passes':>8} {'mean pass ms':>13} {'RSS MiB':>8}")
for r in rows:
    print(f"{r['model']:>5} {r['jobs']:>7} {r['nodes']:>6} {float(r['wall_s']):>9.1f} "
          f"{r['passes']:>8} {r['mean_pass_ms']:>13} {r['peak_rss_mib']:>8}")
PY
echo "CSV: $CSV"
if command -v gnuplot >/dev/null; then
    PNG="${CSV%.csv}.png"
    grep '^node,.*,5040,' "$CSV" | cut -d, -f2,5 | tr , ' ' > "$WORK/by_jobs"
    grep '^node,' "$CSV" | sort -t, -k2,2n | tail -n +1 | awk -F, -v all="$(grep '^node' "$CSV" \
        | cut -d, -f2 | sort -n | tail -1)" '$2 == all { print $3, $5 }' | sort -n > "$WORK/by_nodes"
    gnuplot <<PLOT
set terminal pngcairo size 1000,450
set output "$PNG"
set multiplot layout 1,2 title "cohort sim --policy easy: node-level replay of $(basename "$TRACE")"
set xlabel "jobs replayed (first N), 5,040 nodes"; set ylabel "replay wall time (s)"; set key off
plot "$WORK/by_jobs" with linespoints
set xlabel "nodes (whole trace)"; set logscale x 2
plot "$WORK/by_nodes" with linespoints
unset multiplot
PLOT
    echo "PNG: $PNG"
fi
