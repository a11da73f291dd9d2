# Loading the corpus: docs (id, cluster, body, sig), docs_extra (rows kept
# back for the insert test), truth (exact Jaccard of every pair that matters,
# both directions), queries (NQ rows picked by a fixed hash), baskets.

load_data() {
    section "load"
    local sig_col="" sig_expr=""
    if [ "$have_ext" = 1 ] && have_fn minhash; then
        sig_col=", sig"; sig_expr=", minhash(body) AS sig"
    fi
    psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE docs_raw (id int, cluster int, body text);
\copy docs_raw FROM '$DATA/docs.tsv'
CREATE TABLE docs AS SELECT id, cluster, body $sig_expr FROM docs_raw WHERE id <= $ROWS;
CREATE TABLE docs_extra AS SELECT id, cluster, body $sig_expr FROM docs_raw WHERE id > $ROWS;
DROP TABLE docs_raw;
ALTER TABLE docs ADD PRIMARY KEY (id);

CREATE TABLE truth (a int, b int, j float8, planted bool);
\copy truth FROM '$DATA/truth.tsv'
DELETE FROM truth WHERE a > $ROWS OR b > $ROWS;
CREATE TABLE truth_sym AS SELECT a AS q, b AS o, j FROM truth UNION ALL SELECT b, a, j FROM truth;
CREATE INDEX ON truth_sym (q);

CREATE TABLE queries AS
    SELECT (row_number() OVER (ORDER BY hashint4(id), id))::int AS qid, id, body $sig_col
    FROM docs ORDER BY hashint4(id), id LIMIT $NQ;
ALTER TABLE queries ADD PRIMARY KEY (qid);

CREATE TABLE baskets_raw (id int, cluster int, items int[]);
\copy baskets_raw FROM '$DATA/baskets.tsv'
CREATE TABLE baskets_truth (a int, b int, j float8, planted bool);
\copy baskets_truth FROM '$DATA/baskets_truth.tsv'
CREATE TABLE perms (id int, body text);
\copy perms FROM '$DATA/perms.tsv'
VACUUM ANALYZE;
SQL
    q -c "SELECT format('docs: %s rows, %s MB of text; truth: %s pairs (%s with J >= 0.5); queries: %s',
            (SELECT count(*) FROM docs), (SELECT round(sum(octet_length(body)) / 1e6, 1) FROM docs),
            (SELECT count(*) FROM truth), (SELECT count(*) FROM truth WHERE j >= 0.5),
            (SELECT count(*) FROM queries))"
}

