#!/usr/bin/env bash
# `make demo`: minhash on real text, from a fresh Debian machine to results.
#
#  1. install missing Debian packages, build and install the extension
#     (into the PostgreSQL that PG_CONFIG names, the system's by default);
#  2. start a throwaway cluster in a temporary directory (stopped and removed
#     at exit, also on failure or Ctrl-C);
#  3. load the package copyright files under /usr/share/doc and the licences
#     under /usr/share/common-licenses, which every Debian machine has;
#  4. run demo/demo.sql, which shows the SQL surface on that text.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ "$(id -u)" -ne 0 ]; then
    # Installing packages and the extension, and running the server as the
    # postgres user (scripts/pgcluster.sh), all need root.
    echo "make demo needs root: run it as root or with 'sudo make demo'" >&2
    exit 1
fi

bash scripts/install-deps.sh

echo "== build and install =="
make -s -j2
make -s install

PGBIN=$("${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}" --bindir)
started=$SECONDS
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir demo
scratch=$SCRATCH
echo "== starting a throwaway cluster in $scratch =="
scratch_cluster cluster

# One CSV row (name, body) per file, named by the directory above it (for
# /usr/share/doc/PKG/copyright, the package) or by its own name. psql's \copy
# reads the CSV client-side, so the server never opens these files. Texts are
# sanitized for a UTF-8 database: NUL bytes dropped, invalid UTF-8 sequences
# dropped (iconv -c).
to_csv() {
    local naming=$1
    shift
    LC_ALL=C awk -v naming="$naming" '
        FNR == 1 {
            if (open) print "\""
            n = split(FILENAME, part, "/")
            name = (naming == "dir") ? part[n - 1] : part[n]
            printf "%s,\"", name
            open = 1
        }
        { gsub(/"/, "\"\""); print }
        END { if (open) print "\"" }
    ' "$@" | tr -d '\000' | iconv -c -f UTF-8 -t UTF-8
}

copyright_files=(/usr/share/doc/*/copyright)
licence_files=()
for f in /usr/share/common-licenses/*; do
    # GPL, LGPL and GFDL are symlinks to the newest version: skip the aliases.
    [ -f "$f" ] && [ ! -L "$f" ] && licence_files+=("$f")
done
to_csv dir "${copyright_files[@]}" >"$scratch/copyright.csv"
to_csv file "${licence_files[@]}" >"$scratch/licence.csv"

# \copy takes its file name literally (no psql variables), so the load
# commands are written out here and demo.sql includes them.
cat >"$scratch/load.sql" <<EOT
\\copy copyright (pkg, body) FROM '$scratch/copyright.csv' WITH (FORMAT csv)
\\copy licence (name, body) FROM '$scratch/licence.csv' WITH (FORMAT csv)
EOT

"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -P pager=off \
    -v load_script="$scratch/load.sql" \
    -f demo/demo.sql

echo
echo "demo finished in $((SECONDS - started)) s after the build"
