#!/bin/sh
# Every C++ file of the tree is formatted as .clang-format says (clang-format 14, Debian 12's);
# prints the files that are not and fails. `scripts/check-format.sh --fix` formats them.
set -eu
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$CLANG_FORMAT" >/dev/null; then
    echo "check-format: $CLANG_FORMAT not found (scripts/setup.sh installs clang-format-14)"
    exit 1
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files '*.cc' '*.h' '*.c')
else
    files=$(find . -path ./build -prune -o -path './build-*' -prune -o \
                 \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -print)
fi
if [ "${1:-}" = "--fix" ]; then
    echo "$files" | xargs "$CLANG_FORMAT" -i
    exit 0
fi
unformatted=""
for file in $files; do
    "$CLANG_FORMAT" --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted="$unformatted $file"
done
if [ -n "$unformatted" ]; then
    echo "not formatted as .clang-format says (run scripts/check-format.sh --fix):"
    for file in $unformatted; do echo "  $file"; done
    exit 1
fi
echo "every C++ file is formatted"
