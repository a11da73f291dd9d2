#!/usr/bin/env bash
# The deduplication parameter sets of datatrove, NeMo Curator and text-dedup
# (and minhash's own) reproduced as minhash(...) arguments and lsh options,
# scored on a planted corpus: for each set, the pairs it reports against the
# pairs whose exact Jaccard similarity, in that set's own shingles, reaches
# its threshold (docs/dedup.md explains each set).
#
#   bash bench/dedup_params.sh [ROWS] [SEED]     (default 10000 rows, seed 42; honours PG_CONFIG)
#
# The corpus: build/core/minhash-gen docs (near-duplicate clusters planted
# with a known edit rate; every pair within a cluster is in its truth file,
# and every pair across clusters with word-5 Jaccard >= 0.3). For a set's
# shingles (5 words, 24 characters) the exact Jaccard of every such pair is
# computed in SQL, jaccard(minhash_shingles(a), minhash_shingles(b)). A pair
# a set returns that is in no cluster and similar enough would be a true pair
# the truth file missed: counted in the column "true outside the truth" and
# added to the true pairs (expected 0).
#
# The generator punctuates and capitalises every copy of a document afresh
# (its edits are edits of words), which word shingles ignore and character
# shingles count: a copy with no word changed shares a third of its 24-character
# shingles with its original. So the character set (NeMo Curator's) reads
# the text with punctuation replaced by spaces and whitespace runs squeezed
# (column plain), signatures and truth alike; the word sets read body.
#
# Each set is run three ways:
#   candidates  every pair sharing a band (minhash_bands(sig, bands, rows)),
#               no verification: what datatrove, and NeMo Curator without its
#               false-positive check, call duplicates;
#   estimate    minhash_similar_pairs(index, 'id', t): candidates verified on
#               the estimate of the signatures;
#   exact       the same with exact => true: candidates verified on the exact
#               Jaccard of the shingles (text-dedup's check_false_positive,
#               NeMo Curator's false_positive_check).
# recall = true pairs returned / true pairs, precision = true pairs returned /
# pairs returned. Times are wall clock at the client, on a cluster of its own,
# for the two calls of minhash_similar_pairs (the candidates' plain SQL join
# is there to count them, not to be timed).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-10000}
seed=${2:-42}
BENCH_BIN=${BENCH_BIN:-build/core}
PGBIN=$("${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}" --bindir)
export PATH="$PGBIN:$PATH"

if [ ! -x "$BENCH_BIN/minhash-gen" ]; then
    cmake -S . -B "$BENCH_BIN" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$BENCH_BIN" -j2 --target minhash-gen >/dev/null
fi
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir dedup_params
"$BENCH_BIN/minhash-gen" docs --rows "$rows" --seed "$seed" --out "$SCRATCH/docs.tsv" \
    --truth "$SCRATCH/truth.tsv"
scratch_cluster pg "shared_buffers = '1GB'" "work_mem = '64MB'" "autovacuum = off" \
    "max_wal_size = '4GB'" >/dev/null

psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION minhash;
CREATE TABLE docs (id int PRIMARY KEY, cluster int, body text);
\copy docs FROM '$SCRATCH/docs.tsv'
ALTER TABLE docs ADD COLUMN plain text;
UPDATE docs SET plain = btrim(regexp_replace(regexp_replace(body, '[[:punct:]]', ' ', 'g'), '\s+', ' ', 'g'));
CREATE TABLE truth (a int, b int, j float8, planted bool);
\copy truth FROM '$SCRATCH/truth.tsv'
CREATE TABLE score (set_name text, verification text, returned bigint, true_returned bigint,
                    true_pairs bigint, true_outside bigint, ms numeric);
SQL

# name | text column | signature expression | lsh options | threshold | shingle unit | k
sets=(
    "minhash defaults, one index|body|minhash(body)||0.8|word|5"
    "minhash, index for 0.8|body|minhash(body)|threshold = 0.8|0.8|word|5"
    "datatrove|body|minhash(body, 'word', 5, num_perm => 112)|bands = 14, rows = 8|0.72|word|5"
    "NeMo Curator|plain|minhash(plain, 'char', 24, num_perm => 260)|bands = 20, rows = 13|0.8|char|24"
    "text-dedup|body|minhash(body, 'word', 5, num_perm => 240)|threshold = 0.7, fp_weight = 0.5, fn_weight = 0.5|0.7|word|5"
)

ms_of() {  # SQL -> milliseconds of its last statement
    psql -X -q -v ON_ERROR_STOP=1 -c '\timing on' -c "$1" | awk '/^Time: / { t = $2 } END { print t }'
}

