#!/usr/bin/env bash
# minhash(anyarray) before/after a change, side by side in one run: the same
# arrays, the same server, two builds of minhash.so swapped in turn (each
# timing in a new backend, which loads the file installed at that moment).
# Prints, per build, the best of $REPS wall-clock timings of each query, and
# whether the two builds give identical signatures for each element type.
#
#   bench/experiments/array_compare.sh OLD.so NEW.so      (PGHOST/PGPORT of a running
#                                               cluster with the extension; PG_CONFIG)
set -euo pipefail
old=$1; new=$2
REPS=${REPS:-5}
lib="$("${PG_CONFIG:-pg_config}" --pkglibdir)/minhash.so"
# swap by rename, never by overwriting: a backend still mapping the old file
# would crash if its pages changed under it
swap() { install -m 755 "$1" "$lib.swap"; mv -f "$lib.swap" "$lib"; }
keep=$(mktemp); cp "$lib" "$keep"
trap 'swap "$keep"; rm -f "$keep"' EXIT
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
DROP TABLE IF EXISTS arrcmp;
SELECT setseed(0.42);
CREATE TABLE arrcmp AS
SELECT g AS id,
       ARRAY(SELECT (random() * 1e6)::int FROM generate_series(1, 20)) AS i4,
       ARRAY(SELECT (random() * 1e12)::bigint FROM generate_series(1, 20)) AS i8,
       ARRAY(SELECT md5(random()::text) FROM generate_series(1, 20)) AS t,
       ARRAY(SELECT timestamptz '2020-01-01' + random() * interval '1000 days' FROM generate_series(1, 20)) AS ts,
       ARRAY(SELECT random() * 1000 FROM generate_series(1, 20)) AS f8
FROM generate_series(1, 100000) g;
VACUUM ANALYZE arrcmp;
SQL
queries=(
  "SELECT count(minhash(i4)) FROM arrcmp"
  "SELECT count(minhash(i8)) FROM arrcmp"
  "SELECT count(minhash(t)) FROM arrcmp"
  "SELECT count(minhash(ts)) FROM arrcmp"
  "SELECT count(minhash(f8)) FROM arrcmp"
)
best() {   # best wall-clock ms of $REPS runs of $1 in one new backend
  { echo '\timing on'; for _ in $(seq "$REPS"); do echo "$1;"; done; } |
    psql -X -q -v ON_ERROR_STOP=1 | awk '/^Time:/ { if (b == "" || $2 < b) b = $2 } END { print b }'
}
digest() {   # md5 over every row's signature of column $1
  psql -X -q -A -t -c "SELECT md5(string_agg(minhash($1)::text, ',' ORDER BY id)) FROM arrcmp"
}
declare -A ms dg
for round in 1 2; do
  for b in old new; do
    if [ $b = old ]; then swap "$old"; else swap "$new"; fi
    for q in "${queries[@]}"; do
      t=$(best "$q"); k="$b|$q"
      if [ -z "${ms[$k]:-}" ] || awk -v a="$t" -v c="${ms[$k]}" 'BEGIN { exit !(a < c) }'; then ms[$k]=$t; fi
    done
    for c in i4 i8 t ts f8; do dg["$b|$c"]=$(digest $c); done
  done
done
printf '| query | old ms | new ms | new/old |\n|---|---|---|---|\n'
for q in "${queries[@]}"; do
  o=${ms["old|$q"]}; n=${ms["new|$q"]}
  printf '| %s | %s | %s | %s |\n' "$q" "$o" "$n" "$(awk -v o="$o" -v n="$n" 'BEGIN { printf "%.2f", n / o }')"
done
for c in i4 i8 t ts f8; do
  if [ "${dg["old|$c"]}" = "${dg["new|$c"]}" ]; then s=identical; else s=different; fi
  echo "signatures of column $c: $s"
done
