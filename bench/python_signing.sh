#!/usr/bin/env bash
# Python signing throughput: pgminhash (the server's core, bound for Python)
# beside datasketch, on the benchmark's own documents (minhash-gen): short
# paragraphs (about 0.9 KB) and mail- and web-like documents (2-4 KB).
#
#   DATASKETCH_SRC=/tmp/datasketch bash bench/python_signing.sh [SHORT_ROWS [LONG_ROWS]]
#
# DATASKETCH_SRC: a checkout of https://github.com/ekzhu/datasketch (not part
# of this repository, never committed), run from source with Debian's
# python3-numpy and python3-scipy; unset, pgminhash is measured alone.
# Needs pgminhash installed for /usr/bin/python3 (make python-install).
# Defaults: 10000 short and 2000 long documents, best of 5 rounds
# (PYBENCH_REPEAT).
set -euo pipefail
cd "$(dirname "$0")/.."

short_rows=${1:-10000}
long_rows=${2:-2000}
python=${MINHASH_PYTHON:-/usr/bin/python3}
BENCH_BIN=${BENCH_BIN:-build/core}

bash scripts/install-deps.sh python3-scipy >/dev/null
[ -x "$BENCH_BIN/minhash-gen" ] || { cmake -S . -B "$BENCH_BIN" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$BENCH_BIN" -j2 --target minhash-gen >/dev/null; }
"$python" -c 'import pgminhash' 2>/dev/null || { echo "pgminhash is not installed: make python-install" >&2; exit 1; }

# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir pybench
"$BENCH_BIN/minhash-gen" docs --rows "$short_rows" --out "$SCRATCH/short.tsv" --truth "$SCRATCH/truth.tsv" >/dev/null
"$BENCH_BIN/minhash-gen" docs --long --rows "$long_rows" --out "$SCRATCH/long.tsv" >/dev/null

echo "git $(git describe --always --dirty 2>/dev/null || echo "?"), $(date -u +%Y-%m-%d)"
"$python" bench/python_signing.py ${DATASKETCH_SRC:+--datasketch "$DATASKETCH_SRC"} \
    --repeat "${PYBENCH_REPEAT:-5}" "$SCRATCH/short.tsv" "$SCRATCH/long.tsv"
