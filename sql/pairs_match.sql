-- minhash_match: a batch of rows against an lsh index, every (batch row,
-- indexed row) pair with estimated similarity >= t once, equal to the
-- per-row join through the index:
--     SELECT n.id, o.id FROM batch n JOIN old o ON o.sig %>= ROW(n.sig, t)::minhash_query
-- at several thresholds, after deletes and updates, on a partitioned
-- index, with NULLs, a view as the batch; privileges and bad input.

-- old: 200 clusters of 5 variants of a 100-element set (variant m replaces
-- 4m elements: Jaccard (100 - 4m) / (100 + 4m) to variant 0), and 500 rows
-- with nothing in common. new: for 150 of the clusters, a variant not in
-- old (m = 1, 3, 5: between old's), and 100 new rows of their own.
-- enable_seqscan = off makes plans look costly enough to compile: no JIT
SET jit = off;
CREATE TABLE mold (id int, sig minhash);
INSERT INTO mold SELECT c * 10 + m,
       minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(4 * m + 1, 100) j)
               || ARRAY(SELECT -(c * 1000 + m * 100 + j) FROM generate_series(1, 4 * m) j))
FROM generate_series(1, 200) c, generate_series(0, 4) m;
INSERT INTO mold SELECT 100000 + i, minhash(ARRAY(SELECT 10000000 + i * 1000 + j FROM generate_series(1, 60) j))
FROM generate_series(1, 500) i;
CREATE INDEX mold_sig ON mold USING lsh (sig);
CREATE TABLE mnew (id int, sig minhash);
INSERT INTO mnew SELECT 500000 + c * 10 + v,
       minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(2 * v + 1, 100) j)
               || ARRAY(SELECT -(c * 1000 + 700 + v * 10 + j) FROM generate_series(1, 2 * v) j))
FROM generate_series(1, 150) c, unnest(ARRAY[1, 3, 5]) v;
INSERT INTO mnew SELECT 600000 + i, minhash(ARRAY(SELECT 20000000 + i * 1000 + j FROM generate_series(1, 60) j))
FROM generate_series(1, 100) i;
ANALYZE mold;
ANALYZE mnew;

-- the per-row join through the index, and its difference with minhash_match
CREATE FUNCTION mjoin(t float8, batch text DEFAULT 'mnew') RETURNS TABLE (batch_key bigint, key bigint, similarity float8)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  RETURN QUERY EXECUTE format('SELECT n.id::bigint, o.id::bigint, jaccard(n.sig, o.sig)
    FROM %s n JOIN mold o ON o.sig %%>= ROW(n.sig, $1)::minhash_query', batch) USING t;
END $$;
CREATE FUNCTION mdiff(t float8, idx text DEFAULT 'mold_sig', batch text DEFAULT 'mnew')
RETURNS TABLE (pairs bigint, missing bigint, extra bigint, repeated bigint)
LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE joined ON COMMIT DROP AS SELECT * FROM mjoin(t, batch);
  CREATE TEMP TABLE matched ON COMMIT DROP AS
    SELECT * FROM minhash_match(idx::regclass, 'id', batch::regclass, 'id', 'sig', t);
  RETURN QUERY SELECT (SELECT count(*) FROM joined),
    (SELECT count(*) FROM (SELECT * FROM joined EXCEPT SELECT * FROM matched) x),
    (SELECT count(*) FROM (SELECT * FROM matched EXCEPT SELECT * FROM joined) x),
    (SELECT count(*) FROM (SELECT m.batch_key, m.key FROM matched m GROUP BY 1, 2 HAVING count(*) > 1) x);
  DROP TABLE joined, matched;
END $$;

-- the same pairs and similarities at every threshold: above the index's
-- design threshold (whole bands), at it, and below it (band prefixes)
SELECT t, d.* FROM unnest(ARRAY[0.3, 0.5, 0.7, 0.9]) t, mdiff(t) d;
-- the pairs found are the planted ones
SELECT count(*) AS pairs, count(*) FILTER (WHERE (batch_key - 500000) / 10 = key / 10) AS in_cluster,
       min(similarity) >= 0.5 AS at_threshold
FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5);
-- threshold NULL (the default) is minhash.similarity_threshold
SET minhash.similarity_threshold = 0.7;
SELECT (SELECT count(*) FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig')) =
       (SELECT count(*) FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.7)) AS default_threshold;
RESET minhash.similarity_threshold;
-- minhash.lsh_recall changes the probe depth of both the same way
SET minhash.lsh_recall = 0.6;
SELECT t, d.* FROM unnest(ARRAY[0.3, 0.5]) t, mdiff(t) d;
RESET minhash.lsh_recall;

