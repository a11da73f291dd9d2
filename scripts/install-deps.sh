#!/usr/bin/env bash
# Installs the Debian packages the project needs, only those missing.
# Idempotent; runs `apt-get update` before installing anything.
set -euo pipefail

packages=(
    g++ make cmake pkg-config clang libclang-rt-dev
    postgresql-15 postgresql-server-dev-15 postgresql-contrib
    libxxhash-dev libunistring-dev
    googletest libgtest-dev libbenchmark-dev
    libipc-run-perl
    python3 python3-psycopg
)
# Callers may ask for more (the benchmark adds its plotting tools).
packages+=("$@")

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
