-- minhash_similar_pairs / minhash_clusters on a partitioned lsh index: one
-- merge of the partitions' band entries, so pairs across partitions are
-- found, each once, exactly as on one index over the same rows.

-- 60 clusters of 5 near-duplicates (Jaccard about 0.9 within a cluster),
-- cluster c's members have ids c*10+m: hash partitioning spreads every
-- cluster over the partitions. The same rows in a plain table for reference.
CREATE TABLE pp_plain (id int, grp int, sig minhash);
INSERT INTO pp_plain
SELECT c * 10 + m, c,
       minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(m + 1, 100) j) || ARRAY[-(c * 10 + m)])
FROM generate_series(1, 60) c, generate_series(0, 4) m;
-- and 100 rows with nothing in common
INSERT INTO pp_plain SELECT 10000 + i, NULL, minhash(ARRAY(SELECT 10000000 + i * 1000 + j FROM generate_series(1, 50) j))
FROM generate_series(1, 100) i;
CREATE INDEX pp_plain_idx ON pp_plain USING lsh (sig);

CREATE TABLE pp (id int, grp int, sig minhash) PARTITION BY HASH (id);
CREATE TABLE pp_0 PARTITION OF pp FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE pp_1 PARTITION OF pp FOR VALUES WITH (MODULUS 3, REMAINDER 1);
-- a sub-partitioned partition: its leaves are merged too
CREATE TABLE pp_2 PARTITION OF pp FOR VALUES WITH (MODULUS 3, REMAINDER 2) PARTITION BY RANGE (id);
CREATE TABLE pp_2_lo PARTITION OF pp_2 FOR VALUES FROM (MINVALUE) TO (300);
CREATE TABLE pp_2_hi PARTITION OF pp_2 FOR VALUES FROM (300) TO (MAXVALUE);
INSERT INTO pp SELECT * FROM pp_plain;
CREATE INDEX pp_idx ON pp USING lsh (sig);

SELECT tableoid::regclass AS partition, count(*) FROM pp GROUP BY 1 ORDER BY 1;

-- the same pairs as the plain index, none twice, many across partitions
CREATE TEMP TABLE pairs_plain AS SELECT * FROM minhash_similar_pairs('pp_plain_idx', 'id', 0.5);
CREATE TEMP TABLE pairs_part AS SELECT * FROM minhash_similar_pairs('pp_idx', 'id', 0.5);
SELECT (SELECT count(*) FROM pairs_plain) AS plain,
       (SELECT count(*) FROM pairs_part) AS partitioned,
       (SELECT count(*) FROM (SELECT key_a, key_b FROM pairs_part GROUP BY 1, 2 HAVING count(*) > 1) d) AS repeated,
       (SELECT count(*) FROM (SELECT * FROM pairs_plain EXCEPT SELECT * FROM pairs_part) x) AS missing,
       (SELECT count(*) FROM (SELECT * FROM pairs_part EXCEPT SELECT * FROM pairs_plain) x) AS extra;
SELECT count(*) AS cross_partition
FROM pairs_part p JOIN pp a ON a.id = p.key_a JOIN pp b ON b.id = p.key_b
WHERE a.tableoid <> b.tableoid;
-- every pair is within a planted cluster, and all 60 * 10 of them are found
SELECT count(*) AS pairs, count(*) FILTER (WHERE key_a / 10 = key_b / 10) AS in_cluster FROM pairs_part;

-- clusters, both modes, equal the plain index's
SELECT (SELECT count(*) FROM (SELECT * FROM minhash_clusters('pp_plain_idx', 'id', 0.5)
        EXCEPT SELECT * FROM minhash_clusters('pp_idx', 'id', 0.5)) x) AS connected_missing,
       (SELECT count(*) FROM (SELECT * FROM minhash_clusters('pp_idx', 'id', 0.5)
        EXCEPT SELECT * FROM minhash_clusters('pp_plain_idx', 'id', 0.5)) x) AS connected_extra,
       (SELECT count(*) FROM minhash_clusters('pp_idx', 'id', 0.5)) AS members,
       (SELECT count(DISTINCT cluster_id) FROM minhash_clusters('pp_idx', 'id', 0.5)) AS clusters;
