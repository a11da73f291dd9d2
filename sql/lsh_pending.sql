-- Fast inserts (fastupdate): rows wait in the pending list, every query
-- still finds them (%, ORDER BY <%> LIMIT, bitmap scans, pairs, clusters),
-- and they reach the tree at the limit, at VACUUM and on demand.

CREATE TABLE lsh_pend (id int PRIMARY KEY, sig minhash) WITH (autovacuum_enabled = off);
-- 300 rows in 100 groups of three near-duplicates (each row shares 7 of 8 elements with its group)
INSERT INTO lsh_pend SELECT i, minhash(ARRAY[(i / 3) * 100, (i / 3) * 100 + 1, (i / 3) * 100 + 2,
    (i / 3) * 100 + 3, (i / 3) * 100 + 4, (i / 3) * 100 + 5, (i / 3) * 100 + 6, 1000000 + i])
FROM generate_series(0, 299) i;
CREATE INDEX lsh_pend_sig ON lsh_pend USING lsh (sig) WITH (fastupdate = on);
-- the option is on by default, as GIN's; an index with it off takes inserts straight into the tree
CREATE INDEX lsh_pend_sig_default ON lsh_pend USING lsh (sig);
CREATE INDEX lsh_pend_sig_off ON lsh_pend USING lsh (sig) WITH (fastupdate = off);
SELECT c.relname, c.reloptions FROM pg_class c WHERE relname LIKE 'lsh_pend_sig%' ORDER BY 1;
CREATE TABLE lsh_pend_expected AS
SELECT a.id AS a, b.id AS b FROM lsh_pend a JOIN lsh_pend b ON a.id < b.id AND a.sig % b.sig;

-- another 300 rows of the same groups: they go to the pending list
INSERT INTO lsh_pend SELECT i, minhash(ARRAY[(i / 3 - 100) * 100, (i / 3 - 100) * 100 + 1,
    (i / 3 - 100) * 100 + 2, (i / 3 - 100) * 100 + 3, (i / 3 - 100) * 100 + 4,
    (i / 3 - 100) * 100 + 5, (i / 3 - 100) * 100 + 6, 1000000 + i])
FROM generate_series(300, 599) i;
SELECT pending_pages, pending_rows, live_rows, entries = (live_rows - pending_rows) * bands AS pending_rows_without_entries
FROM minhash_lsh_stats('lsh_pend_sig');
SELECT pending_pages, pending_rows, entries = live_rows * bands AS all_entries FROM minhash_lsh_stats('lsh_pend_sig_off');
SELECT pending_rows, entries = (live_rows - pending_rows) * bands AS pending_rows_without_entries
FROM minhash_lsh_stats('lsh_pend_sig_default');
SELECT * FROM minhash_lsh_check('lsh_pend_sig_default', true);
SELECT * FROM minhash_lsh_check('lsh_pend_sig', true);

