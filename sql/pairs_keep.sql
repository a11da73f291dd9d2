-- minhash_clusters(..., keep => 'column', keep_desc => ...): each cluster is
-- named after, and in representative mode built around, the row with the
-- smallest (keep_desc: largest) value of the keep column, NULLs last either
-- way, ties by key. Representative mode guarantees that every member is
-- similar to that row at the threshold; connected components do not.
-- (sql/pairs_clusters_identical.sql checks the clusters against a reference
-- computed from every pair, with large groups of identical signatures.)

-- A chain: row i is the set {2i, ..., 2i + 19}, so rows 1 apart have
-- J = 0.82, 2 apart 0.67, 3 apart 0.54, 4 apart 0.43. At t = 0.6 each row
-- is similar to its neighbours and theirs, and connected components join
-- the whole chain. len: the keep column (the longest is row 13), NULL for
-- rows 5 and 17.
CREATE TABLE kchain (id int PRIMARY KEY, sig minhash, len int);
INSERT INTO kchain
SELECT i, minhash(ARRAY(SELECT generate_series(2 * i, 2 * i + 19))),
       CASE WHEN i IN (5, 17) THEN NULL ELSE 100 - abs(i - 13) * 3 END
FROM generate_series(1, 24) i;
CREATE INDEX kchain_idx ON kchain USING lsh (sig) WITH (threshold = 0.4);

-- each member's similarity to the row its cluster is named after, and
-- whether that row comes first in the cluster by (len, id)
CREATE FUNCTION kchain_report(mode text, keep name, keep_desc boolean)
RETURNS TABLE (clusters bigint, members bigint, min_similarity_to_kept numeric, kept_rows int[], kept_first boolean)
LANGUAGE sql AS $$
  WITH c AS (SELECT * FROM minhash_clusters('kchain_idx', 'id', 0.6, mode => mode, keep => keep,
                                            keep_desc => keep_desc)),
       ranked AS (SELECT c.*, row_number() OVER (PARTITION BY c.cluster_id
                    ORDER BY CASE WHEN keep IS NULL THEN NULL WHEN keep_desc THEN -m.len ELSE m.len END NULLS LAST,
                             c.key) AS r
                  FROM c JOIN kchain m ON m.id = c.key)
  SELECT count(DISTINCT c.cluster_id), count(*),
         round(min(jaccard(k.sig, m.sig))::numeric, 3),
         (SELECT array_agg(DISTINCT cluster_id ORDER BY cluster_id) FROM c)::int[],
         (SELECT bool_and(key = cluster_id) FROM ranked WHERE r = 1)
  FROM c JOIN kchain m ON m.id = c.key JOIN kchain k ON k.id = c.cluster_id $$;

-- connected: one cluster of 24, named by its smallest key or its longest
-- row, whose members are as little as 0 similar to it; representative: every
-- member at least 0.6 similar to the row kept
SELECT 'connected' AS mode, 'key' AS kept_by, * FROM kchain_report('connected', NULL, false)
UNION ALL SELECT 'connected', 'longest', * FROM kchain_report('connected', 'len', true)
UNION ALL SELECT 'representative', 'key', * FROM kchain_report('representative', NULL, false)
UNION ALL SELECT 'representative', 'longest', * FROM kchain_report('representative', 'len', true)
UNION ALL SELECT 'representative', 'shortest', * FROM kchain_report('representative', 'len', false);
-- the longest row (13) is kept with its neighbours within 0.6
SELECT key, cluster_id, round(jaccard(k.sig, m.sig)::numeric, 3) AS similarity_to_kept
FROM minhash_clusters('kchain_idx', 'id', 0.6, mode => 'representative', keep => 'len', keep_desc => true) c
JOIN kchain m ON m.id = c.key JOIN kchain k ON k.id = c.cluster_id
WHERE cluster_id = 13 ORDER BY key;

