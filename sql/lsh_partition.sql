-- lsh indexes on a partitioned table: CREATE INDEX on the parent gives every
-- partition its own lsh index (also partitions created or attached later),
-- queries through the parent use them, and the check and stats functions
-- refuse the partitioned index itself (it has no storage) with a pointer to
-- the partitions' indexes.

-- 100 groups of 20 rows spread over both partitions: a group's rows share 50
-- elements and have one of their own (Jaccard 50/52 = 0.96 within a group,
-- 0 across groups)
CREATE TABLE lsh_part (id int, grp int, sig minhash) PARTITION BY RANGE (id);
CREATE TABLE lsh_part_a PARTITION OF lsh_part FOR VALUES FROM (0) TO (1000);
CREATE TABLE lsh_part_b PARTITION OF lsh_part FOR VALUES FROM (1000) TO (2000);
INSERT INTO lsh_part
SELECT id, id % 100, minhash(ARRAY(SELECT (id % 100) * 1000 + j FROM generate_series(1, 50) j) || (1000000 + id))
FROM generate_series(0, 1999) id;
CREATE INDEX lsh_part_sig ON lsh_part USING lsh (sig);
ANALYZE lsh_part;

SELECT c.relname, c.relkind, a.amname, t.isleaf
FROM pg_partition_tree('lsh_part_sig') t JOIN pg_class c ON c.oid = t.relid JOIN pg_am a ON a.oid = c.relam
ORDER BY c.relname;

-- the partitioned index itself: a clear error, not a false corruption report
SELECT * FROM minhash_lsh_check('lsh_part_sig');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_check('lsh_part_sig', heapallindexed => true);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_stats('lsh_part_sig');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_lsh_clean_pending_list('lsh_part_sig');
\echo :LAST_ERROR_SQLSTATE
-- the partitions' indexes, as the hint says
SELECT relid::regclass, minhash_lsh_check(relid, true) FROM pg_partition_tree('lsh_part_sig') WHERE isleaf;
SELECT t.relid::regclass AS index, s.bands, s.rows, s.live_rows
FROM pg_partition_tree('lsh_part_sig') t, minhash_lsh_stats(t.relid) s WHERE t.isleaf ORDER BY 1;

-- queries through the parent use each partition's index and return what a
-- sequential scan returns: the query's group, from both partitions
-- (the plans: lsh_explain)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS found, count(*) FILTER (WHERE grp = 10) AS in_group, min(id), max(id)
FROM lsh_part WHERE sig % (SELECT sig FROM lsh_part WHERE id = 1010);
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT count(*) AS found, count(*) FILTER (WHERE grp = 10) AS in_group
FROM lsh_part WHERE sig % (SELECT sig FROM lsh_part WHERE id = 1010);
RESET enable_indexscan;
-- ORDER BY <%> LIMIT: each partition's index returns its rows in order of
-- distance, merged across partitions. The statement run is the one
-- lsh_explain explains: rows are numbered as they come out of Merge Append.
-- Ties within the group make ids ambiguous, so ids are shown as "in the
-- query's group" and the distances, in order, are compared with a
-- sequential scan's.
CREATE TEMP TABLE part_near_index AS
SELECT row_number() OVER () AS pos, * FROM (
  SELECT id, sig <%> (SELECT sig FROM lsh_part WHERE id = 1010) AS distance
  FROM lsh_part ORDER BY sig <%> (SELECT sig FROM lsh_part WHERE id = 1010) LIMIT 5) s;
RESET enable_seqscan;
SELECT pos, id = 1010 AS is_query, id % 100 = 10 AS in_group, round(distance::numeric, 4) AS distance
FROM part_near_index ORDER BY pos;
-- the reference: a sequential scan and a sort
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT (SELECT array_agg(distance ORDER BY pos) FROM part_near_index)
     = (SELECT array_agg(distance) FROM (
          SELECT sig <%> (SELECT sig FROM lsh_part WHERE id = 1010) AS distance
          FROM lsh_part ORDER BY 1 LIMIT 5) s) AS same_distances_same_order,
       (SELECT bool_and(n.distance = l.sig <%> q.sig) FROM part_near_index n
          JOIN lsh_part l ON l.id = n.id, lsh_part q WHERE q.id = 1010) AS distances_of_the_rows;
-- every row finds itself through the index, the same pairs as a sequential
-- scan (pinned: no index or bitmap scan may produce the reference)
CREATE TEMP TABLE part_by_seq AS
SELECT q.id AS qid, d.id AS rid FROM lsh_part q, LATERAL (
  SELECT d.id FROM lsh_part d WHERE d.sig % q.sig OFFSET 0) d;
RESET enable_bitmapscan;
RESET enable_indexscan;
SET enable_seqscan = off;
CREATE TEMP TABLE part_by_index AS
SELECT q.id AS qid, d.id AS rid FROM lsh_part q, LATERAL (
  SELECT d.id FROM lsh_part d WHERE d.sig % q.sig OFFSET 0) d;
RESET enable_seqscan;
SELECT (SELECT count(*) FROM part_by_seq) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM part_by_seq EXCEPT SELECT * FROM part_by_index) x) AS missed_by_index,
       (SELECT count(*) FROM (SELECT * FROM part_by_index EXCEPT SELECT * FROM part_by_seq) x) AS extra_in_index;

-- partitions created or attached later get their own lsh index; rows
-- inserted through the parent are found through it
CREATE TABLE lsh_part_c PARTITION OF lsh_part FOR VALUES FROM (2000) TO (3000);
CREATE TABLE lsh_part_d (id int, grp int, sig minhash);
INSERT INTO lsh_part_d SELECT id, id % 100, minhash(ARRAY(SELECT (id % 100) * 1000 + j FROM generate_series(1, 50) j) || (1000000 + id))
FROM generate_series(3000, 3099) id;
ALTER TABLE lsh_part ATTACH PARTITION lsh_part_d FOR VALUES FROM (3000) TO (4000);
INSERT INTO lsh_part SELECT id, id % 100, minhash(ARRAY(SELECT (id % 100) * 1000 + j FROM generate_series(1, 50) j) || (1000000 + id))
FROM generate_series(2000, 2099) id;
SELECT c.relname, a.amname
FROM pg_partition_tree('lsh_part_sig') t JOIN pg_class c ON c.oid = t.relid JOIN pg_am a ON a.oid = c.relam
WHERE t.isleaf ORDER BY c.relname;
SET enable_seqscan = off;
SELECT count(*) AS found, array_agg(DISTINCT id / 1000 ORDER BY id / 1000) AS partitions
FROM lsh_part WHERE sig % (SELECT sig FROM lsh_part WHERE id = 10);
RESET enable_seqscan;
SELECT relid::regclass, minhash_lsh_check(relid, true) FROM pg_partition_tree('lsh_part_sig') WHERE isleaf;

DROP TABLE lsh_part, part_by_seq, part_by_index, part_near_index;
