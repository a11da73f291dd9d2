-- The lsh index: build, scans against sequential scans, NULLs, inserts
-- after the build, expression indexes, an empty table (the plans of these
-- scans: lsh_explain).
-- Where LSH recall is certain (near-identical rows), the index must return
-- exactly what a sequential scan returns.

-- 150 groups of 5 rows: a base set of 100 elements, an exact duplicate, and
-- variants with 2, 4, 6 of the elements replaced (Jaccard 0.96, 0.92, 0.89 to
-- the base); different groups share nothing.
CREATE TABLE lsh_docs (id int PRIMARY KEY, grp int, elems int[], sig minhash);
INSERT INTO lsh_docs
SELECT g * 10 + v, g,
       ARRAY(SELECT g * 1000 + j FROM generate_series(1 + 2 * greatest(v - 1, 0), 100) j)
       || ARRAY(SELECT g * 1000 + 500 + 10 * v + j FROM generate_series(1, 2 * greatest(v - 1, 0)) j)
FROM generate_series(1, 150) g, generate_series(0, 4) v;
UPDATE lsh_docs SET sig = minhash(elems);
-- rows the index must not return: NULL signatures
INSERT INTO lsh_docs VALUES (9001, NULL, NULL, NULL), (9002, NULL, NULL, NULL);

CREATE INDEX lsh_docs_sig ON lsh_docs USING lsh (sig);
SELECT num_perm, seed, bands, rows, threshold, height, live_rows, dead_rows, entries = live_rows * bands AS one_entry_per_band
FROM minhash_lsh_stats('lsh_docs_sig');
SELECT * FROM minhash_lsh_check('lsh_docs_sig');
ANALYZE lsh_docs;

-- every row as a query: the index (index scan and bitmap scan) against a
-- sequential scan (pinned: no index or bitmap scan may produce the
-- reference); identical result sets
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE by_seq AS
SELECT q.id AS qid, d.id AS rid FROM lsh_docs q, LATERAL (
  SELECT d.id FROM lsh_docs d WHERE d.sig % q.sig OFFSET 0) d WHERE q.sig IS NOT NULL;
RESET enable_bitmapscan;
RESET enable_indexscan;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE by_index AS
SELECT q.id AS qid, d.id AS rid FROM lsh_docs q, LATERAL (
  SELECT d.id FROM lsh_docs d WHERE d.sig % q.sig OFFSET 0) d WHERE q.sig IS NOT NULL;
RESET enable_bitmapscan;
SET enable_indexscan = off;
CREATE TEMP TABLE by_bitmap AS
SELECT q.id AS qid, d.id AS rid FROM lsh_docs q, LATERAL (
  SELECT d.id FROM lsh_docs d WHERE d.sig % q.sig OFFSET 0) d WHERE q.sig IS NOT NULL;
RESET enable_indexscan;
RESET enable_seqscan;
SELECT (SELECT count(*) FROM by_seq) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM by_seq EXCEPT SELECT * FROM by_index) x) AS missed_by_index,
       (SELECT count(*) FROM (SELECT * FROM by_index EXCEPT SELECT * FROM by_seq) x) AS extra_in_index,
       (SELECT count(*) FROM (SELECT * FROM by_seq EXCEPT SELECT * FROM by_bitmap) x) AS missed_by_bitmap,
       (SELECT count(*) FROM (SELECT * FROM by_bitmap EXCEPT SELECT * FROM by_seq) x) AS extra_in_bitmap,
       (SELECT count(*) FROM by_index) = (SELECT count(DISTINCT (qid, rid)) FROM by_index) AS no_duplicates;
-- every match is in the query's own group
SELECT count(*) AS cross_group FROM by_seq s JOIN lsh_docs a ON a.id = s.qid JOIN lsh_docs b ON b.id = s.rid
WHERE a.grp <> b.grp;