-- NULLs sort last in both directions: a row with a value is kept before one
-- without; a cluster of NULLs only is named by its smallest key; ties are
-- broken by key.
CREATE TABLE kdup (id int PRIMARY KEY, grp text, sig minhash, added date);
INSERT INTO kdup VALUES
  (1, 'nulls on the smallest ids', minhash(ARRAY[1, 2, 3]), NULL),
  (2, 'nulls on the smallest ids', minhash(ARRAY[1, 2, 3]), '2024-05-01'),
  (3, 'nulls on the smallest ids', minhash(ARRAY[1, 2, 3]), '2024-01-01'),
  (4, 'nulls on the smallest ids', minhash(ARRAY[1, 2, 3]), NULL),
  (5, 'all null', minhash(ARRAY[4, 5, 6]), NULL),
  (6, 'all null', minhash(ARRAY[4, 5, 6]), NULL),
  (7, 'tie', minhash(ARRAY[7, 8, 9]), '2024-03-01'),
  (8, 'tie', minhash(ARRAY[7, 8, 9]), '2024-03-01'),
  (9, 'tie', minhash(ARRAY[7, 8, 9]), '2023-03-01');
CREATE INDEX kdup_idx ON kdup USING lsh (sig);
SELECT d.grp, m.mode, o.keep_desc,
       string_agg(c.key || '->' || c.cluster_id, ' ' ORDER BY c.key) AS clusters
FROM unnest(ARRAY['connected', 'representative']) m(mode),
     unnest(ARRAY[false, true]) o(keep_desc),
     LATERAL minhash_clusters('kdup_idx', 'id', 0.9, mode => m.mode, keep => 'added', keep_desc => o.keep_desc) c
     JOIN kdup d ON d.id = c.key
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;

-- keys of another type (key_type), a text keep column in its collation
-- (C: 'B' < 'a'), the signature itself as keep column (its btree order),
-- and keep = key
ALTER TABLE kdup ADD COLUMN label text COLLATE "C";
UPDATE kdup SET label = CASE id WHEN 2 THEN 'a' WHEN 3 THEN 'B' WHEN 4 THEN 'b' END;
SELECT key, cluster_id FROM minhash_clusters('kdup_idx', 'id', NULL::text, 0.9, keep => 'label')
WHERE key IN ('1', '2', '3', '4') ORDER BY key;
SELECT key, cluster_id FROM minhash_clusters('kdup_idx', 'id', NULL::text, 0.9, keep => 'label', keep_desc => true)
WHERE key IN ('1', '2', '3', '4') ORDER BY key;
SELECT count(*) AS members, count(DISTINCT cluster_id) AS clusters
FROM minhash_clusters('kdup_idx', 'id', 0.9, mode => 'representative', keep => 'sig');
SELECT key, cluster_id FROM minhash_clusters('kdup_idx', 'id', 0.9, keep => 'id', keep_desc => true)
ORDER BY key;

-- The DELETE of a dedup: keep the newest row of each group
BEGIN;
DELETE FROM kdup WHERE id IN (
  SELECT key FROM minhash_clusters('kdup_idx', 'id', 0.9, mode => 'representative',
                                   keep => 'added', keep_desc => true)
  WHERE key <> cluster_id);
SELECT id, grp, added FROM kdup ORDER BY id;
ROLLBACK;

-- with exact => true (an index on minhash(body)): the exact similarity
-- decides the pairs, keep the row; the longest text is kept
CREATE TABLE ktext (id int PRIMARY KEY, body text, len int GENERATED ALWAYS AS (length(body)) STORED);
INSERT INTO ktext (id, body) VALUES
  (1, 'the quick brown fox jumps over the lazy dog near the river bank'),
  (2, 'the quick brown fox jumps over the lazy dog near the river bank today'),
  (3, 'the quick brown fox jumps over the lazy dog near the river bank today and tomorrow'),
  (4, 'an unrelated text about something else entirely, with words of its own');
CREATE INDEX ktext_idx ON ktext USING lsh (minhash(body));
SELECT c.key, c.cluster_id,
       round(jaccard(minhash_shingles(m.body), minhash_shingles(k.body))::numeric, 3) AS exact_to_kept
FROM minhash_clusters('ktext_idx', 'id', 0.6, mode => 'representative', exact => true,
                      keep => 'len', keep_desc => true) c
JOIN ktext m ON m.id = c.key JOIN ktext k ON k.id = c.cluster_id ORDER BY c.key;