-- an index built for another threshold (12 bands of 10 rows, for 0.8)
CREATE INDEX mold_sig8 ON mold USING lsh (sig) WITH (threshold = 0.8);
DROP INDEX mold_sig;
SELECT t, d.* FROM unnest(ARRAY[0.3, 0.6, 0.9]) t, mdiff(t, 'mold_sig8') d;
CREATE INDEX mold_sig ON mold USING lsh (sig);
DROP INDEX mold_sig8;

-- keys of another type (key_type, by name): both keys come back as it
SELECT pg_typeof(batch_key) AS batch_key_type, pg_typeof(key) AS key_type, count(*)
FROM minhash_match('mold_sig', 'id', key_type => NULL::text, batch => 'mnew', batch_key_column => 'id',
                   batch_sig_column => 'sig', threshold => 0.5)
GROUP BY 1, 2;
SELECT count(*) AS text_keys_differ FROM (
  SELECT batch_key::bigint, key::bigint, similarity
  FROM minhash_match('mold_sig', 'id', NULL::text, 'mnew', 'id', 'sig', 0.5)
  EXCEPT SELECT * FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5)) x;

-- a small work_mem: the batch in many chunks (one merge each), the
-- candidates verified as they fill their buffer; the same pairs
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT d.* FROM mdiff(0.5) d;
-- a chunk holds what hash_mem holds (work_mem x hash_mem_multiplier, as a
-- hash join's table), at about 0.8 kB a row: the 550 batch rows in 7 chunks
-- of up to 84 rows at 64 kB, in one at 512 kB
SET client_min_messages = debug1;
SELECT count(*) FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5);
SET hash_mem_multiplier = 8;
SELECT count(*) FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5);
RESET client_min_messages;
RESET hash_mem_multiplier;
RESET work_mem;

-- NULLs: batch rows without a signature or a key match nothing; indexed rows
-- without a key are left out (they cannot be named), as in the pairs
INSERT INTO mnew VALUES (700001, NULL), (NULL, (SELECT sig FROM mold WHERE id = 10));
INSERT INTO mold VALUES (NULL, (SELECT sig FROM mold WHERE id = 20));
SELECT count(*) FILTER (WHERE batch_key IS NULL OR key IS NULL) AS null_keys,
       count(*) FILTER (WHERE batch_key = 700001) AS null_sig_rows
FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5);
SELECT count(*) AS differ FROM (
  SELECT * FROM mjoin(0.5) WHERE batch_key IS NOT NULL AND key IS NOT NULL
  EXCEPT SELECT * FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5)) x;
DELETE FROM mnew WHERE id IS NULL OR sig IS NULL;
DELETE FROM mold WHERE id IS NULL;

-- deletes and updates: the rows the query's snapshot sees, before and after VACUUM
DELETE FROM mold WHERE id % 10 = 0 AND id < 1000;
UPDATE mold SET sig = minhash(ARRAY[id]) WHERE id % 10 = 1 AND id < 1000;
UPDATE mold SET id = id + 5000 WHERE id % 10 = 2 AND id < 1000;
SELECT t, d.* FROM unnest(ARRAY[0.5, 0.8]) t, mdiff(t) d;
VACUUM mold;
SELECT t, d.* FROM unnest(ARRAY[0.5, 0.8]) t, mdiff(t) d;
-- rows inserted later, and a pending list (fastupdate): found as the join finds them
ALTER INDEX mold_sig SET (fastupdate = on);
INSERT INTO mold SELECT id + 900000, sig FROM mnew WHERE id % 3 = 0;
SELECT (SELECT pending_rows FROM minhash_lsh_stats('mold_sig')) > 0 AS pending, d.* FROM mdiff(0.5) d;
ALTER INDEX mold_sig SET (fastupdate = off);

-- the batch may be the indexed table itself: every row matches itself
SET enable_seqscan = off;
SELECT count(*) FILTER (WHERE batch_key = key AND similarity = 1) = (SELECT count(*) FROM mold) AS itself,
       count(*) = (SELECT count(*) FROM mold a JOIN mold b ON b.sig %>= ROW(a.sig, 0.5)::minhash_query) AS self_join
FROM minhash_match('mold_sig', 'id', 'mold', 'id', 'sig', 0.5);
RESET enable_seqscan;