-- ORDER BY <%> LIMIT: the group first, closest first, distances as the operator computes them
SET enable_seqscan = off;
SELECT id, sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) AS distance
FROM lsh_docs ORDER BY sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) LIMIT 5;
RESET enable_seqscan;
SELECT id, sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) AS distance
FROM lsh_docs ORDER BY sig <%> (SELECT sig FROM lsh_docs WHERE id = 72), id LIMIT 5;
-- % and ORDER BY together: one index scan that both filters (Index Cond)
-- and orders (Order By; the plan: lsh_explain); the same rows and distances, in the same order of
-- distance, as a sequential scan plus sort
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE both_index AS
SELECT row_number() OVER () AS pos, * FROM (
  SELECT id, sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) AS distance
  FROM lsh_docs WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 73)
  ORDER BY sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) LIMIT 10) s;
RESET enable_seqscan;
SET enable_indexscan = off;
CREATE TEMP TABLE both_seq AS
SELECT id, sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) AS distance
FROM lsh_docs WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 73)
ORDER BY sig <%> (SELECT sig FROM lsh_docs WHERE id = 72) LIMIT 10;
RESET enable_indexscan;
RESET enable_bitmapscan;
-- (rows numbered as the index returned them; shown by distance, then id,
-- since rows at equal distance may come in either order)
SELECT id, round(distance::numeric, 4) AS distance FROM both_index ORDER BY distance, id;
SELECT (SELECT count(*) FROM both_seq) AS rows_seq,
       (SELECT count(*) FROM (SELECT id, distance FROM both_index EXCEPT SELECT * FROM both_seq) x) AS extra_in_index,
       (SELECT count(*) FROM (SELECT * FROM both_seq EXCEPT SELECT id, distance FROM both_index) x) AS missed_by_index,
       (SELECT bool_and(a.distance <= b.distance) FROM both_index a JOIN both_index b ON b.pos = a.pos + 1) AS in_distance_order;

-- the threshold is read when the scan starts
SET enable_seqscan = off;
SET minhash.similarity_threshold = 0.95;
SELECT id FROM lsh_docs WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 100) ORDER BY id;
SET minhash.similarity_threshold = 0.5;
SELECT id FROM lsh_docs WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 100) ORDER BY id;
RESET minhash.similarity_threshold;

-- A NULL % query matches nothing; ORDER BY <%> NULL puts every row at a NULL
-- distance, so any rows qualify, as with a sort: the index returns its rows
-- in heap order (a generic plan keeps the index scan; see lsh_planner)
SET plan_cache_mode = force_generic_plan;
PREPARE sim(minhash) AS SELECT id FROM lsh_docs WHERE sig % $1;
PREPARE near(minhash) AS SELECT id FROM lsh_docs ORDER BY sig <%> $1 LIMIT 3;
EXPLAIN (COSTS OFF) EXECUTE sim(NULL);
EXECUTE sim(NULL);
EXPLAIN (COSTS OFF) EXECUTE near(NULL);
EXECUTE near(NULL);
DEALLOCATE sim;
DEALLOCATE near;
RESET plan_cache_mode;
-- NULL rows are not indexed and never returned
SELECT count(*) AS null_rows_found FROM lsh_docs WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 20) AND sig IS NULL;
RESET enable_seqscan;

-- inserts after the build: new groups are found through the index
INSERT INTO lsh_docs
SELECT g * 10 + v, g,
       ARRAY(SELECT g * 1000 + j FROM generate_series(1 + 2 * greatest(v - 1, 0), 100) j)
       || ARRAY(SELECT g * 1000 + 500 + 10 * v + j FROM generate_series(1, 2 * greatest(v - 1, 0)) j)
