-- Memory bounded by work_mem: a band group of many identical rows at the
-- smallest work_mem (64kB). The group's 1100 row ids (4.4 kB) are more than a
-- sixteenth of work_mem holds (1024 ids), so each group spills its ids to a
-- tuplesort: the DEBUG1 summary counts the spilled groups. Signatures are
-- compared chunk against chunk, so the m (m - 1) / 2 pairs cost time, not
-- memory; the count is exact.
-- (The peak memory of the backend during such a walk is measured in the TAP
-- test tests/t/070_pairs_concurrency.pl.)

CREATE TABLE pmem (id int PRIMARY KEY, sig minhash);
INSERT INTO pmem SELECT g, minhash('one text for all the rows'::text) FROM generate_series(1, 1100) g;
CREATE INDEX pmem_idx ON pmem USING lsh (sig);

SET work_mem = '64kB';
SET client_min_messages = debug1;
SELECT count(*) AS pairs, count(*) = 1100 * 1099 / 2 AS all_pairs,
       count(DISTINCT key_a) AS keys_a, min(similarity), max(similarity)
FROM minhash_similar_pairs('pmem_idx', 'id');
RESET client_min_messages;
SELECT count(*) AS members, count(DISTINCT cluster_id) AS clusters, min(cluster_id)
FROM minhash_clusters('pmem_idx', 'id');

-- the same at a work_mem that holds the group: nothing spills, same count
SET work_mem = '4MB';
SET client_min_messages = debug1;
SELECT count(*) AS pairs FROM minhash_similar_pairs('pmem_idx', 'id');
RESET client_min_messages;
RESET work_mem;
DROP TABLE pmem;

-- minhash_match takes memory for the batch it reads, up to hash_mem, not
-- hash_mem up front: a 10-row batch at work_mem = 1GB (hash_mem 2GB). The
-- batch view records the backend's memory while minhash_match reads it.
CREATE TABLE pmem (id int PRIMARY KEY, sig minhash);
INSERT INTO pmem SELECT g, minhash(ARRAY[g, g + 1, g + 2]) FROM generate_series(1, 10) g;
CREATE INDEX pmem_idx ON pmem USING lsh (sig);
CREATE VIEW pmem_batch AS SELECT id, sig FROM pmem
WHERE set_config('pmem.bytes', (SELECT sum(total_bytes) FROM pg_backend_memory_contexts)::text, false) IS NOT NULL;
SET work_mem = '1GB';
SELECT count(*) AS pairs, bool_and(batch_key = key) AS each_row_itself
FROM minhash_match('pmem_idx', 'id', 'pmem_batch', 'id', 'sig', 0.9);
SELECT current_setting('pmem.bytes')::bigint < 64 * 1024 * 1024 AS under_64mb;
RESET work_mem;
DROP VIEW pmem_batch;
DROP TABLE pmem;

-- keys of any size count against the chunk as each row is taken, not once a
-- fetch: at work_mem = 64kB (hash_mem 128kB) a batch of 320 kB keys is
-- matched one row a chunk, every key whole
CREATE TABLE pbig (id text PRIMARY KEY, sig minhash);
INSERT INTO pbig SELECT 'r' || g, minhash(ARRAY[g, g + 1, g + 2]) FROM generate_series(1, 12) g;
CREATE INDEX pbig_idx ON pbig USING lsh (sig);
CREATE TABLE pbig_batch (k text, sig minhash);
INSERT INTO pbig_batch SELECT repeat(md5(g::text), 10000), minhash(ARRAY[g, g + 1, g + 2]) FROM generate_series(1, 12) g;
SET work_mem = '64kB';
SET client_min_messages = debug1;
SELECT count(*) AS pairs, count(DISTINCT batch_key) AS batch_rows, bool_and(length(batch_key) = 320000) AS whole_keys
FROM minhash_match('pbig_idx', 'id', NULL::text, 'pbig_batch', 'k', 'sig', 0.9);
RESET client_min_messages;
RESET work_mem;
DROP TABLE pbig, pbig_batch;
