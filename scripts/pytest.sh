#!/usr/bin/env bash
# The Python package's tests (python/tests, pytest) against a scratch cluster
# of the installed server (PG_CONFIG), stopped and removed even on failure:
# `make python-test`, a step of `make test`. Needs the extension installed
# (`make install`) and pgminhash installed for the interpreter
# (`make python-install`); the tests import the installed package, not the
# source tree (python/src is not on the path).
#
#   scripts/pytest.sh [PYTEST ARGS...]      e.g. -k psycopg, -x
set -euo pipefail
cd "$(dirname "$0")/.."

python=${MINHASH_PYTHON:-/usr/bin/python3}

# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir pytest
scratch_cluster pg
cd python
"$python" -m pytest -p no:cacheprovider "$@"
