#!/bin/sh
# Launch latency: wall time of `cohort run -n K true` and of an Open MPI allreduce for
# K = 1, 2, 4, 8, 16 on 1 and 2 node agents, next to Open MPI's own mpirun on the same
# programs in the same run, and PMIx fence latency against ranks (per fence transport).
#   benchmarks/launch/launch.sh [REPEATS] [CSV]
# Prints a table, writes CSV, and a PNG next to it when gnuplot is installed.
set -eu
cd "$(dirname "$0")/../.."
REPEATS=${1:-5}
CSV=$(realpath -m "${2:-benchmarks/results/launch.csv}")
BIN="$(pwd)/build/bin"
HELLO="$(pwd)/build/tests/mpi/allreduce_ompi"
FENCE="$BIN/bench_pmix_fence"
MPIRUN="mpirun.openmpi --allow-run-as-root --oversubscribe"
STATE="$(mktemp -d /tmp/cohort-launch.XXXXXX)"
mkdir -p "$(dirname "$CSV")"
trap '"$BIN/cohort" stop --state-dir "$STATE" >/dev/null 2>&1; rm -rf "$STATE"' EXIT

# Median wall time in ms of REPEATS runs of the command "$@".
median_ms() {
    i=0
    while [ $i -lt "$REPEATS" ]; do
        t0=$(date +%s%N)
        "$@" >/dev/null 2>&1 || { echo "launch.sh: failed: $*" >&2; exit 1; }
        t1=$(date +%s%N)
        echo $(( (t1 - t0) / 1000 ))
        i=$((i + 1))
    done | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'
}

# 16 CPUs per agent so that 16 ranks fit on one node of this 2-core machine.
eval "$("$BIN/cohort" start --nodes 2 --cpus 16 --state-dir "$STATE")"
echo "launcher,nodes,ranks,program,median_ms" > "$CSV"
printf '%-8s %5s %5s %12s %12s %14s %14s\n' ranks nodes "" "cohort true" "mpirun true" \
    "cohort allred" "mpirun allred"
for nodes in 1 2; do
    for k in 1 2 4 8 16; do
        [ "$k" -ge "$nodes" ] || continue
        c_true=$(median_ms "$BIN/cohort" run -N"$nodes" -n"$k" true)
        c_mpi=$(median_ms "$BIN/cohort" run -N"$nodes" -n"$k" "$HELLO")
        echo "cohort,$nodes,$k,true,$c_true" >> "$CSV"
        echo "cohort,$nodes,$k,allreduce,$c_mpi" >> "$CSV"
        m_true=-; m_mpi=-
        if [ "$nodes" = 1 ]; then  # mpirun has one host here
            m_true=$(median_ms $MPIRUN -np "$k" true)
            m_mpi=$(median_ms $MPIRUN -np "$k" "$HELLO")
            echo "mpirun,1,$k,true,$m_true" >> "$CSV"
            echo "mpirun,1,$k,allreduce,$m_mpi" >> "$CSV"
        fi
        printf '%-8s %5s %5s %12s %12s %14s %14s\n' "$k" "$nodes" "" "$c_true" "$m_true" \
            "$c_mpi" "$m_mpi"
    done
done

echo "launcher,nodes,ranks,transport,fence_us,collect_us" > "${CSV%.csv}-fence.csv"
printf '\n%-8s %5s %-10s %10s %12s\n' ranks nodes transport fence_us collect_us
for transport in tcp ucx; do
    for k in 2 4 8 16; do
        line=$("$BIN/cohort" run -N2 -n"$k" --pmix-transport="$transport" "$FENCE" 100)
        fence=$(echo "$line" | sed -n 's/.*fence_us=\([0-9.]*\).*/\1/p')
        collect=$(echo "$line" | sed -n 's/.*collect_us=\([0-9.]*\).*/\1/p')
        echo "cohort,2,$k,$transport,$fence,$collect" >> "${CSV%.csv}-fence.csv"
        printf '%-8s %5s %-10s %10s %12s\n' "$k" 2 "$transport" "$fence" "$collect"
    done
done
for k in 2 4 8 16; do
    line=$($MPIRUN -np "$k" "$FENCE" 100)
    fence=$(echo "$line" | sed -n 's/.*fence_us=\([0-9.]*\).*/\1/p')
    collect=$(echo "$line" | sed -n 's/.*collect_us=\([0-9.]*\).*/\1/p')
    echo "mpirun,1,$k,local,$fence,$collect" >> "${CSV%.csv}-fence.csv"
    printf '%-8s %5s %-10s %10s %12s\n' "$k" 1 "mpirun" "$fence" "$collect"
done

if command -v gnuplot >/dev/null; then
    PNG="${CSV%.csv}.png"
    grep '^cohort,1,.*,allreduce' "$CSV" | cut -d, -f3,5 | tr , ' ' > "$STATE/c1"
    grep '^cohort,2,.*,allreduce' "$CSV" | cut -d, -f3,5 | tr , ' ' > "$STATE/c2"
    grep '^mpirun,1,.*,allreduce' "$CSV" | cut -d, -f3,5 | tr , ' ' > "$STATE/m1"
    gnuplot <<PLOT
set terminal pngcairo size 800,500
set output "$PNG"
set title "Open MPI allreduce: launch to exit"
set xlabel "ranks"; set ylabel "median wall time (ms)"; set logscale x 2; set key left top
plot "$STATE/c1" with linespoints title "cohort run, 1 node", \
     "$STATE/c2" with linespoints title "cohort run, 2 nodes", \
     "$STATE/m1" with linespoints title "mpirun, 1 node"
PLOT
    echo "plot: $PNG"
fi
echo "csv: $CSV"
