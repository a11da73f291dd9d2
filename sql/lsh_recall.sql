-- Recall of the lsh index on planted near-duplicates of known Jaccard, and
-- the planner's choice on a table of some size.
--
-- 1000 clusters; each has variants of a 100-element base set with m elements
-- replaced by new ones, m in (0, 4, 8, 12, 16, 20, 25, 30, 40, 50, 60). Two
-- variants of a cluster share 100 - max(m) elements, so their Jaccard is
-- (100 - max(m)) / (100 + max(m)): from 1 down to 0.25. Clusters share nothing.
CREATE TABLE lsh_planted (id int PRIMARY KEY, c int, m int, elems int[], sig minhash);
INSERT INTO lsh_planted
SELECT c * 100 + m, c, m,
       ARRAY(SELECT c * 100000 + j FROM generate_series(m + 1, 100) j)
       || ARRAY(SELECT c * 100000 + 1000 + m * 100 + j FROM generate_series(1, m) j)
FROM generate_series(1, 1000) c, unnest(ARRAY[0, 4, 8, 12, 16, 20, 25, 30, 40, 50, 60]) m;
UPDATE lsh_planted SET sig = minhash(elems);
CREATE INDEX lsh_planted_sig ON lsh_planted USING lsh (sig);
ANALYZE lsh_planted;

-- the known Jaccard of each within-cluster pair (checked against the exact function)
CREATE TEMP TABLE truth AS
SELECT a.id AS a, b.id AS b, (100.0 - greatest(a.m, b.m)) / (100 + greatest(a.m, b.m)) AS j
FROM lsh_planted a JOIN lsh_planted b ON a.c = b.c AND a.id < b.id;
SELECT count(*) AS pairs, bool_and(abs(t.j - jaccard(x.elems, y.elems)) < 1e-9) AS jaccard_known
FROM truth t JOIN lsh_planted x ON x.id = t.a JOIN lsh_planted y ON y.id = t.b;

-- every row as a query through the index, at the default threshold 0.5
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE found AS
SELECT q.id AS a, d.id AS b FROM lsh_planted q, LATERAL (
  SELECT d.id FROM lsh_planted d WHERE d.sig % q.sig OFFSET 0) d WHERE q.id < d.id;
RESET enable_bitmapscan;
RESET enable_seqscan;
-- >= 0.99 of the pairs with Jaccard >= 0.6 found; none below 0.4 returned
SELECT count(*) AS pairs_above, count(f.a) >= 0.99 * count(*) AS recall_at_least_099
FROM truth t LEFT JOIN found f USING (a, b) WHERE t.j >= 0.6;
SELECT count(*) AS returned_below
FROM found f LEFT JOIN truth t USING (a, b) WHERE coalesce(t.j, 0) < 0.4;
-- recall by Jaccard: certain at 0.72 and above
SELECT round(t.j, 2) AS jaccard, count(*) AS pairs, count(f.a) = count(*) AS all_found
FROM truth t LEFT JOIN found f USING (a, b) WHERE t.j >= 0.7 GROUP BY 1 ORDER BY 1;
-- and what the index returns is exactly what % says
SELECT count(*) AS wrong FROM found f JOIN lsh_planted x ON x.id = f.a JOIN lsh_planted y ON y.id = f.b
WHERE NOT x.sig % y.sig;

-- the same at threshold 0.8: >= 0.99 of the pairs with Jaccard >= 0.9. Below
-- 0.7 the index returns exactly the pairs whose estimate reaches 0.8 anyway:
-- at k = 128 the estimate's noise (sd 0.04 at Jaccard 0.67) lets a few
-- through, with or without the index.
CREATE INDEX lsh_planted_sig8 ON lsh_planted USING lsh (sig) WITH (threshold = 0.8);
DROP INDEX lsh_planted_sig;
SET minhash.similarity_threshold = 0.8;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE found8 AS
SELECT q.id AS a, d.id AS b FROM lsh_planted q, LATERAL (
  SELECT d.id FROM lsh_planted d WHERE d.sig % q.sig OFFSET 0) d WHERE q.id < d.id;
RESET enable_bitmapscan;
RESET enable_seqscan;
SELECT count(*) AS pairs_above, count(f.a) >= 0.99 * count(*) AS recall_at_least_099
FROM truth t LEFT JOIN found8 f USING (a, b) WHERE t.j >= 0.9;
SELECT count(*) FILTER (WHERE t.j IS NULL OR t.j < 0.6) AS returned_below_06,
       count(*) FILTER (WHERE t.j < 0.7) = (SELECT count(*) FROM truth t JOIN lsh_planted x ON x.id = t.a
                                            JOIN lsh_planted y ON y.id = t.b WHERE t.j < 0.7 AND x.sig % y.sig)
         AS below_07_as_the_operator
FROM found8 f LEFT JOIN truth t USING (a, b);
RESET minhash.similarity_threshold;
DROP INDEX lsh_planted_sig8;

-- the index again, for the planner to choose left alone (its plans:
-- lsh_explain)
CREATE INDEX lsh_planted_sig ON lsh_planted USING lsh (sig);
ANALYZE lsh_planted;

-- ORDER BY <%> LIMIT widens depth by depth until it has the rows: all 10,
-- including the variant at Jaccard 0.43 that shares no whole band with the
-- query (1.0 returned 9 here). minhash.lsh_min_candidates still widens a
-- scan to every stored signature: the exact top 10.
SELECT id FROM lsh_planted ORDER BY sig <%> (SELECT sig FROM lsh_planted WHERE id = 500) LIMIT 10;
SET minhash.lsh_min_candidates = 10;
SELECT id FROM lsh_planted ORDER BY sig <%> (SELECT sig FROM lsh_planted WHERE id = 500) LIMIT 10;
RESET minhash.lsh_min_candidates;
SET enable_indexscan = off;
SELECT id FROM lsh_planted ORDER BY sig <%> (SELECT sig FROM lsh_planted WHERE id = 500), id LIMIT 10;
RESET enable_indexscan;

DROP TABLE lsh_planted;
