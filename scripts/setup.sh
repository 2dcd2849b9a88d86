#!/bin/sh
# Installs the Debian 12 packages Cohort needs (idempotent, non-interactive) and builds it
# into build/ (binaries in build/bin/).
set -eu
cd "$(dirname "$0")/.."

PACKAGES="build-essential cmake ninja-build pkg-config git
  libboost-dev libboost-serialization-dev libhwloc-dev hwloc libssl-dev
  libsqlite3-dev sqlite3 zlib1g-dev libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev clang-format-14 clang-tidy-14 clang-14 libclang-rt-14-dev
  libpmix-dev openmpi-bin libopenmpi-dev mpich libmpich-dev libucx-dev
  python3-mpi4py python3-torch iproute2
  slurmctld slurm-client munge libmunge-dev postgresql libpq-dev"

missing=""
for package in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing="$missing $package"
done
if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "setup: installing$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

cmake --preset dev >/dev/null
cmake --build build
