#!/bin/sh
# Sets up, builds and runs every test label but `slow`.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure -LE slow --timeout 600 -j2
