#!/bin/sh
# One full EASY pass on synthetic clusters of 1,000 and 10,000 nodes (10% running) over
# growing queues; prints a table with the growth per 10x of queue and writes CSV.
#   benchmarks/sched_pass/run.sh [CSV] [BIN_DIR]
# BIN_DIR (default build/bin) lets two builds be compared in one run.
set -eu
cd "$(dirname "$0")/../.."
CSV=$(realpath -m "${1:-benchmarks/results/sched_pass.csv}")
BIN="$(realpath "${2:-build/bin}")/bench_sched_pass"
mkdir -p "$(dirname "$CSV")"
echo "nodes,pending,running,policy,pass_ms,peak_rss_mib,starts,reservations" > "$CSV"
for nodes in 1000 10000; do
    for pending in 1000 10000 100000; do
        "$BIN" --nodes "$nodes" --pending "$pending" --json | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
print(",".join(str(r[k]) for k in ("nodes", "pending", "running", "policy", "pass_ms",
      "peak_rss_mib", "starts", "reservations")))' >> "$CSV"
    done
done
/usr/bin/python3 - "$CSV" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'nodes':>6} {'pending':>8} {'pass ms':>9} {'x per 10x queue':>16} {'peak RSS MiB':>13}")
previous = {}
for r in rows:
    ms = float(r["pass_ms"])
    growth = f"{ms / previous[r['nodes']]:.1f}" if r["nodes"] in previous else "-"
    previous[r["nodes"]] = ms
    print(f"{r['nodes']:>6} {r['pending']:>8} {ms:>9.1f} {growth:>16} {float(r['peak_rss_mib']):>13.1f}")
PY
echo "CSV: $CSV"
