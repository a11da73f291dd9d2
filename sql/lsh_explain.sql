-- The plans of lsh scans, as EXPLAIN shows them, for the tests whose
-- display differs between PostgreSQL majors: 17 shows an InitPlan's value as
-- (InitPlan 1).col1; 18 also counts buffers and index searches in EXPLAIN
-- ANALYZE, shows row counts with two decimals, marks disabled nodes and
-- plans some scans of enable_seqscan = off differently. They are gathered
-- here, each with the setup of the test it comes from (named in its
-- section), so that this file alone has alternate outputs (lsh_explain_1.out
-- for 17, lsh_explain_2.out for 18). The tests they come from check the
-- rows those plans return.

-- lsh_build: plans of %, ORDER BY <%> LIMIT and a bitmap scan
CREATE TABLE lsh_docs (id int PRIMARY KEY, grp int, elems int[], sig minhash);
INSERT INTO lsh_docs
SELECT g * 10 + v, g,
       ARRAY(SELECT g * 1000 + j FROM generate_series(1 + 2 * greatest(v - 1, 0), 100) j)
       || ARRAY(SELECT g * 1000 + 500 + 10 * v + j FROM generate_series(1, 2 * greatest(v - 1, 0)) j)
FROM generate_series(1, 150) g, generate_series(0, 4) v;
UPDATE lsh_docs SET sig = minhash(elems);
INSERT INTO lsh_docs VALUES (9001, NULL, NULL, NULL), (9002, NULL, NULL, NULL);
CREATE INDEX lsh_docs_sig ON lsh_docs USING lsh (sig);
ANALYZE lsh_docs;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_docs WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 10);
EXPLAIN (COSTS OFF) SELECT id FROM lsh_docs ORDER BY sig <%> (SELECT sig FROM lsh_docs WHERE id = 10) LIMIT 5;
RESET enable_bitmapscan;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_docs WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 10);
RESET enable_indexscan;
RESET enable_seqscan;
-- lsh_build: % and ORDER BY together: one index scan that both filters
-- (Index Cond) and orders (Order By); the reference, a sequential scan plus
-- sort
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) CREATE TEMP TABLE both_index AS
SELECT row_number() OVER () AS pos, * FROM (
  SELECT id, sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) AS distance
  FROM lsh_docs WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 73)
  ORDER BY sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) LIMIT 10) s;
RESET enable_seqscan;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT id, sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) AS distance
FROM lsh_docs WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 73)
ORDER BY sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) LIMIT 10;
RESET enable_indexscan;
RESET enable_bitmapscan;
DROP TABLE lsh_docs;
-- lsh_build: an expression index over text. Left alone, the planner picks
-- the expression index for % and for ORDER BY <%> LIMIT even on 120 rows: a
-- sequential scan would recompute minhash(text) (COST 1000) for every row,
-- the index has the signatures stored
CREATE TABLE lsh_text (id int PRIMARY KEY, body text);
INSERT INTO lsh_text
SELECT i, 'report ' || i % 40 || ' on the state of item ' || i % 40 || ' written in week ' || i % 40
          || CASE WHEN i > 40 THEN ' with one note appended' ELSE '' END
FROM generate_series(1, 120) i;
CREATE INDEX lsh_text_body ON lsh_text USING lsh (minhash(body));
ANALYZE lsh_text;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_text WHERE minhash(body) % (SELECT minhash('report 7 on the state of item 7 written in week 7'::text));
EXPLAIN (COSTS OFF) SELECT id FROM lsh_text ORDER BY minhash(body) <%> (SELECT minhash('report 7 on the state of item 7 written in week 7'::text)) LIMIT 2;
-- the same answer from a sequential scan
SET enable_indexscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_text WHERE minhash(body) % (SELECT minhash('report 7 on the state of item 7 written in week 7'::text));
RESET enable_bitmapscan;
RESET enable_indexscan;
DROP TABLE lsh_text;

