# shellcheck shell=bash
# Sourced by bench/parallel_build.sh and bench/parallel_pairs.sh:
#
#   load_docs_tsv DOCS.tsv ROWS   docs(id, body, sig) in the cluster of PGHOST/PGPORT: the
#                                 first ROWS documents of a minhash-gen TSV, signatures
#                                 computed, analyzed
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
