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