-- a view as the batch (computing the signature, filtering rows), and a
-- materialized view
CREATE TABLE mdocs (id int, elems int[]);
INSERT INTO mdocs SELECT id, ARRAY(SELECT (id / 10) * 1000 + j FROM generate_series(3, 100) j) FROM mold WHERE id < 2000;
CREATE VIEW mview AS SELECT id * 2 AS vid, minhash(elems) AS vsig FROM mdocs WHERE id % 2 = 1;
SET enable_seqscan = off;
SELECT count(*) AS differ FROM (
  (SELECT n.vid::bigint, o.id::bigint FROM mview n JOIN mold o ON minhash_similar(o.sig, n.vsig, 0.6)
   EXCEPT SELECT batch_key, key FROM minhash_match('mold_sig', 'id', 'mview', 'vid', 'vsig', 0.6))
  UNION ALL
  (SELECT batch_key, key FROM minhash_match('mold_sig', 'id', 'mview', 'vid', 'vsig', 0.6)
   EXCEPT SELECT n.vid::bigint, o.id::bigint FROM mview n JOIN mold o ON minhash_similar(o.sig, n.vsig, 0.6))) x;
RESET enable_seqscan;
SELECT count(*) AS view_pairs FROM minhash_match('mold_sig', 'id', 'mview', 'vid', 'vsig', 0.6);
CREATE MATERIALIZED VIEW mmat AS SELECT * FROM mnew;
SELECT d.* FROM mdiff(0.5, batch => 'mmat') d;

-- a partitioned index: its partitions merged as one index, the same pairs as
-- a plain index over the same rows
CREATE TABLE mpart (id int, sig minhash) PARTITION BY HASH (id);
CREATE TABLE mpart_0 PARTITION OF mpart FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE mpart_1 PARTITION OF mpart FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE mpart_2 PARTITION OF mpart FOR VALUES WITH (MODULUS 3, REMAINDER 2);
INSERT INTO mpart SELECT * FROM mold;
CREATE INDEX mpart_sig ON mpart USING lsh (sig);
SELECT count(*) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM minhash_match('mpart_sig', 'id', 'mnew', 'id', 'sig', 0.5)
                              EXCEPT SELECT * FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5)) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5)
                              EXCEPT SELECT * FROM minhash_match('mpart_sig', 'id', 'mnew', 'id', 'sig', 0.5)) x) AS missing,
       count(DISTINCT p.tableoid) AS partitions
FROM minhash_match('mpart_sig', 'id', 'mnew', 'id', 'sig', 0.5) m JOIN mpart p ON p.id = m.key;

-- a batch of 50 copies of one indexed row: each row it matches is met by
-- every copy in every band they share
CREATE TABLE mcopies AS SELECT 800000 + g AS id, (SELECT sig FROM mold WHERE id = 13) AS sig
FROM generate_series(1, 50) g;
SELECT d.*, d.pairs % 50 = 0 AS by_fifty FROM mdiff(0.5, batch => 'mcopies') d;

-- signatures the index cannot compare with its own: 22023, with a hint
CREATE TABLE mbad (id int, sig minhash, body text);
INSERT INTO mbad VALUES (1, minhash(ARRAY[1, 2, 3], num_perm => 64), 'x');
SELECT * FROM minhash_match('mold_sig', 'id', 'mbad', 'id', 'sig');
UPDATE mbad SET sig = minhash(ARRAY[1, 2, 3], seed => 7);
SELECT * FROM minhash_match('mold_sig', 'id', 'mbad', 'id', 'sig');
UPDATE mbad SET sig = minhash(ARRAY[1, 2, 3], family => 'datasketch');
SELECT * FROM minhash_match('mold_sig', 'id', 'mbad', 'id', 'sig');
-- the wrong columns or objects
SELECT * FROM minhash_match('mold_sig', 'id', 'mbad', 'id', 'body');
SELECT * FROM minhash_match('mold_sig', 'id', 'mbad', 'id', 'nosuch');
SELECT * FROM minhash_match('mold_sig', 'id', 'mbad', 'body', 'sig');
SELECT * FROM minhash_match('mold_sig', 'nosuch', 'mnew', 'id', 'sig');
SELECT * FROM minhash_match('mold', 'id', 'mnew', 'id', 'sig');
SELECT * FROM minhash_match('mold_sig', 'id', 'mold_sig', 'id', 'sig');
SELECT * FROM minhash_match('mold_sig', 'id', NULL, 'id', 'sig');
SELECT * FROM minhash_match('mold_sig', 'id', 'mnew', NULL, 'sig');
SELECT * FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 1.5);