-- lsh_forest: the scans use the index, at the depth the threshold asks for
-- (the counters of EXPLAIN ANALYZE)
CREATE TABLE lf (id int PRIMARY KEY, c int, m int, sig minhash);
INSERT INTO lf SELECT c * 32 + m, c, m,
       minhash(ARRAY(SELECT 100000 + c * 1000 + j FROM generate_series(m * 3 + 1, 100) j)
               || ARRAY(SELECT -(c * 1000 + m * 100 + j) FROM generate_series(1, m * 3) j))
FROM generate_series(1, 60) c, generate_series(0, 19) m;
INSERT INTO lf SELECT 10000 + i, NULL, NULL,
       minhash(ARRAY(SELECT e FROM generate_series(1, 200) e ORDER BY hashint4(e * 7919 + i) LIMIT 40))
FROM generate_series(1, 3000) i;
CREATE INDEX lf_sig5 ON lf USING lsh (sig) WITH (threshold = 0.5);
ANALYZE lf;
SELECT sig AS q FROM lf WHERE id = 32 * 7 \gset
SET enable_seqscan = off;
SET minhash.similarity_threshold = 0.3;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM lf WHERE sig % :'q';
SET minhash.similarity_threshold = 0.5;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM lf WHERE sig % :'q';
SET minhash.similarity_threshold = 0.9;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM lf WHERE sig % :'q';
-- minhash.lsh_recall trades recall for speed: a lower target probes deeper
SET minhash.similarity_threshold = 0.3;
SET minhash.lsh_recall = 0.6;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM lf WHERE sig % :'q';
RESET minhash.lsh_recall;
RESET minhash.similarity_threshold;
RESET enable_seqscan;
-- lsh_forest: ORDER BY <%> LIMIT k widens until it has k rows, even where
-- fewer rows share a band with the query
SELECT sig AS b FROM lf WHERE id = 10007 \gset
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT id FROM lf ORDER BY sig <%> :'b' LIMIT 5;
-- lsh_forest: minhash.lsh_max_scan_tuples bounds the widening (it checks
-- the bound between stages: here depths 4, 3 and 2 verified 938 signatures)
SET minhash.lsh_max_scan_tuples = 500;
SET enable_seqscan = off;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT id FROM lf ORDER BY sig <%> :'b' LIMIT 1000;
RESET enable_seqscan;
RESET minhash.lsh_max_scan_tuples;
-- lsh_forest: two indexes on one column, for 0.5 and 0.8: a query at 0.5
-- plans on the 0.5 index, and a scan with two % conditions probes one
CREATE INDEX lf_sig8 ON lf USING lsh (sig) WITH (threshold = 0.8);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET minhash.similarity_threshold = 0.5;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT id FROM lf WHERE sig % :'q' AND sig % :'q';
RESET minhash.similarity_threshold;
RESET enable_bitmapscan;
RESET enable_seqscan;
DROP TABLE lf;

-- lsh_heapvisits: a bitmap scan holds only the 3 verified rows, one heap
-- block, of 2003 candidates
CREATE TABLE lsh_hv (id int, sig minhash);
INSERT INTO lsh_hv SELECT i, minhash_from_array(ARRAY(SELECT generate_series(1, 128)::int8))
FROM generate_series(1, 3) i;
INSERT INTO lsh_hv SELECT i, minhash_from_array(
    ARRAY(SELECT generate_series(1, 4)::int8)
    || ARRAY(SELECT 1000000 + i * 1000 + j FROM generate_series(5, 128) j)::int8[])
FROM generate_series(4, 2003) i;
CREATE INDEX lsh_hv_sig ON lsh_hv USING lsh (sig) WITH (bands = 32, rows = 4);
ANALYZE lsh_hv;
CREATE FUNCTION hv_q() RETURNS minhash LANGUAGE sql STABLE
  AS $$ SELECT minhash_from_array(ARRAY(SELECT generate_series(1, 128)::int8)) $$;