SELECT count(*) AS representative_differences FROM (
    (SELECT * FROM minhash_clusters('pp_plain_idx', 'id', 0.5, mode => 'representative')
     EXCEPT SELECT * FROM minhash_clusters('pp_idx', 'id', 0.5, mode => 'representative'))
    UNION ALL
    (SELECT * FROM minhash_clusters('pp_idx', 'id', 0.5, mode => 'representative')
     EXCEPT SELECT * FROM minhash_clusters('pp_plain_idx', 'id', 0.5, mode => 'representative'))) x;
-- keys of another type, through the partitions' own columns
SELECT count(*) FROM minhash_similar_pairs('pp_idx', 'id', key_type => NULL::text, threshold => 0.5);

-- at the smallest work_mem, with a band group too large for memory: 600
-- identical rows over all partitions (their ids spill to a tuplesort, their
-- signatures are compared chunk against chunk across partitions)
INSERT INTO pp SELECT 20000 + i, -1, minhash(ARRAY[1, 2, 3, 4, 5]) FROM generate_series(1, 600) i;
SET work_mem = '64kB';
SET client_min_messages = debug1;
SELECT count(*) AS pairs, count(*) FILTER (WHERE key_a >= 20000) AS identical,
       bool_and(similarity = 1) FILTER (WHERE key_a >= 20000) AS all_equal
FROM minhash_similar_pairs('pp_idx', 'id', 0.5);
RESET client_min_messages;
RESET work_mem;
DELETE FROM pp WHERE id > 20000;
VACUUM ANALYZE pp;

-- rows the snapshot cannot see are not paired: deleted in one partition
BEGIN;
DELETE FROM pp WHERE id IN (10, 11);
SELECT count(*) AS without_10_11 FROM minhash_similar_pairs('pp_idx', 'id', 0.5);
ROLLBACK;

-- the threshold form through the parent: each partition's index, and
-- partition pruning (the plans: lsh_explain)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT array_agg(id ORDER BY id) FROM pp WHERE minhash_similar(sig, (SELECT sig FROM pp_plain WHERE id = 100), 0.5);
SELECT id FROM pp WHERE minhash_similar(sig, (SELECT sig FROM pp_plain WHERE id = 100), 0.5) AND id = 101;
-- ORDER BY <%> LIMIT: a Merge Append of the partitions' index scans
SELECT array_agg(id ORDER BY id) FROM (
    SELECT id FROM pp ORDER BY sig <%> (SELECT sig FROM pp_plain WHERE id = 100) LIMIT 5) x;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- detach: the detached partition's rows leave the answer; attach: they return
ALTER TABLE pp DETACH PARTITION pp_1;
SELECT (SELECT count(*) FROM minhash_similar_pairs('pp_idx', 'id', 0.5)) =
       (SELECT count(*) FROM pairs_plain p
        WHERE NOT EXISTS (SELECT FROM pp_1 WHERE id IN (p.key_a, p.key_b))) AS detached_ok;
ALTER TABLE pp ATTACH PARTITION pp_1 FOR VALUES WITH (MODULUS 3, REMAINDER 1);
SELECT count(*) AS after_attach,
       (SELECT count(*) FROM (SELECT * FROM pairs_plain EXCEPT SELECT * FROM minhash_similar_pairs('pp_idx', 'id', 0.5)) x) AS missing
FROM minhash_similar_pairs('pp_idx', 'id', 0.5);

-- a partition attached with an lsh index of other bands: its band keys mean
-- something else, so the walk refuses rather than miss pairs
ALTER TABLE pp DETACH PARTITION pp_1;
DROP INDEX pp_1_sig_idx;
CREATE INDEX pp_1_other ON pp_1 USING lsh (sig) WITH (threshold = 0.8);
ALTER TABLE pp ATTACH PARTITION pp_1 FOR VALUES WITH (MODULUS 3, REMAINDER 1);
SELECT count(*) FROM minhash_similar_pairs('pp_idx', 'id', 0.5);
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE pp DETACH PARTITION pp_1;
DROP INDEX pp_1_other;
ALTER TABLE pp ATTACH PARTITION pp_1 FOR VALUES WITH (MODULUS 3, REMAINDER 1);

