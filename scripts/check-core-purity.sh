#!/bin/sh
# The scheduling core is pure: no sockets, threads, files, databases, hwloc or clock reads
# under scheduler/ outside ctld/ and sim/ (DESIGN.md, principle 1).
set -eu
cd "$(dirname "$0")/.."
pattern='boost/asio|common/asio\.h|sqlite3|hwloc|pmix|<thread>|<mutex>|<fstream>|::now\(\)|time\(NULL\)|time\(nullptr\)'
found=$(find scheduler -path scheduler/ctld -prune -o -path scheduler/sim -prune -o \
            \( -name '*.h' -o -name '*.cc' \) -print | xargs grep -nE "$pattern" || true)
if [ -n "$found" ]; then
    echo "impure scheduler core:"
    echo "$found"
    exit 1
fi
echo "scheduler core is pure"