SET enable_seqscan = off;
SET enable_indexscan = off;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM lsh_hv WHERE sig % hv_q();
RESET enable_indexscan;
RESET enable_seqscan;
DROP TABLE lsh_hv;
DROP FUNCTION hv_q();

-- lsh_partition: queries through the parent use each partition's index
CREATE TABLE lsh_part (id int, grp int, sig minhash) PARTITION BY RANGE (id);
CREATE TABLE lsh_part_a PARTITION OF lsh_part FOR VALUES FROM (0) TO (1000);
CREATE TABLE lsh_part_b PARTITION OF lsh_part FOR VALUES FROM (1000) TO (2000);
INSERT INTO lsh_part
SELECT id, id % 100, minhash(ARRAY(SELECT (id % 100) * 1000 + j FROM generate_series(1, 50) j) || (1000000 + id))
FROM generate_series(0, 1999) id;
CREATE INDEX lsh_part_sig ON lsh_part USING lsh (sig);
ANALYZE lsh_part;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_part WHERE sig % (SELECT sig FROM lsh_part WHERE id = 1010);
RESET enable_bitmapscan;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_part WHERE sig % (SELECT sig FROM lsh_part WHERE id = 1010);
RESET enable_indexscan;
-- lsh_partition: ORDER BY <%> LIMIT: each partition's index returns its rows
-- in order of distance, merged across partitions (Merge Append); the
-- reference, a sequential scan and a sort
EXPLAIN (COSTS OFF) CREATE TEMP TABLE part_near_index AS
SELECT row_number() OVER () AS pos, * FROM (
  SELECT id, sig <%> (SELECT sig FROM lsh_part WHERE id = 1010) AS distance
  FROM lsh_part ORDER BY sig <%> (SELECT sig FROM lsh_part WHERE id = 1010) LIMIT 5) s;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT sig <%> (SELECT sig FROM lsh_part WHERE id = 1010) AS distance
FROM lsh_part ORDER BY 1 LIMIT 5;
RESET enable_bitmapscan;
RESET enable_indexscan;
DROP TABLE lsh_part;

-- lsh_pending: a scan of an index with rows in its pending list
CREATE TABLE lsh_pend (id int PRIMARY KEY, sig minhash) WITH (autovacuum_enabled = off);
INSERT INTO lsh_pend SELECT i, minhash(ARRAY[(i / 3) * 100, (i / 3) * 100 + 1, (i / 3) * 100 + 2,
    (i / 3) * 100 + 3, (i / 3) * 100 + 4, (i / 3) * 100 + 5, (i / 3) * 100 + 6, 1000000 + i])
FROM generate_series(0, 299) i;
CREATE INDEX lsh_pend_sig ON lsh_pend USING lsh (sig) WITH (fastupdate = on);
INSERT INTO lsh_pend SELECT i, minhash(ARRAY[(i / 3 - 100) * 100, (i / 3 - 100) * 100 + 1,
    (i / 3 - 100) * 100 + 2, (i / 3 - 100) * 100 + 3, (i / 3 - 100) * 100 + 4,
    (i / 3 - 100) * 100 + 5, (i / 3 - 100) * 100 + 6, 1000000 + i])
FROM generate_series(300, 599) i;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_pend WHERE sig % (SELECT sig FROM lsh_pend WHERE id = 450);
RESET enable_bitmapscan;
RESET enable_seqscan;
DROP TABLE lsh_pend;