FROM generate_series(151, 400) g, generate_series(0, 4) v;
UPDATE lsh_docs SET sig = minhash(elems) WHERE grp > 150;
-- (fastupdate is on by default: rows still pending have no entries yet)
SELECT live_rows, dead_rows, pending_rows > 0 AS pending, entries = (live_rows + dead_rows - pending_rows) * bands AS one_entry_per_band
FROM minhash_lsh_stats('lsh_docs_sig');
SELECT * FROM minhash_lsh_check('lsh_docs_sig');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id FROM lsh_docs WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 3990) ORDER BY id;
SELECT count(*) AS found_own_row FROM lsh_docs q
WHERE q.sig IS NOT NULL AND q.id IN (SELECT d.id FROM lsh_docs d WHERE d.sig % q.sig);
RESET enable_bitmapscan;
RESET enable_seqscan;

-- an expression index over text
CREATE TABLE lsh_text (id int PRIMARY KEY, body text);
INSERT INTO lsh_text
SELECT i, 'report ' || i % 40 || ' on the state of item ' || i % 40 || ' written in week ' || i % 40
          || CASE WHEN i > 40 THEN ' with one note appended' ELSE '' END
FROM generate_series(1, 120) i;
CREATE INDEX lsh_text_body ON lsh_text USING lsh (minhash(body));
ANALYZE lsh_text;
-- left alone, the planner picks the expression index for % and for ORDER BY
-- <%> LIMIT even on 120 rows (lsh_explain)
SELECT id FROM lsh_text WHERE minhash(body) % (SELECT minhash('report 7 on the state of item 7 written in week 7'::text)) ORDER BY id;
SELECT id FROM lsh_text ORDER BY minhash(body) <%> (SELECT minhash('report 7 on the state of item 7 written in week 7'::text)) LIMIT 2;
-- the same answer from a sequential scan
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT id FROM lsh_text WHERE minhash(body) % (SELECT minhash('report 7 on the state of item 7 written in week 7'::text)) ORDER BY id;
RESET enable_bitmapscan;
RESET enable_indexscan;

-- an empty table: k is learned from the first row (or the typmod)
CREATE TABLE lsh_empty (id int, sig minhash);
CREATE INDEX lsh_empty_sig ON lsh_empty USING lsh (sig);
SELECT num_perm, bands, rows, height, pages, live_rows FROM minhash_lsh_stats('lsh_empty_sig');
SET enable_seqscan = off;
SELECT * FROM lsh_empty WHERE sig % minhash(ARRAY[1, 2, 3]);
SELECT * FROM lsh_empty ORDER BY sig <%> minhash(ARRAY[1, 2, 3]) LIMIT 1;
INSERT INTO lsh_empty VALUES (1, minhash(ARRAY[1, 2, 3], 64)), (2, minhash(ARRAY[1, 2, 3, 4], 64)), (3, NULL);
SELECT num_perm, bands, rows, height, live_rows FROM minhash_lsh_stats('lsh_empty_sig');
SELECT id FROM lsh_empty WHERE sig % minhash(ARRAY[1, 2, 3], 64) ORDER BY id;
SELECT * FROM minhash_lsh_check('lsh_empty_sig');
RESET enable_seqscan;
CREATE TABLE lsh_typmod (id int, sig minhash(32));
CREATE INDEX lsh_typmod_sig ON lsh_typmod USING lsh (sig) WITH (threshold = 0.8);
INSERT INTO lsh_typmod VALUES (1, minhash(ARRAY[1, 2, 3], 32));
SELECT num_perm, bands, rows, round(threshold::numeric, 2) AS threshold, live_rows FROM minhash_lsh_stats('lsh_typmod_sig');

-- an unlogged table gets its index's init fork from ambuildempty
CREATE UNLOGGED TABLE lsh_unlogged (id int, sig minhash);
CREATE INDEX lsh_unlogged_sig ON lsh_unlogged USING lsh (sig);
INSERT INTO lsh_unlogged SELECT id, sig FROM lsh_docs WHERE grp = 5;
SET enable_seqscan = off;
SELECT id FROM lsh_unlogged WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 50) ORDER BY id;
RESET enable_seqscan;
SELECT * FROM minhash_lsh_check('lsh_unlogged_sig');
-- and takes fast inserts (no WAL for its pending list and merge either)
ALTER INDEX lsh_unlogged_sig SET (fastupdate = on);
INSERT INTO lsh_unlogged SELECT id, sig FROM lsh_docs WHERE grp = 6;
SELECT pending_rows > 0 AS rows_pending FROM minhash_lsh_stats('lsh_unlogged_sig');
SET enable_seqscan = off;
SELECT id FROM lsh_unlogged WHERE sig % (SELECT sig FROM lsh_docs WHERE id = 60) ORDER BY id;
RESET enable_seqscan;
SELECT minhash_lsh_clean_pending_list('lsh_unlogged_sig') > 0 AS merged;
SELECT * FROM minhash_lsh_check('lsh_unlogged_sig', true);

