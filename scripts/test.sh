#!/usr/bin/env bash
# `make test`, the first step of `.ci/run`.
#  1. install missing Debian packages; validate META.json (scripts/check-meta.py)
#  2. core library: GoogleTest via CMake/ctest, plain and under ASan+UBSan
#  3. build and install the extension (PGXS)
#  4. pg_regress against a scratch cluster (stopped even on failure)
#  5. the Python package: built and installed for /usr/bin/python3, its pytest
#     suite against a scratch cluster (python/tests, scripts/pytest.sh)
#  6. TAP tests (tests/t) as the postgres user, Citus prepared first for
#     tests/t/200_citus.pl (scripts/citus.sh)
#  7. the benchmark's smoke run (10k rows, about a minute): it checks that the
#     benchmark works; its figures are indicative only (targets are for 1M rows)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/install-deps.sh

echo "== META.json (PGXN Meta Spec) =="
/usr/bin/python3 scripts/check-meta.py

echo "== core tests =="
bash scripts/coretest.sh

echo "== build and install =="
make -j2
make install

echo "== pg_regress =="
bash scripts/regress.sh

echo "== Python package (python/) =="
make python-install
bash scripts/pytest.sh

echo "== benchmark smoke run =="
bash bench/run.sh --smoke

# The lsh-against-GIN benchmark (issue 13.5) on the smoke run's documents: it
# still runs, and lsh finds every row GIN over the same bands finds.
echo "== bench/gin_gap.sh, smoke =="
gap_out=$(mktemp)
GAP_DATA=bench/data/10000 GAP_NQ=100 GAP_SHARED_BUFFERS=256MB bash bench/gin_gap.sh 10000 1 | tee "$gap_out"
awk -F'|' '$2 ~ /^ 0\.[58] $/ { n++; if ($(NF - 1) + 0 != 0) bad++ }
    END { if (n != 2 || bad) { print "gin_gap: expected 2 result rows, lsh missing none of GIN'"'"'s rows" > "/dev/stderr"; exit 1 } }' "$gap_out"
rm -f "$gap_out"

# Citus for tests/t/200_citus.pl: installed, or built from its release
# tarball (cached in /var/cache/minhash-citus). Without it the test fails and
# says why, unless MINHASH_SKIP_CITUS=1 leaves it out (tap.sh warns).
echo "== Citus for the TAP tests (scripts/citus.sh) =="
if [ "${MINHASH_SKIP_CITUS:-0}" = 1 ]; then
    echo "MINHASH_SKIP_CITUS=1: Citus not prepared, tests/t/200_citus.pl left out"
else
    bash scripts/citus.sh || echo "scripts/citus.sh failed: tests/t/200_citus.pl will fail" >&2
fi

echo "== TAP tests =="
bash scripts/tap.sh
