#!/usr/bin/env bash
# The pending list's merge, two builds of minhash.so side by side on the same
# index state: for each build in turn (which goes first alternates), a copy of
# a template database (CREATE DATABASE ... TEMPLATE ... STRATEGY file_copy), a
# CHECKPOINT, then $ROUNDS rounds of: insert $ROWS rows of the template's
# `extra` table into `docs` (they wait in the pending list), then
# minhash_lsh_clean_pending_list, timed by the merging backend's CPU
# (/proc/self/schedstat, read through pg_read_file) and its WAL. Round 1 pays
# the full-page images after the checkpoint; later rounds are the steady cost.
#
#   bash bench/experiments/merge_compare.sh OLD.so NEW.so TEMPLATE_DB [pairs]
#
# TEMPLATE_DB: docs(id bigint, body text, sig minhash) with an lsh index
# docs_sig whose pending list is empty, and extra(...) of the same columns
# holding the rows to insert (e.g. the ingest benchmark's 1M documents split
# 950,000 / 50,000, after some merges so that its leaves are full and every
# merge splits many). PGHOST/PGPORT of a running cluster, superuser (the
# CPU is read from /proc); PG_CONFIG names the installation whose minhash.so
# is swapped (by rename: a backend still mapping the old file is unharmed).
# Prints one line per build, pair and round: CPU µs and WAL bytes per merged row.
set -euo pipefail
old=$1; new=$2; template=$3
pairs=${4:-2}
ROUNDS=${ROUNDS:-4}
ROWS=${ROWS:-1900}
lib="$("${PG_CONFIG:-pg_config}" --pkglibdir)/minhash.so"
swap() { install -m 755 "$1" "$lib.swap"; mv -f "$lib.swap" "$lib"; }
keep=$(mktemp); cp "$lib" "$keep"
trap 'swap "$keep"; rm -f "$keep"; psql -X -q -d postgres -c "DROP DATABASE IF EXISTS merge_compare" >/dev/null 2>&1 || true' EXIT

run() {		# build-name library pair
	local name=$1 so=$2 pair=$3
	swap "$so"
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS merge_compare" \
		-c "CREATE DATABASE merge_compare TEMPLATE $template STRATEGY file_copy" >/dev/null
	psql -X -q -d merge_compare -v ON_ERROR_STOP=1 -At 2>&1 <<SQL | sed -n "s/^NOTICE:  /$name pair $pair /p"
CHECKPOINT;
CREATE TEMP TABLE batch AS SELECT * FROM extra ORDER BY id LIMIT $ROWS * $ROUNDS;
CREATE FUNCTION pg_temp.cpu_ns() RETURNS bigint LANGUAGE sql AS
  \$\$ SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint \$\$;
SELECT pg_temp.cpu_ns();	-- loads the library
DO \$\$
DECLARE r int; c0 bigint; w0 pg_lsn; n bigint;
BEGIN
  FOR r IN 1..$ROUNDS LOOP
    INSERT INTO docs SELECT * FROM batch ORDER BY id OFFSET (r - 1) * $ROWS LIMIT $ROWS;
    c0 := pg_temp.cpu_ns(); w0 := pg_current_wal_insert_lsn();
    n := minhash_lsh_clean_pending_list('docs_sig');
    RAISE NOTICE 'round % rows % cpu_us_per_row % wal_B_per_row %', r, n,
      round((pg_temp.cpu_ns() - c0) / 1000.0 / n, 1),
      round((pg_current_wal_insert_lsn() - w0) / n);
  END LOOP;
END \$\$;
SQL
}

for ((p = 1; p <= pairs; p++)); do
	if ((p % 2)); then run old "$old" "$p"; run new "$new" "$p"
	else run new "$new" "$p"; run old "$old" "$p"; fi
done
