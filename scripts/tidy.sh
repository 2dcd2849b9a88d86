#!/bin/sh
# clang-tidy 14 with the root .clang-tidy over the dev build's compile database: the files
# named, or every source file changed since BASE (default: origin/main, else HEAD~1).
#   scripts/tidy.sh [FILE...]
set -eu
cd "$(dirname "$0")/.."
[ -f build/compile_commands.json ] || scripts/setup.sh
if [ $# -eq 0 ]; then
    base=${BASE:-$(git rev-parse -q --verify origin/main || git rev-parse HEAD~1)}
    set -- $(git diff --name-only --diff-filter=AM "$base" -- '*.cc')
fi
[ $# -gt 0 ] || { echo "tidy: no changed source files"; exit 0; }
exec clang-tidy-14 -p build --quiet "$@"
