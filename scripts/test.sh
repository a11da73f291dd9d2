#!/usr/bin/env bash
# Everything CI runs: `make test` (and so `.ci/run`) calls this.
#  1. install missing Debian packages
#  2. core library: GoogleTest via CMake/ctest, plain and under ASan+UBSan
#  3. build and install the extension (PGXS)
#  4. pg_regress against a scratch cluster (stopped even on failure)
#  5. TAP tests (tests/t) as the postgres user
#  6. the benchmark's smoke run (10k rows, about a minute): it checks that the
#     benchmark works; its figures are indicative only (targets are for 1M rows)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/install-deps.sh

echo "== core tests =="
bash scripts/coretest.sh

echo "== build and install =="
make -j2
make install

scratch=$(mktemp -d /tmp/minhash-test.XXXXXX)
chown postgres: "$scratch"
cleanup() {
    bash "$root/scripts/pgcluster.sh" stop "$scratch/regress" || true
    rm -rf "$scratch"
}
trap cleanup EXIT

echo "== pg_regress =="
bash scripts/pgcluster.sh start "$scratch/regress" "max_worker_processes = 8" "max_parallel_workers_per_gather = 2"
# shellcheck disable=SC1091
. "$scratch/regress/env"
if ! make installcheck; then
    [ -f regression.diffs ] && head -n 300 regression.diffs
    exit 1
fi
bash scripts/pgcluster.sh stop "$scratch/regress"

echo "== benchmark smoke run =="
bash bench/run.sh --smoke

echo "== TAP tests =="
bash scripts/tap.sh
