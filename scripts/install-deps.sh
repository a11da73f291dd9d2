#!/usr/bin/env bash
# Installs the Debian packages the project needs, only those missing.
# Idempotent; runs `apt-get update` before installing anything.
#
#   scripts/install-deps.sh [PACKAGE ...]     what `make test` needs, and PACKAGEs
#   scripts/install-deps.sh --only GROUP      one group below
#
# Groups: build (a plain `make && make install`: compiler, server headers,
# libxxhash and libunistring, nothing else), deb (`make deb`), matrix
# (`make test-matrix`: debootstrap; the chroots get their own packages),
# python (`make python-install` and `make python-test`, with the build group).
# The default (test) group also has what scripts/citus.sh needs to build
# Citus, a test dependency only.
#
# MINHASH_PG_MAJOR (default 15) names the PostgreSQL major of the build group
# (the test group is the host's: 15).
set -euo pipefail

major=${MINHASH_PG_MAJOR:-15}
build=(g++ make "postgresql-server-dev-$major" libxxhash-dev libunistring-dev nettle-dev)
deb=("${build[@]}" dpkg-dev debhelper postgresql-server-dev-all)
matrix=(debootstrap)
# The Python package (python/): its build (`make python-install`, offline:
# no build isolation, so these are the build requirements) and its tests'
# drivers and frameworks (`make python-test`).
python=(
    python3-dev python3-pip python3-setuptools python3-wheel python3-pybind11 python3-numpy
    python3-pytest python3-psycopg python3-psycopg2 python3-asyncpg python3-sqlalchemy
    python3-django
)
test=(
    "${build[@]}" cmake pkg-config clang libclang-rt-dev
    postgresql-15 postgresql-contrib
    googletest libgtest-dev libbenchmark-dev
    libipc-run-perl python3-jsonschema zlib1g-dev python3 python3-psycopg
    "${python[@]}"
    # building Citus for tests/t/200_citus.pl (scripts/citus.sh)
    liblz4-dev libzstd-dev libkrb5-dev
)

if [ "${1:-}" = --only ]; then
    case "${2:-}" in
    build) packages=("${build[@]}") ;;
    deb) packages=("${deb[@]}") ;;
    matrix) packages=("${matrix[@]}") ;;
    python) packages=("${build[@]}" "${python[@]}") ;;
    *) echo "usage: install-deps.sh --only build|deb|matrix|python" >&2; exit 2 ;;
    esac
else
    # Callers may ask for more (the benchmark adds its plotting tools).
    packages=("${test[@]}" "$@")
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
