#!/bin/sh
# Builds the libFuzzer targets (tests/fuzz, the fuzz preset: clang, ASan, UBSan) and runs each
# on its kept corpus for a budget: `--runs N` inputs or `--seconds S` each (default 60 s).
# New inputs go to a scratch corpus in build-fuzz; `--merge` then folds those that reach new
# code into tests/fuzz/corpus/NAME, minimized. Prints the executions per target; exits 1 on
# the first crash (its input is left in build-fuzz/crashes/).
#   scripts/fuzz.sh --runs 10000000             # every target, ten million inputs each
#   scripts/fuzz.sh --seconds 300 fuzz_messages  # one target for five minutes
set -eu
cd "$(dirname "$0")/.."
budget="-max_total_time=60"
merge=0
targets=""
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) budget="-runs=$2"; shift 2 ;;
        --seconds) budget="-max_total_time=$2"; shift 2 ;;
        --merge) merge=1; shift ;;
        -*) echo "fuzz.sh: unknown option $1 (accepted: --runs N, --seconds S, --merge)" >&2; exit 2 ;;
        *) targets="$targets $1"; shift ;;
    esac
done
[ -n "$targets" ] || targets=$(cd tests/fuzz && ls fuzz_*.cc | sed 's/\.cc$//')

# UCX (linked through the PMIx targets) would otherwise catch the crash signals first and
# exit without libFuzzer saving the input.
export UCX_HANDLE_ERRORS=none
cmake --preset fuzz >/dev/null
cmake --build build-fuzz --target fuzz_targets
mkdir -p build-fuzz/crashes
for target in $targets; do
    scratch="build-fuzz/tests/fuzz/scratch/$target"
    corpus="tests/fuzz/corpus/$target"
    mkdir -p "$scratch" "$corpus"
    log="build-fuzz/$target.log"
    if ! "build-fuzz/bin/$target" "$budget" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix=build-fuzz/crashes/ "$scratch" "$corpus" >"$log" 2>&1; then
        grep -A20 -m1 -E "ERROR|runtime error|deadly" "$log" >&2 || tail -20 "$log" >&2
        echo "$target: CRASH (log: $log)" >&2
        exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    echo "$target: $runs executions, $rate/s, 0 crashes"
    if [ "$merge" -eq 1 ]; then
        "build-fuzz/bin/$target" -merge=1 "$corpus" "$scratch" >"$log.merge" 2>&1
    fi
done