-- privileges: SELECT on both tables' columns it reads, as a SELECT would
-- need; row-level security on the indexed table refused (the merge cannot
-- apply policies), on the batch applied (the batch is read by a query)
CREATE ROLE regress_match_reader;
GRANT SELECT ON mnew TO regress_match_reader;
SET ROLE regress_match_reader;
SELECT count(*) FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5);
RESET ROLE;
GRANT SELECT (id, sig) ON mold TO regress_match_reader;
REVOKE SELECT ON mnew FROM regress_match_reader;
SET ROLE regress_match_reader;
SELECT count(*) FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5);
RESET ROLE;
GRANT SELECT (id) ON mnew TO regress_match_reader;
SET ROLE regress_match_reader;
SELECT count(*) FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5);
RESET ROLE;
GRANT SELECT (sig) ON mnew TO regress_match_reader;
SET ROLE regress_match_reader;
SELECT count(*) > 0 AS allowed FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5);
RESET ROLE;
-- a view's owner's privileges on its tables, as for any query of the view
CREATE VIEW mnew_view AS SELECT id, sig FROM mnew WHERE id % 2 = 0;
GRANT SELECT ON mnew_view TO regress_match_reader;
REVOKE SELECT ON mnew FROM regress_match_reader;
SET ROLE regress_match_reader;
SELECT count(*) > 0 AS through_view FROM minhash_match('mold_sig', 'id', 'mnew_view', 'id', 'sig', 0.5);
RESET ROLE;
-- row-level security: on the batch, its policies filter the rows read
ALTER TABLE mnew ENABLE ROW LEVEL SECURITY;
CREATE POLICY mnew_low ON mnew FOR SELECT USING (id < 501000);
GRANT SELECT ON mnew TO regress_match_reader;
SET ROLE regress_match_reader;
SELECT count(*) AS visible_batch_pairs, max(batch_key) < 501000 AS filtered
FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5);
RESET ROLE;
ALTER TABLE mnew DISABLE ROW LEVEL SECURITY;
-- on the indexed table: refused
ALTER TABLE mold ENABLE ROW LEVEL SECURITY;
CREATE POLICY mold_all ON mold USING (true);
SET ROLE regress_match_reader;
SELECT count(*) FROM minhash_match('mold_sig', 'id', 'mnew', 'id', 'sig', 0.5);
RESET ROLE;
ALTER TABLE mold DISABLE ROW LEVEL SECURITY;
DROP VIEW mnew_view;
REVOKE ALL ON mold, mnew FROM regress_match_reader;
DROP POLICY mnew_low ON mnew;
DROP POLICY mold_all ON mold;
DROP ROLE regress_match_reader;

-- an index that never held a signature matches nothing
CREATE TABLE mempty (id int, sig minhash);
CREATE INDEX mempty_sig ON mempty USING lsh (sig);
SELECT count(*) FROM minhash_match('mempty_sig', 'id', 'mnew', 'id', 'sig');

-- the pending list merged while minhash_match runs (here by the batch view,
-- after the call has read the list): each pair is still returned once, also
-- when the smallest work_mem verifies the candidates in several rounds (60
-- copies of 20 signatures: 1200 pairs, 2400 candidates, rounds of 1024)
CREATE TABLE mmerge (id int, sig minhash);
CREATE INDEX mmerge_sig ON mmerge USING lsh (sig) WITH (fastupdate = on);
INSERT INTO mmerge VALUES (0, minhash('a signature that fixes the parameters'::text));
INSERT INTO mmerge SELECT 1000 * c + d, minhash(('document ' || d || ' of the copies, written out at some length')::text)
FROM generate_series(1, 60) c, generate_series(1, 20) d;
CREATE TABLE mmerge_new AS SELECT d AS id, minhash(('document ' || d || ' of the copies, written out at some length')::text) AS sig
FROM generate_series(1, 20) d;
CREATE FUNCTION mmerge_once() RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('mmerge.done', true) IS DISTINCT FROM 'yes' THEN
    PERFORM set_config('mmerge.done', 'yes', false);
    PERFORM minhash_lsh_clean_pending_list('mmerge_sig');
  END IF;
  RETURN true;
END $$;
CREATE VIEW mmerge_view AS SELECT id, sig FROM mmerge_new WHERE mmerge_once();
SET work_mem = '64kB';
SELECT (SELECT pending_rows FROM minhash_lsh_stats('mmerge_sig')) AS pending_before;
SELECT count(*) AS pairs, count(DISTINCT (batch_key, key)) AS distinct_pairs
FROM minhash_match('mmerge_sig', 'id', 'mmerge_view', 'id', 'sig', 0.8);
SELECT (SELECT pending_rows FROM minhash_lsh_stats('mmerge_sig')) AS pending_after;
RESET work_mem;
DROP VIEW mmerge_view;
DROP FUNCTION mmerge_once();
DROP TABLE mmerge, mmerge_new;

DROP FUNCTION mdiff(float8, text, text), mjoin(float8, text);
DROP MATERIALIZED VIEW mmat;
DROP VIEW mview;
DROP TABLE mold, mnew, mpart, mbad, mdocs, mempty, mcopies;
RESET jit;
