#!/bin/sh
# Sets up, builds and runs every test label but `slow`: once in the dev build (-Werror), then
# again with AddressSanitizer and UndefinedBehaviorSanitizer (the asan-ubsan preset), whose
# daemons the integration tests start in that pass. The sanitized pass leaves out `source`
# (checks of the source tree, the same in any build), `sim` (whole-trace replays, minutes
# of CPU under the sanitizers; the planner they drive is sanitized through the unit tests)
# `scale` (tens of thousands of jobs, run alone: over two minutes under the sanitizers;
# the same paths are sanitized at small sizes by the other integration tests) and `compat`
# (the differential test against Slurm, whose verdicts do not depend on the build). Last,
# the libFuzzer targets (fuzz preset, clang) run 10 s each on their kept corpus
# (scripts/fuzz.sh runs them for longer). The whole run stays under 45 minutes on a 2-core
# machine.
set -eu
cd "$(dirname "$0")/.."
started=$(date +%s)
# One line per stage with the seconds so far, to see where the budget goes.
stage() { echo "run-tests: $1 at $(($(date +%s) - started)) s"; }

stage "setup and dev build"
scripts/setup.sh
stage "dev tests"
(cd build && ctest --output-on-failure -LE slow --timeout 600 -j2)

stage "asan-ubsan build"
cmake --preset asan-ubsan >/dev/null
cmake --build build-asan
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
stage "asan-ubsan tests"
(cd build-asan && ctest --output-on-failure -LE 'slow|source|sim|scale|compat' --timeout 600 -j2)

stage "fuzz build"
cmake --preset fuzz >/dev/null
cmake --build build-fuzz --target fuzz_targets
stage "fuzz targets"
(cd build-fuzz && ctest --output-on-failure -L fuzz --timeout 120)
stage "done"
