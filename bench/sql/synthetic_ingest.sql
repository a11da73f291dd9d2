-- The tables of the synthetic ingest benchmarks (bench/ingest_synthetic.sh,
-- bench/experiments/ingest_compare.sh): m(id int primary key, sig minhash) with :rows
-- sets of 30 elements and an lsh index with fastupdate (plus :lsh_opts, e.g.
-- ", pending_list_limit = 8192", or nothing), m_pk the same rows with the
-- primary key only, and pool: rows :pool_lo to :pool_hi to insert (g * 1000
-- must stay below 2^31). Run with psql -v rows=N -v pool_lo=.. -v pool_hi=.. -v lsh_opts=...
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minhash;
DROP TABLE IF EXISTS m, m_pk, pool;
CREATE TABLE m (id int PRIMARY KEY, sig minhash);
INSERT INTO m SELECT g, minhash(array_agg(hashint4(g * 1000 + j)))
FROM generate_series(1, :rows) g, generate_series(1, 30) j GROUP BY g;
CREATE INDEX m_sig ON m USING lsh (sig) WITH (fastupdate = on :lsh_opts);
CREATE TABLE pool AS SELECT g AS id, minhash(array_agg(hashint4(g * 1000 + j))) AS sig
FROM generate_series(:pool_lo, :pool_hi) g, generate_series(1, 30) j GROUP BY g;
CREATE INDEX ON pool (id);
CREATE TABLE m_pk (LIKE m);
ALTER TABLE m_pk ADD PRIMARY KEY (id);
INSERT INTO m_pk SELECT * FROM m;
VACUUM ANALYZE m;
VACUUM ANALYZE m_pk;
VACUUM ANALYZE pool;
