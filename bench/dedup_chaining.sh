#!/usr/bin/env bash
# Why deduplicating by connected components deletes rows unlike the row it
# keeps, and what representative mode with keep changes: the man pages of
# this machine (or any directory of text files, gzipped or not) clustered at
# a threshold, each way:
#   - rows deleted (every member but the kept row), how many of them have an
#     estimated similarity below the threshold to the row kept, the lowest;
#   - the largest cluster, and (with keep) clusters whose kept row is not
#     the longest of its members (expected 0);
#   - the wall time of the minhash_clusters call (at the client, into a
#     temporary table), three rounds, the four ways alternating.
#
#   bash bench/dedup_chaining.sh [DIR] [THRESHOLD]   (default /usr/share/man/man*, 0.8; honours PG_CONFIG)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-}
t=${2:-0.8}
PGBIN=$("${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}" --bindir)
export PATH="$PGBIN:$PATH"
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir dedup_chaining

# the files, in path order, as COPY rows (id, path, body): text decoded as
# UTF-8 (bad bytes replaced), NUL dropped
python3 - "$SCRATCH/pages.tsv" ${dir:+"$dir"} <<'PY'
import glob, gzip, os, sys
out = sys.argv[1]
roots = sys.argv[2:] or sorted(glob.glob('/usr/share/man/man*'))
paths = sorted(os.path.join(d, f) for r in roots for d, _, fs in os.walk(r) for f in fs
               if os.path.isfile(os.path.join(d, f)) and not os.path.islink(os.path.join(d, f)))
def esc(s):
    return s.replace('\\', '\\\\').replace('\t', '\\t').replace('\n', '\\n').replace('\r', '\\r')
with open(out, 'w', encoding='utf-8') as o:
    for i, p in enumerate(paths, 1):
        with (gzip.open if p.endswith('.gz') else open)(p, 'rb') as f:
            body = f.read().decode('utf-8', 'replace').replace('\0', '')
        o.write(f"{i}\t{esc(p)}\t{esc(body)}\n")
print(f"{len(paths)} files", file=sys.stderr)
PY

scratch_cluster pg "shared_buffers = '1GB'" "work_mem = '64MB'" "autovacuum = off" \
    "max_wal_size = '4GB'" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION minhash;
CREATE TABLE pages (id int PRIMARY KEY, path text, body text);
\copy pages FROM '$SCRATCH/pages.tsv'
ALTER TABLE pages ADD COLUMN len int GENERATED ALWAYS AS (octet_length(body)) STORED,
                  ADD COLUMN sig minhash GENERATED ALWAYS AS (minhash(body)) STORED;
CREATE INDEX pages_sig_idx ON pages USING lsh (sig);
VACUUM ANALYZE pages;
SQL

report() {  # label, minhash_clusters arguments after the threshold
    psql -X -q -tA -F' | ' -v ON_ERROR_STOP=1 <<SQL | awk '/^Time: / { ms = $2; next } { row = $0 } END { printf "| %s | %.0f |\n", row, ms }'
\\timing on
CREATE TEMP TABLE c AS SELECT * FROM minhash_clusters('pages_sig_idx', 'id', $t $2);
\\timing off
WITH d AS (SELECT c.key, jaccard(m.sig, k.sig) AS s FROM c JOIN pages m ON m.id = c.key
           JOIN pages k ON k.id = c.cluster_id WHERE c.key <> c.cluster_id),
     sizes AS (SELECT cluster_id, count(*) AS n FROM c GROUP BY cluster_id),
     not_longest AS (SELECT c.cluster_id FROM c JOIN pages m ON m.id = c.key JOIN pages k ON k.id = c.cluster_id
                     GROUP BY c.cluster_id, k.len HAVING max(m.len) > k.len)
SELECT '$1', (SELECT count(*) FROM c), (SELECT count(*) FROM sizes), (SELECT max(n) FROM sizes),
       (SELECT count(*) FROM d), (SELECT count(*) FROM d WHERE s < $t), (SELECT round(min(s)::numeric, 3) FROM d),
       (SELECT count(*) FROM not_longest);
SQL
}

echo
echo "$(psql -X -tAc 'SELECT count(*) FROM pages') files$( [ -z "$dir" ] && echo ' (/usr/share/man/man*)'), threshold $t, index $(psql -X -tAc "SELECT bands || ' x ' || rows FROM minhash_lsh_stats('pages_sig_idx')"); $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
echo
echo "| clusters by | rows in clusters | clusters | largest | rows deleted | deleted below $t to the kept row | lowest similarity to the kept row | clusters whose kept row is not the longest | minhash_clusters (ms) |"
echo "|---|---|---|---|---|---|---|---|---|"
for _ in 1 2 3; do
    report "connected components, smallest id kept" ""
    report "connected components, keep the longest" ", keep => 'len', keep_desc => true"
    report "representative, smallest id kept" ", mode => 'representative'"
    report "representative, keep the longest" ", mode => 'representative', keep => 'len', keep_desc => true"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