-- REINDEX rebuilds the same content, also CONCURRENTLY (whose validation
-- pass goes through ambulkdelete and then inserts what the build missed)
REINDEX INDEX lsh_docs_sig;
SELECT live_rows, entries = live_rows * bands AS one_entry_per_band FROM minhash_lsh_stats('lsh_docs_sig');
SELECT * FROM minhash_lsh_check('lsh_docs_sig');
REINDEX INDEX CONCURRENTLY lsh_docs_sig;
CREATE INDEX CONCURRENTLY lsh_docs_sig2 ON lsh_docs USING lsh (sig);
SELECT live_rows, entries = live_rows * bands AS one_entry_per_band FROM minhash_lsh_stats('lsh_docs_sig2');
SELECT * FROM minhash_lsh_check('lsh_docs_sig');
SELECT * FROM minhash_lsh_check('lsh_docs_sig2');

DROP TABLE lsh_docs, lsh_text, lsh_empty, lsh_typmod, lsh_unlogged, both_index, both_seq;

-- An UPDATE that changes the signatures (another family, width or k) and a
-- build in the same transaction: the old row versions, deleted by it but
-- still seen by other snapshots, come first in the table. They neither
-- decide the index's parameters nor fail the build; the new rows are found.
-- The same with a parallel build, and with 16-bit signatures.
CREATE TABLE lsh_redo (id int PRIMARY KEY, elems int[], sig minhash);
INSERT INTO lsh_redo
SELECT g, e, minhash(e) FROM generate_series(1, 600) g,
       LATERAL (SELECT array_agg(g / 3 * 100 + i) e FROM generate_series(1, 30) i) a;
BEGIN;
UPDATE lsh_redo SET sig = minhash(elems, 'oph'::minhash_family);
CREATE INDEX lsh_redo_sig ON lsh_redo USING lsh (sig);
SELECT num_perm, live_rows FROM minhash_lsh_stats('lsh_redo_sig');
SELECT * FROM minhash_lsh_check('lsh_redo_sig', true);
SET LOCAL enable_seqscan = off;
SELECT count(*) AS similar_by_index FROM lsh_redo a JOIN lsh_redo b ON a.sig % b.sig;
COMMIT;
SELECT count(*) AS similar_by_seqscan FROM lsh_redo a JOIN lsh_redo b ON minhash_similar(a.sig, b.sig, 0.5);
DROP INDEX lsh_redo_sig;
BEGIN;
UPDATE lsh_redo SET sig = minhash(elems, bits => 16);
SET LOCAL max_parallel_maintenance_workers = 2;
SET LOCAL min_parallel_table_scan_size = 0;
ALTER TABLE lsh_redo SET (parallel_workers = 2);
CREATE INDEX lsh_redo_sig ON lsh_redo USING lsh (sig);
SELECT num_perm, live_rows FROM minhash_lsh_stats('lsh_redo_sig');
SELECT * FROM minhash_lsh_check('lsh_redo_sig', true);
COMMIT;
-- a live row that holds another signature still fails it
DROP INDEX lsh_redo_sig;
INSERT INTO lsh_redo VALUES (601, '{1}', minhash('{1}'::int[]));
CREATE INDEX lsh_redo_sig ON lsh_redo USING lsh (sig);
DROP TABLE lsh_redo;