i=0
for s in "${sets[@]}"; do
    IFS='|' read -r name col expr opts t unit k <<<"$s"
    i=$((i + 1))
    with=${opts:+WITH ($opts)}
    psql -X -q -v ON_ERROR_STOP=1 <<SQL
ALTER TABLE docs ADD COLUMN sig_$i minhash;
UPDATE docs SET sig_$i = $expr;
CREATE INDEX idx_$i ON docs USING lsh (sig_$i) $with;
VACUUM ANALYZE docs;
-- every document's shingles in this set's unit, for the exact Jaccard
CREATE TABLE sh_$i AS SELECT id, minhash_shingles($col, $k, '$unit') AS s FROM docs;
ALTER TABLE sh_$i ADD PRIMARY KEY (id);
CREATE TABLE truth_$i AS
SELECT t.a, t.b, jaccard(x.s, y.s) AS j FROM truth t JOIN sh_$i x ON x.id = t.a JOIN sh_$i y ON y.id = t.b;
SQL
    read -r bands brows < <(psql -X -tA -F' ' -c "SELECT bands, rows FROM minhash_lsh_stats('idx_$i')")
    declare -A took=()
    took[candidates]=$(ms_of "CREATE TABLE r_${i}_candidates AS
        WITH k AS (SELECT id, unnest(minhash_bands(sig_$i, $bands, $brows)) AS key FROM docs)
        SELECT DISTINCT x.id AS a, y.id AS b FROM k x JOIN k y ON x.key = y.key AND x.id < y.id")
    took[estimate]=$(ms_of "CREATE TABLE r_${i}_estimate AS
        SELECT key_a AS a, key_b AS b FROM minhash_similar_pairs('idx_$i', 'id', $t)")
    took[exact]=$(ms_of "CREATE TABLE r_${i}_exact AS
        SELECT key_a AS a, key_b AS b FROM minhash_similar_pairs('idx_$i', 'id', $t, exact => true,
                                                                 text_column => '$col', unit => '$unit', k => $k)")
    for v in candidates estimate exact; do
        psql -X -q -v ON_ERROR_STOP=1 <<SQL
WITH scored AS (
    SELECT r.a, r.b, jaccard(x.s, y.s) AS j,
           EXISTS (SELECT FROM truth t WHERE t.a = r.a AND t.b = r.b) AS in_truth
    FROM r_${i}_$v r JOIN sh_$i x ON x.id = r.a JOIN sh_$i y ON y.id = r.b),
outside AS (  -- true pairs some way of this set found that the truth file does not hold
    SELECT DISTINCT r.a, r.b FROM (TABLE r_${i}_candidates UNION TABLE r_${i}_estimate UNION TABLE r_${i}_exact) r
    JOIN sh_$i x ON x.id = r.a JOIN sh_$i y ON y.id = r.b
    WHERE jaccard(x.s, y.s) >= $t AND NOT EXISTS (SELECT FROM truth t WHERE t.a = r.a AND t.b = r.b))
INSERT INTO score
SELECT '$name', '$v', (SELECT count(*) FROM scored), (SELECT count(*) FROM scored WHERE j >= $t),
       (SELECT count(*) FROM truth_$i WHERE j >= $t) + (SELECT count(*) FROM outside),
       (SELECT count(*) FROM outside), ${took[$v]};
SQL
    done
done

load=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
echo
echo "$rows documents (minhash-gen docs --rows $rows --seed $seed), $(psql -X -tAc "SELECT count(*) FROM truth") planted pairs; $(nproc) cores, $cpu; load average $load"
echo
echo "| parameter set | signature | lsh options (bands × rows) | t | verification | true pairs | returned | recall | precision | true outside the truth | time (ms) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
i=0
for s in "${sets[@]}"; do
    IFS='|' read -r name col expr opts t unit k <<<"$s"
    i=$((i + 1))
    params=$(psql -X -tA -c "SELECT bands || ' × ' || rows FROM minhash_lsh_stats('idx_$i')")
    psql -X -tA -F'|' -c "
SELECT verification, true_pairs, returned,
       coalesce(to_char(true_returned::numeric / nullif(true_pairs, 0), 'FM0.0000'), '-'),
       coalesce(to_char(true_returned::numeric / nullif(returned, 0), 'FM0.0000'), '-'),
       true_outside, round(ms)
FROM score WHERE set_name = '$name'
ORDER BY array_position(ARRAY['candidates', 'estimate', 'exact'], verification)" |
    while IFS='|' read -r v tp ret rec prec outside ms; do
        [ "$v" = candidates ] && ms="(SQL join)"
        echo "| $name | \`$expr\` | ${opts:-(defaults)} ($params) | $t | $v | $tp | $ret | $rec | $prec | $outside | $ms |"
    done
done
