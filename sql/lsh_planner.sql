-- The planner and the lsh index: a scan with nothing to look up is never
-- chosen (not even under enable_seqscan = off, which used to make the index's
-- old "disabled" cost look cheaper than a disabled sequential scan), and
-- ORDER BY <%> with a NULL query behaves as a sequential scan and sort does.
-- The plans, whose display differs between majors, are in lsh_explain; here
-- the rows they return.

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
SELECT count(*) FROM lsh_plan;
-- a partial index whose predicate the query implies: again no condition for it
SELECT count(*) FROM lsh_plan WHERE i > 100;
SELECT i FROM lsh_plan WHERE sig IS NULL;
-- ORDER BY something the index does not order by
SELECT i FROM lsh_plan WHERE i > 100 ORDER BY i LIMIT 1;
-- what the index answers, it still gets
SELECT i FROM lsh_plan WHERE sig % (SELECT minhash(ARRAY[5, 6, 7, 8])) ORDER BY i;
SELECT i FROM lsh_plan WHERE i > 100 AND sig % (SELECT minhash(ARRAY[500, 501, 502, 503])) ORDER BY i;
SELECT i FROM lsh_plan ORDER BY sig <%> (SELECT minhash(ARRAY[5, 6, 7, 8])) LIMIT 1;
RESET enable_seqscan;

-- ORDER BY sig <%> NULL: every distance is NULL, so a sequential scan and
-- sort returns rows (any of them, in any order). The index, reached through
-- a parameter of a generic plan, does the same: every live row it holds,
-- with NULL distances. (A literal NULL is folded away by the planner.)
SELECT count(*) AS rows, count(DISTINCT i) AS distinct_rows, count(d) AS non_null_distances
FROM (SELECT i, sig <%> NULL AS d FROM lsh_plan ORDER BY sig <%> NULL LIMIT 50) x;
SET plan_cache_mode = force_generic_plan;
PREPARE near(minhash) AS
  SELECT count(*) AS rows, count(DISTINCT i) AS distinct_rows, count(d) AS non_null_distances
  FROM (SELECT i, sig <%> $1 AS d FROM lsh_plan ORDER BY sig <%> $1 LIMIT 50) x;
SET enable_seqscan = off;
EXECUTE near(NULL);
-- a LIMIT beyond the table: every row with a signature; rows with a NULL
-- signature are not in the index (the sequential scan returns them too)
PREPARE near_all(minhash) AS
  SELECT count(*) AS rows, count(*) FILTER (WHERE sig IS NOT NULL) AS signed_rows
  FROM (SELECT i, sig FROM lsh_plan ORDER BY sig <%> $1 LIMIT 5000) x;
EXPLAIN (COSTS OFF) EXECUTE near_all(NULL);
EXECUTE near_all(NULL);
RESET enable_seqscan;
SELECT count(*) AS rows, count(*) FILTER (WHERE sig IS NOT NULL) AS signed_rows
FROM (SELECT i, sig FROM lsh_plan ORDER BY sig <%> NULL LIMIT 5000) x;
-- deleted rows are not returned
DELETE FROM lsh_plan WHERE i > 1000;
SET enable_seqscan = off;
EXECUTE near_all(NULL);
RESET enable_seqscan;
-- with a % condition: its rows, in any order (all distances NULL); a NULL %
-- argument matches nothing, through the index as through the operator
PREPARE sim_near(minhash, minhash) AS
  SELECT array_agg(i ORDER BY i) AS rows
  FROM (SELECT i FROM lsh_plan WHERE sig % $1 ORDER BY sig <%> $2 LIMIT 10) x;
-- (bitmap scans off: % now estimates few rows, and a sort of them is cheap)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXECUTE sim_near(minhash(ARRAY[5, 6, 7, 8]), NULL);
EXECUTE sim_near(NULL, minhash(ARRAY[5, 6, 7, 8]));
RESET enable_bitmapscan;
RESET enable_seqscan;
SELECT array_agg(i ORDER BY i) AS rows
FROM (SELECT i FROM lsh_plan WHERE sig % minhash(ARRAY[5, 6, 7, 8]) ORDER BY sig <%> NULL LIMIT 10) x;
DEALLOCATE near;
DEALLOCATE near_all;
DEALLOCATE sim_near;
RESET plan_cache_mode;

DROP TABLE lsh_plan;
