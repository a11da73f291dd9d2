#!/usr/bin/env bash
# pg_regress (`make installcheck`, every sql/*.sql) against a scratch cluster
# of the installed server (PG_CONFIG), stopped and removed even on failure.
# The extension must be installed first (`make install`). Step 4 of
# `make test`, and what `make test-matrix` runs against each server.
#
# The cluster lives in a scratch directory under /tmp owned by the postgres
# user, never in the clone (which may be private to its owner); pg_regress
# itself runs as the caller and reads sql/ and writes results/ in the clone.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir regress
scratch_cluster regress "max_worker_processes = 8" "max_parallel_workers_per_gather = 2"
if ! make installcheck; then
    [ -f regression.diffs ] && head -n 300 regression.diffs
    exit 1
fi
