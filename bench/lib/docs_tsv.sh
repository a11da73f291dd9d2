# shellcheck shell=bash
# Sourced by bench/parallel_build.sh and bench/parallel_pairs.sh:
#
#   load_docs_tsv DOCS.tsv ROWS   docs(id, body, sig) in the cluster of PGHOST/PGPORT: the
#                                 first ROWS documents of a minhash-gen TSV, signatures
#                                 computed, analyzed
#   load_docs_indexed DOCS.tsv ROWS the same, with a primary key on id and
#                                 docs_sig_lsh, an lsh index on sig (the all-pairs benchmarks)
load_docs_tsv() {
    psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION IF NOT EXISTS minhash;
CREATE TABLE docs_raw (id int, cluster int, body text);
\copy docs_raw FROM '$1'
CREATE TABLE docs AS SELECT id, body FROM docs_raw WHERE id <= $2;
DROP TABLE docs_raw;
ALTER TABLE docs ADD COLUMN sig minhash;
UPDATE docs SET sig = minhash(body);
VACUUM ANALYZE docs;
SQL
}

load_docs_indexed() {
    load_docs_tsv "$1" "$2"
    psql -X -q -v ON_ERROR_STOP=1 <<SQL
ALTER TABLE docs ADD PRIMARY KEY (id);
VACUUM ANALYZE docs;
CREATE INDEX docs_sig_lsh ON docs USING lsh (sig);
CHECKPOINT;
SQL
}
