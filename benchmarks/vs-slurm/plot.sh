#!/bin/sh
# Draws the Cohort/Slurm ratios of a vs-slurm CSV (rows with both figures) into a PNG beside
# it; needs gnuplot.   benchmarks/vs-slurm/plot.sh CSV
set -eu
CSV=$(realpath "$1")
PNG="${CSV%.csv}.png"
command -v gnuplot >/dev/null || { echo "gnuplot not installed: no plot"; exit 0; }
DATA=$(mktemp)
trap 'rm -f "$DATA"' EXIT
awk -F, 'NR > 1 && $3 != "" && $4 != "" { printf "\"%s: %s\" %s\n", $1, $2, $6 }' "$CSV" > "$DATA"
gnuplot <<PLOT
set terminal pngcairo noenhanced size 1100,600
set output "$PNG"
set title "Cohort / Slurm 22.05, same machine, same run (below 1: Cohort is faster or smaller)"
set style fill solid 0.6; set boxwidth 0.7; set yrange [0:*]; set xtics rotate by -35 font ",8"
set bmargin 12; set rmargin 16; set ylabel "ratio"; unset key
plot "$DATA" using 0:2:xtic(1) with boxes, 1 with lines dt 2
PLOT
echo "plot: $PNG"