-- lsh_planner: a scan with nothing to look up is never chosen (not even
-- under enable_seqscan = off; from 18 on a Bitmap Heap Scan does not count
-- its index path's disabled nodes, so one is planned then, and the index
-- returns every heap page, lossy)
CREATE TABLE lsh_plan (i int, sig minhash) WITH (autovacuum_enabled = off);
INSERT INTO lsh_plan SELECT i, minhash(ARRAY[i, i + 1, i + 2, i + 3]) FROM generate_series(1, 2000) i;
INSERT INTO lsh_plan VALUES (0, NULL);
CREATE INDEX lsh_plan_sig ON lsh_plan USING lsh (sig);
CREATE INDEX lsh_plan_part ON lsh_plan USING lsh (sig) WHERE i > 100;
-- all-visible pages make an index-only scan (no heap visits) look cheap
VACUUM ANALYZE lsh_plan;
SET enable_seqscan = off;
-- count(*) needs no column: the planner offers an index-only scan without
-- conditions, which the index cannot run
EXPLAIN (COSTS OFF) SELECT count(*) FROM lsh_plan;
-- a partial index whose predicate the query implies: again no condition for it
EXPLAIN (COSTS OFF) SELECT count(*) FROM lsh_plan WHERE i > 100;
EXPLAIN (COSTS OFF) SELECT i FROM lsh_plan WHERE sig IS NULL;
-- ORDER BY something the index does not order by
EXPLAIN (COSTS OFF) SELECT i FROM lsh_plan WHERE i > 100 ORDER BY i LIMIT 1;
-- what the index answers, it still gets
EXPLAIN (COSTS OFF) SELECT i FROM lsh_plan WHERE sig % (SELECT minhash(ARRAY[5, 6, 7, 8]));
EXPLAIN (COSTS OFF) SELECT i FROM lsh_plan WHERE i > 100 AND sig % (SELECT minhash(ARRAY[500, 501, 502, 503]));
EXPLAIN (COSTS OFF) SELECT i FROM lsh_plan ORDER BY sig <%> (SELECT minhash(ARRAY[5, 6, 7, 8])) LIMIT 1;
RESET enable_seqscan;
-- lsh_planner: ORDER BY sig <%> NULL, through a parameter of a generic plan
SET plan_cache_mode = force_generic_plan;
PREPARE near(minhash) AS
  SELECT count(*) AS rows, count(DISTINCT i) AS distinct_rows, count(d) AS non_null_distances
  FROM (SELECT i, sig <%> $1 AS d FROM lsh_plan ORDER BY sig <%> $1 LIMIT 50) x;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) EXECUTE near(NULL);
RESET enable_seqscan;
DELETE FROM lsh_plan WHERE i > 1000;
-- with a % condition (bitmap scans off: % now estimates few rows, and a
-- sort of them is cheap)
PREPARE sim_near(minhash, minhash) AS
  SELECT array_agg(i ORDER BY i) AS rows
  FROM (SELECT i FROM lsh_plan WHERE sig % $1 ORDER BY sig <%> $2 LIMIT 10) x;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) EXECUTE sim_near(minhash(ARRAY[5, 6, 7, 8]), NULL);
RESET enable_bitmapscan;
RESET enable_seqscan;
DEALLOCATE near;
DEALLOCATE sim_near;
RESET plan_cache_mode;
DROP TABLE lsh_plan;

-- lsh_recall: the planner, left alone, picks the index for a selective %
-- and for ORDER BY <%> LIMIT on 11000 rows, and a sequential scan plus sort
-- for ORDER BY <%> without LIMIT (which must return every row);
-- minhash.lsh_min_candidates keeps the plan
CREATE TABLE lsh_planted (id int PRIMARY KEY, c int, m int, elems int[], sig minhash);
INSERT INTO lsh_planted
SELECT c * 100 + m, c, m,
       ARRAY(SELECT c * 100000 + j FROM generate_series(m + 1, 100) j)
       || ARRAY(SELECT c * 100000 + 1000 + m * 100 + j FROM generate_series(1, m) j)
