#!/usr/bin/env bash
# Runs bench_placement_quality and draws its CSVs into one PNG with gnuplot:
# fragmentation over time (DGX-2, 1/2/4/8 mix), blocked-but-feasible rate per cluster and mix,
# and leaf switches spanned / minimum on the two-level tree.
#   benchmarks/placement_quality/plot.sh [BUILD_DIR] [DATA_DIR]
set -euo pipefail
BUILD=${1:-build}
DATA=${2:-../shared/data}
CSV=benchmarks/results/placement_quality.csv
SERIES=benchmarks/results/placement_quality-fragmentation.csv
PNG=benchmarks/results/placement_quality.png

"$BUILD/bin/bench_placement_quality" --data "$DATA" --csv "$CSV"
if ! command -v gnuplot >/dev/null; then
    echo "gnuplot not installed: no plot (apt-get install gnuplot-nox)"
    exit 0
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

for a in cohort first_fit random end_time_oracle; do
    grep "^dgx2,1-2-4-8,$a," "$SERIES" | cut -d, -f4,5 | tr , ' ' > "$WORK/series-$a"
done
# One row per GPU run: "cluster/mix cohort first_fit random end_time_oracle" (blocked-but-
# feasible rate).
awk -F, 'NR > 1 && $5 != "" { v[$1 "/" $2, $3] = $5; runs[$1 "/" $2] = 1; order[++n] = $1 "/" $2 }
    END { for (i = 1; i <= n; i++) { r = order[i]; if (seen[r]++) continue;
          print r, v[r, "cohort"], v[r, "first_fit"], v[r, "random"], v[r, "end_time_oracle"] } }' \
    "$CSV" > "$WORK/blocked"
awk -F, 'NR > 1 && $9 != "" { v[$2, $3] = $9; order[++n] = $2 }
    END { for (i = 1; i <= n; i++) { r = order[i]; if (seen[r]++) continue;
          print r, v[r, "cohort"], v[r, "first_fit"], v[r, "random"] } }' "$CSV" > "$WORK/span"

gnuplot <<PLOT
set terminal pngcairo size 1100,1100
set output "$PNG"
set multiplot layout 3,1
set key outside right
set title "Whole-node fragmentation over time (DGX-2 x16, 1/2/4/8-GPU mix)"
set xlabel "time (mean job durations)"; set ylabel "1 - whole free nodes / free GPUs in nodes"
plot "$WORK/series-cohort" with lines title "cohort", \
     "$WORK/series-first_fit" with lines title "first fit", \
     "$WORK/series-random" with lines title "random", \
     "$WORK/series-end_time_oracle" with lines title "end-time oracle (clairvoyant)"
set title "4- and 8-GPU requests blocked although enough GPUs were free"
set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8
set xtics rotate by -30; set ylabel "rate"; unset xlabel; set yrange [0:*]
plot "$WORK/blocked" using 2:xtic(1) title "cohort", "" using 3 title "first fit", \
     "" using 4 title "random", "" using 5 title "end-time oracle (clairvoyant)"
set title "Leaf switches spanned / minimum (64 nodes, 16 leaves, whole-node jobs)"
set ylabel "ratio"; set yrange [0:*]
plot "$WORK/span" using 2:xtic(1) title "cohort", "" using 3 title "first fit", \
     "" using 4 title "random"
unset multiplot
PLOT
echo "plot: $PNG"