-- an empty partition (its index never saw a signature) is no obstacle
CREATE TABLE pp_r (id int, grp int, sig minhash) PARTITION BY RANGE (id);
CREATE TABLE pp_r_a PARTITION OF pp_r FOR VALUES FROM (0) TO (1000);
CREATE TABLE pp_r_b PARTITION OF pp_r FOR VALUES FROM (1000) TO (2000);
CREATE INDEX pp_r_idx ON pp_r USING lsh (sig);
SELECT count(*) FROM minhash_similar_pairs('pp_r_idx', 'id', 0.5);
INSERT INTO pp_r SELECT * FROM pp_plain WHERE id < 1000;
SELECT count(*) FROM minhash_similar_pairs('pp_r_idx', 'id', 0.5);

-- privileges: SELECT on the parent suffices, as for a SELECT through it;
-- row-level security on a partition is refused as on the table itself
CREATE ROLE regress_pp_reader;
GRANT SELECT ON pp TO regress_pp_reader;
SET ROLE regress_pp_reader;
SELECT count(*) FROM minhash_similar_pairs('pp_idx', 'id', 0.5);
SELECT count(*) FROM minhash_similar_pairs('pp_plain_idx', 'id', 0.5);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
ALTER TABLE pp_0 ENABLE ROW LEVEL SECURITY;
SET ROLE regress_pp_reader;
SELECT count(*) FROM minhash_similar_pairs('pp_idx', 'id', 0.5);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
ALTER TABLE pp_0 DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON pp FROM regress_pp_reader;
DROP ROLE regress_pp_reader;

-- an index on the parent only (CREATE INDEX ON ONLY) is not valid until
-- every partition's index is attached
CREATE INDEX pp_only_idx ON ONLY pp USING lsh (sig);
SELECT count(*) FROM minhash_similar_pairs('pp_only_idx', 'id', 0.5);
\echo :LAST_ERROR_SQLSTATE
DROP INDEX pp_only_idx;
DROP TABLE pp, pp_r, pp_plain;

-- partitions whose indexes hold signatures of different hash families:
-- equal values of two families are not equal sets (jaccard() refuses
-- them), so the pairs functions refuse the index rather than report a pair
CREATE TABLE pf (id int NOT NULL, sig minhash) PARTITION BY LIST (id);
CREATE TABLE pf_native PARTITION OF pf FOR VALUES IN (1);
CREATE TABLE pf_oph PARTITION OF pf FOR VALUES IN (2);
SELECT string_agg((g * 7919)::text, ',') AS v FROM generate_series(1, 128) g \gset
INSERT INTO pf VALUES (1, ('1:[' || :'v' || ']')::minhash), (2, ('oph:1:[' || :'v' || ']')::minhash);
CREATE INDEX pf_idx ON pf USING lsh (sig);
SELECT * FROM minhash_similar_pairs('pf_idx', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_clusters('pf_idx', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT jaccard(a.sig, b.sig) FROM pf a, pf b WHERE a.id = 1 AND b.id = 2;
DROP TABLE pf;

-- partitions whose signatures have different seeds, negative ones among
-- them: the detail names each seed as minhash_seed() and the text form do
CREATE TABLE ps (id int NOT NULL, sig minhash) PARTITION BY LIST (id);
CREATE TABLE ps_a PARTITION OF ps FOR VALUES IN (1);
CREATE TABLE ps_b PARTITION OF ps FOR VALUES IN (2);
INSERT INTO ps VALUES (1, minhash('one two three', seed => -5)), (2, minhash('one two three', seed => -6));
CREATE INDEX ps_idx ON ps USING lsh (sig);
SELECT * FROM minhash_similar_pairs('ps_idx', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT DISTINCT minhash_seed(sig) FROM ps ORDER BY 1;
DROP TABLE ps;