-- every query finds the pending rows as the sequential scan does (the index
-- scan's plan: lsh_explain)
CREATE TABLE lsh_pend_truth AS
SELECT q.id AS q, d.id AS d FROM lsh_pend q, lsh_pend d WHERE d.sig % q.sig;
SET enable_seqscan = off;
DROP INDEX lsh_pend_sig_off;
DROP INDEX lsh_pend_sig_default;
SET enable_bitmapscan = off;
SELECT id FROM lsh_pend WHERE sig % (SELECT sig FROM lsh_pend WHERE id = 450) ORDER BY id;
SELECT count(*) AS index_scan_misses FROM lsh_pend_truth t
WHERE NOT EXISTS (SELECT 1 FROM lsh_pend d WHERE d.sig % (SELECT sig FROM lsh_pend WHERE id = t.q) AND d.id = t.d);
SELECT id, round((sig <%> (SELECT sig FROM lsh_pend WHERE id = 451))::numeric, 3) AS dist
FROM lsh_pend ORDER BY sig <%> (SELECT sig FROM lsh_pend WHERE id = 451), id LIMIT 6;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT id FROM lsh_pend WHERE sig % (SELECT sig FROM lsh_pend WHERE id = 450) ORDER BY id;
RESET enable_indexscan;
RESET enable_seqscan;

-- pairs and clusters pair pending rows with the tree's and with each other
SELECT count(*) AS pairs, count(*) FILTER (WHERE key_a >= 300 AND key_b >= 300) AS both_pending,
       count(*) FILTER (WHERE key_a < 300 AND key_b >= 300) AS tree_and_pending
FROM minhash_similar_pairs('lsh_pend_sig', 'id');
SELECT count(*) AS missing_pairs FROM (
  SELECT a.id AS a, b.id AS b FROM lsh_pend a JOIN lsh_pend b ON a.id < b.id AND a.sig % b.sig
  EXCEPT SELECT key_a, key_b FROM minhash_similar_pairs('lsh_pend_sig', 'id')) m;
SELECT count(DISTINCT cluster_id) AS clusters FROM minhash_clusters('lsh_pend_sig', 'id');

-- the planner's cost counts the pending rows every scan verifies (lsh_cost.cpp)
CREATE FUNCTION lsh_pend_cost() RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    p json;
BEGIN
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_bitmapscan = off;
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT id FROM lsh_pend WHERE sig % (SELECT sig FROM lsh_pend WHERE id = 450)' INTO p;
    RETURN (p -> 0 -> 'Plan' ->> 'Total Cost')::float8;
END $$;
-- with the table's statistics, so that both estimates read the same ones
-- (a manual ANALYZE leaves the pending list alone; autovacuum's would merge it)
ANALYZE lsh_pend;
SELECT pending_rows FROM minhash_lsh_stats('lsh_pend_sig');
CREATE TABLE lsh_pend_cost AS SELECT lsh_pend_cost() AS with_pending;

-- merged on demand: the same answers from the tree alone
SELECT minhash_lsh_clean_pending_list('lsh_pend_sig') AS merged;
SELECT pending_pages, pending_rows, entries = live_rows * bands AS all_entries FROM minhash_lsh_stats('lsh_pend_sig');
SELECT lsh_pend_cost() < with_pending AS cheaper_without_pending FROM lsh_pend_cost;
SELECT minhash_lsh_clean_pending_list('lsh_pend_sig') AS merged_again;
SELECT * FROM minhash_lsh_check('lsh_pend_sig', true);
SET enable_seqscan = off;
SELECT count(*) AS index_scan_misses FROM lsh_pend_truth t
WHERE NOT EXISTS (SELECT 1 FROM lsh_pend d WHERE d.sig % (SELECT sig FROM lsh_pend WHERE id = t.q) AND d.id = t.d);
RESET enable_seqscan;
SELECT count(*) AS missing_pairs FROM (
  SELECT a.id AS a, b.id AS b FROM lsh_pend a JOIN lsh_pend b ON a.id < b.id AND a.sig % b.sig
  EXCEPT SELECT key_a, key_b FROM minhash_similar_pairs('lsh_pend_sig', 'id')) m;

-- VACUUM merges (also with nothing to delete), then removes dead rows
INSERT INTO lsh_pend SELECT id + 1000, sig FROM lsh_pend WHERE id < 100;
SELECT pending_rows FROM minhash_lsh_stats('lsh_pend_sig');
VACUUM lsh_pend;
SELECT pending_rows, live_rows, entries = live_rows * bands AS all_entries FROM minhash_lsh_stats('lsh_pend_sig');
INSERT INTO lsh_pend SELECT id + 2000, sig FROM lsh_pend WHERE id < 100;
DELETE FROM lsh_pend WHERE id >= 1000;
VACUUM lsh_pend;
SELECT pending_rows, live_rows, dead_rows, entries = live_rows * bands AS all_entries FROM minhash_lsh_stats('lsh_pend_sig');
SELECT * FROM minhash_lsh_check('lsh_pend_sig', true);

-- the limit: a small one merges as inserts go (64kB = 126 signatures of k = 128)
ALTER INDEX lsh_pend_sig SET (pending_list_limit = 64);
INSERT INTO lsh_pend SELECT id + 3000, sig FROM lsh_pend WHERE id < 300;
SELECT pending_rows <= 126 AS within_limit, entries = (live_rows - pending_rows) * bands AS rest_in_tree
FROM minhash_lsh_stats('lsh_pend_sig');
SET minhash.lsh_pending_list_limit = 64;
ALTER INDEX lsh_pend_sig RESET (pending_list_limit);
INSERT INTO lsh_pend SELECT id + 4000, sig FROM lsh_pend WHERE id < 300;
SELECT pending_rows <= 126 AS within_limit FROM minhash_lsh_stats('lsh_pend_sig');
RESET minhash.lsh_pending_list_limit;
SELECT * FROM minhash_lsh_check('lsh_pend_sig', true);
-- turned off: inserts go to the tree, the pending rows stay visible until merged
ALTER INDEX lsh_pend_sig SET (fastupdate = off);
INSERT INTO lsh_pend SELECT id + 5000, sig FROM lsh_pend WHERE id < 30;
SELECT pending_rows > 0 AS still_pending, entries = (live_rows - pending_rows) * bands AS new_rows_in_tree
FROM minhash_lsh_stats('lsh_pend_sig');
SET enable_seqscan = off;
SELECT count(*) FROM lsh_pend WHERE sig % (SELECT sig FROM lsh_pend WHERE id = 4001);
RESET enable_seqscan;
SELECT count(*) FROM lsh_pend WHERE sig % (SELECT sig FROM lsh_pend WHERE id = 4001);

-- options and the function's errors
CREATE INDEX lsh_pend_bad ON lsh_pend USING lsh (sig) WITH (pending_list_limit = 10);
CREATE INDEX lsh_pend_bad ON lsh_pend USING lsh (sig) WITH (fastupdate = maybe);
SELECT minhash_lsh_clean_pending_list('lsh_pend_pkey');
SELECT minhash_lsh_clean_pending_list('lsh_pend');
CREATE ROLE lsh_pend_other;
SET ROLE lsh_pend_other;
SELECT minhash_lsh_clean_pending_list('lsh_pend_sig');
RESET ROLE;
DROP ROLE lsh_pend_other;
DROP TABLE lsh_pend, lsh_pend_expected, lsh_pend_truth, lsh_pend_cost;
DROP FUNCTION lsh_pend_cost();