-- a partitioned table whose partitions hold the keep column at other
-- positions (a dropped column, a partition attached with its own layout):
-- the same clusters as one table of the same rows
CREATE TABLE kpart (id int, sig minhash, len int) PARTITION BY RANGE (id);
CREATE TABLE kpart_1 PARTITION OF kpart FOR VALUES FROM (1) TO (13);
CREATE TABLE kpart_2 (dropped text, len int, sig minhash, id int);
ALTER TABLE kpart_2 DROP COLUMN dropped;
ALTER TABLE kpart ATTACH PARTITION kpart_2 FOR VALUES FROM (13) TO (100);
INSERT INTO kpart SELECT id, sig, len FROM kchain;
CREATE INDEX kpart_idx ON kpart USING lsh (sig) WITH (threshold = 0.4);
SELECT count(*) AS differences FROM (
  (SELECT * FROM minhash_clusters('kpart_idx', 'id', 0.6, mode => 'representative', keep => 'len', keep_desc => true)
   EXCEPT SELECT * FROM minhash_clusters('kchain_idx', 'id', 0.6, mode => 'representative', keep => 'len', keep_desc => true))
  UNION ALL
  (SELECT * FROM minhash_clusters('kchain_idx', 'id', 0.6, mode => 'representative', keep => 'len', keep_desc => true)
   EXCEPT SELECT * FROM minhash_clusters('kpart_idx', 'id', 0.6, mode => 'representative', keep => 'len', keep_desc => true))) d;
SELECT count(*) AS members, count(DISTINCT cluster_id) AS clusters
FROM minhash_clusters('kpart_idx', 'id', 0.6, mode => 'representative', keep => 'len', keep_desc => true);

-- Errors
\set VERBOSITY default
SELECT * FROM minhash_clusters('kdup_idx', 'id', keep => 'nosuch');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_clusters('kdup_idx', 'id', keep_desc => true);
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE kdup ADD COLUMN spot point;
SELECT * FROM minhash_clusters('kdup_idx', 'id', keep => 'spot');
\echo :LAST_ERROR_SQLSTATE
-- a NULL keep is no keep; keep_desc => false without keep is the default
SELECT count(*) FROM minhash_clusters('kdup_idx', 'id', keep => NULL, keep_desc => false);
-- the keep column is read: SELECT on it is needed, as for the key
CREATE ROLE regress_keep_reader;
GRANT SELECT (id, sig) ON kdup TO regress_keep_reader;
SET ROLE regress_keep_reader;
SELECT count(*) FROM minhash_clusters('kdup_idx', 'id', 0.9);
SELECT count(*) FROM minhash_clusters('kdup_idx', 'id', 0.9, keep => 'added');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT SELECT (added) ON kdup TO regress_keep_reader;
SET ROLE regress_keep_reader;
SELECT count(*) FROM minhash_clusters('kdup_idx', 'id', 0.9, keep => 'added');
RESET ROLE;
REVOKE ALL ON kdup FROM regress_keep_reader;
DROP ROLE regress_keep_reader;

-- The shared library still serves 1.0's signature, without keep (an
-- installation updated to this library before ALTER EXTENSION UPDATE)
CREATE FUNCTION pg_temp.clusters_1_0(index regclass, key_column name,
                                     threshold double precision DEFAULT NULL,
                                     mode text DEFAULT 'connected', exact boolean DEFAULT false,
                                     text_column name DEFAULT NULL, unit text DEFAULT NULL,
                                     k integer DEFAULT NULL)
    RETURNS TABLE (key bigint, cluster_id bigint)
    AS '$libdir/minhash', 'minhash_clusters' LANGUAGE C STABLE;
SELECT count(*) AS differences FROM (
  (SELECT * FROM pg_temp.clusters_1_0('kchain_idx', 'id', 0.6, 'representative')
   EXCEPT SELECT * FROM minhash_clusters('kchain_idx', 'id', 0.6, 'representative'))
  UNION ALL
  (SELECT * FROM minhash_clusters('kchain_idx', 'id', 0.6, 'representative')
   EXCEPT SELECT * FROM pg_temp.clusters_1_0('kchain_idx', 'id', 0.6, 'representative'))) d;

DROP FUNCTION kchain_report;
DROP TABLE kchain, kdup, ktext, kpart;