# The generator's exact Jaccard against the extension's own exact Jaccard on
# 1000 pairs each: the ground truth must use the same shingling (documents)
# and the same element identity (baskets) as the extension. Also the
# estimate's error on baskets, the minhash(anyarray) path.
check_truth() {
    section "ground truth check"
    if [ "$have_ext" != 1 ] || ! have_fn minhash_shingles || ! have_fn jaccard; then
        not_available "minhash_shingles / jaccard (ground-truth check)"
        return
    fi
    tbl_start "Ground truth: bench/gen's exact Jaccard vs the extension's jaccard(anyarray, anyarray), 1000 pairs each" \
        "pairs|max abs difference|mean abs error of the 128-permutation estimate|model sqrt(2/pi) sqrt(J(1-J)/128)"
    local r
    r=$(q -F'|' -c "
        WITH p AS (SELECT * FROM truth ORDER BY hashint8(a::int8 * 31 + b) LIMIT 1000)
        SELECT max(abs(jaccard(minhash_shingles(x.body), minhash_shingles(y.body)) - p.j)),
               avg(abs(jaccard(x.sig, y.sig) - p.j)), avg(sqrt(2 / pi()) * sqrt(p.j * (1 - p.j) / 128))
        FROM p JOIN docs x ON x.id = p.a JOIN docs y ON y.id = p.b")
    IFS='|' read -r d e m <<<"$r"
    tbl_row "documents (word 5-shingles)|$(fmt %.2g "$d")|$(fmt %.4f "$e")|$(fmt %.4f "$m")"
    r=$(q -F'|' -c "
        WITH p AS (SELECT * FROM baskets_truth ORDER BY hashint8(a::int8 * 31 + b) LIMIT 1000)
        SELECT max(abs(jaccard(x.items, y.items) - p.j)),
               avg(abs(jaccard(minhash(x.items), minhash(y.items)) - p.j)), avg(sqrt(2 / pi()) * sqrt(p.j * (1 - p.j) / 128))
        FROM p JOIN baskets_raw x ON x.id = p.a JOIN baskets_raw y ON y.id = p.b")
    IFS='|' read -r d e m <<<"$r"
    tbl_row "baskets (int[] elements)|$(fmt %.2g "$d")|$(fmt %.4f "$e")|$(fmt %.4f "$m")"
    tbl_note "The generator writes Jaccard with 6 decimals, so differences up to 5e-07 are rounding."
    tbl_end
}

# The 10m scale: one COPY (FREEZE, into a table created in the same
# transaction) computes every signature through a generated column, so the
# 9 GB of text are written once, not staged and copied; the expression is
# dropped afterwards (docs.sig is then a plain column, as at the other
# scales). Truth: the planted pairs only (minhash-gen --join 0); at 1M the
# cross-cluster join found no pair with J >= 0.3, so none are expected.
# Sets SIGBYTES and DOCROWS for the index section (one scan, not one per row
# of its table). Prints the load table.
load_data_big() {
    section "load (10m)"
    if [ "$have_ext" != 1 ] || ! have_fn minhash; then
        not_available "minhash type and functions (load)"
        exit 0
    fi
    local out
    out=$(psql -X -q -v ON_ERROR_STOP=1 -tA <<SQL
SELECT pg_read_file('/proc/self/schedstat');
\timing on
BEGIN;
CREATE TABLE docs (id int, cluster int, body text,
                   sig minhash GENERATED ALWAYS AS (minhash(body)) STORED);
\copy docs (id, cluster, body) FROM '$DATA/docs.tsv' WITH (FREEZE)
COMMIT;
\timing off
SELECT pg_read_file('/proc/self/schedstat');
SQL
    ) || exit 1
    # wall: the sum of the timed statements (BEGIN, CREATE, COPY, COMMIT)
    read -r LOAD_CPU LOAD_WALL < <(awk '
        /^Time: / { wall += $2 / 1000; next }
        /^[0-9]+ [0-9]+ [0-9]+$/ { n++; cpu[n] = $1 / 1e9 }
        END { printf "%.1f %.1f\n", cpu[n] - cpu[1], wall }' <<<"$out")
    q -c "ALTER TABLE docs ALTER COLUMN sig DROP EXPRESSION" >/dev/null
    # BENCH_DROP_DATA=1: the corpus file goes once loaded (9 GB of disk
    # back; the next run generates it again).
    [ "${BENCH_DROP_DATA:-0}" = 1 ] && rm -f "$DATA/docs.tsv"
    local pk_ms
    pk_ms=$(sql_ms "ALTER TABLE docs ADD PRIMARY KEY (id)")
    psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE docs_extra (LIKE docs);
CREATE TABLE truth (a int, b int, j float8, planted bool);
\copy truth FROM '$DATA/truth.tsv'
CREATE TABLE truth_sym AS SELECT a AS q, b AS o, j FROM truth UNION ALL SELECT b, a, j FROM truth;
CREATE INDEX ON truth_sym (q);
CREATE TABLE queries AS
    SELECT (row_number() OVER (ORDER BY hashint4(id), id))::int AS qid, id, body, sig
    FROM docs ORDER BY hashint4(id), id LIMIT $NQ;
ALTER TABLE queries ADD PRIMARY KEY (qid);
ANALYZE;
SQL
    local r
    r=$(q -F' ' -c "SELECT count(*), sum(octet_length(body)), sum(pg_column_size(sig)) FROM docs")
    read -r DOCROWS textbytes SIGBYTES <<<"$r"
    export DOCROWS SIGBYTES
    tbl_start "Load ($ROWS documents, one COPY ... WITH (FREEZE) computing minhash(body) per row)" \
        "step|wall s|backend CPU s|size|notes"
    tbl_row "COPY docs (id, cluster, body) with sig GENERATED ... minhash(body) STORED|$LOAD_WALL|$LOAD_CPU|table $(q -c "SELECT pg_size_pretty(pg_table_size('docs'))")|$(fmt %.1f "$(calc "$textbytes / 1e6")") MB of text ($(fmt %.0f "$(calc "$textbytes / $DOCROWS")") bytes/row): $(fmt %.1f "$(calc "$textbytes / 1e6 / $LOAD_CPU")") MB/s per core of backend CPU for parse + signature + heap write"
    tbl_row "ALTER TABLE docs ADD PRIMARY KEY (id)|$(fmt %.1f "$(calc "$pk_ms / 1000")")|-|$(q -c "SELECT pg_size_pretty(pg_relation_size('docs_pkey'))")|"
    tbl_row "signatures: sum(pg_column_size(sig))|-|-|$(fmt %.1f "$(calc "$SIGBYTES / 1048576")") MB|$(fmt %.0f "$(calc "$SIGBYTES / $DOCROWS")") bytes/row"
    tbl_note "truth: $(q -c "SELECT count(*) FROM truth") planted pairs ($(q -c "SELECT count(*) FROM truth WHERE j >= 0.5") with J >= 0.5); queries: $NQ rows. WAL: wal_level = replica (the COPY is WAL-logged)."
    tbl_end
}