FROM generate_series(1, 1000) c, unnest(ARRAY[0, 4, 8, 12, 16, 20, 25, 30, 40, 50, 60]) m;
UPDATE lsh_planted SET sig = minhash(elems);
CREATE INDEX lsh_planted_sig ON lsh_planted USING lsh (sig);
ANALYZE lsh_planted;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_planted WHERE sig % (SELECT sig FROM lsh_planted WHERE id = 500);
EXPLAIN (COSTS OFF) SELECT id FROM lsh_planted ORDER BY sig <%> (SELECT sig FROM lsh_planted WHERE id = 500) LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_planted ORDER BY sig <%> (SELECT sig FROM lsh_planted WHERE id = 500);
SET minhash.lsh_min_candidates = 10;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_planted ORDER BY sig <%> (SELECT sig FROM lsh_planted WHERE id = 500) LIMIT 10;
RESET minhash.lsh_min_candidates;
DROP TABLE lsh_planted;

-- lsh_threshold: minhash_similar(sig, q, t) becomes the index condition, with
-- the indexed column on either side; as a bitmap scan and as an index scan
CREATE TABLE lt (id int, sig minhash);
INSERT INTO lt
SELECT g * 10 + m, minhash(ARRAY(SELECT g * 1000 + j FROM generate_series(m + 1, 60) j)
                           || ARRAY(SELECT -(g * 1000 + m * 10 + j) FROM generate_series(1, m) j))
FROM generate_series(1, 50) g, generate_series(0, 9) m;
CREATE INDEX lt_sig ON lt USING lsh (sig);
ANALYZE lt;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM lt WHERE minhash_similar(sig, (SELECT sig FROM lt WHERE id = 100), 0.8);
EXPLAIN (COSTS OFF) SELECT id FROM lt WHERE minhash_similar((SELECT sig FROM lt WHERE id = 100), sig, 0.8);
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM lt WHERE minhash_similar(sig, (SELECT sig FROM lt WHERE id = 100), 0.8);
RESET enable_bitmapscan;
RESET enable_seqscan;
DROP TABLE lt;

-- pairs_partition: the threshold form through a partitioned table: each
-- partition's index, and partition pruning; ORDER BY <%> LIMIT, a Merge
-- Append of the partitions' index scans
CREATE TABLE pp_plain (id int, grp int, sig minhash);
INSERT INTO pp_plain
SELECT c * 10 + m, c,
       minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(m + 1, 100) j) || ARRAY[-(c * 10 + m)])
FROM generate_series(1, 60) c, generate_series(0, 4) m;
INSERT INTO pp_plain SELECT 10000 + i, NULL, minhash(ARRAY(SELECT 10000000 + i * 1000 + j FROM generate_series(1, 50) j))
FROM generate_series(1, 100) i;
CREATE INDEX pp_plain_idx ON pp_plain USING lsh (sig);
CREATE TABLE pp (id int, grp int, sig minhash) PARTITION BY HASH (id);
CREATE TABLE pp_0 PARTITION OF pp FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE pp_1 PARTITION OF pp FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE pp_2 PARTITION OF pp FOR VALUES WITH (MODULUS 3, REMAINDER 2) PARTITION BY RANGE (id);
CREATE TABLE pp_2_lo PARTITION OF pp_2 FOR VALUES FROM (MINVALUE) TO (300);
CREATE TABLE pp_2_hi PARTITION OF pp_2 FOR VALUES FROM (300) TO (MAXVALUE);
INSERT INTO pp SELECT * FROM pp_plain;
CREATE INDEX pp_idx ON pp USING lsh (sig);
INSERT INTO pp SELECT 20000 + i, -1, minhash(ARRAY[1, 2, 3, 4, 5]) FROM generate_series(1, 600) i;
DELETE FROM pp WHERE id > 20000;
VACUUM ANALYZE pp;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM pp WHERE minhash_similar(sig, (SELECT sig FROM pp_plain WHERE id = 100), 0.5);
EXPLAIN (COSTS OFF)
SELECT id FROM pp WHERE minhash_similar(sig, (SELECT sig FROM pp_plain WHERE id = 100), 0.5) AND id = 101;
EXPLAIN (COSTS OFF)
SELECT id FROM pp ORDER BY sig <%> (SELECT sig FROM pp_plain WHERE id = 100) LIMIT 5;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE pp, pp_plain;
