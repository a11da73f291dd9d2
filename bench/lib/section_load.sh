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
