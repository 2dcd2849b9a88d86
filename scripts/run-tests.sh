#!/bin/sh
# Sets up, builds and runs every test label but `slow`: once in the dev build (-Werror), then
# again with AddressSanitizer and UndefinedBehaviorSanitizer (the asan-ubsan preset), whose
# daemons the integration tests start in that pass.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
(cd build && ctest --output-on-failure -LE slow --timeout 600 -j2)

cmake --preset asan-ubsan >/dev/null
cmake --build build-asan
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
(cd build-asan && ctest --output-on-failure -LE slow --timeout 600 -j2)
