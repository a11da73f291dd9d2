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

-- The plan the planner picks, with default settings, for each form of
-- similarity query, on tables of 2,000 and 20,000 rows (half of them in
-- clusters of 10 near-duplicates, the rest unrelated) and on one whose rows
-- share large clusters: the lsh index for every form but ORDER BY without a
-- LIMIT. bench/planner_choice.sh times such plans against the forced
-- alternatives (BENCHMARKS.md, "Planner choice"). Shown as the scans of pl_docs, outer first: lsh (Index Scan or Bitmap
-- Index Scan on its lsh index), seq, pkey (its primary key).
CREATE FUNCTION pl_scans(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
  scans text;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON, COSTS OFF) ' || query INTO plan;
  WITH RECURSIVE n(node, path) AS (
    SELECT plan -> 0 -> 'Plan', ARRAY[0]
    UNION ALL
    SELECT c.value, n.path || c.ordinality::int
    FROM n, jsonb_array_elements(n.node -> 'Plans') WITH ORDINALITY c)
  SELECT string_agg(CASE WHEN node ->> 'Index Name' = 'pl_docs_sig' THEN 'lsh'
                         WHEN node ->> 'Index Name' = 'pl_docs_pkey' THEN 'pkey'
                         ELSE 'seq' END, ', ' ORDER BY path)
  INTO scans FROM n
  WHERE node ->> 'Index Name' LIKE 'pl_docs_%'
     OR (node ->> 'Relation Name' = 'pl_docs' AND node ->> 'Node Type' LIKE '%Seq Scan');
  RETURN scans;
END $$;
CREATE FUNCTION pl_choices(ts float8[]) RETURNS TABLE (t float8, query text, scans text)
LANGUAGE plpgsql AS $$
BEGIN
  FOREACH t IN ARRAY ts LOOP
    PERFORM set_config('minhash.similarity_threshold', t::text, true);
    query := 'sig % q';
    scans := pl_scans('SELECT id FROM pl_docs WHERE sig % (SELECT sig FROM pl_probe WHERE pid = 1)');
    RETURN NEXT;
    query := 'minhash_similar(sig, q, t)';
    scans := pl_scans(format('SELECT id FROM pl_docs WHERE minhash_similar(sig, (SELECT sig FROM pl_probe WHERE pid = 1), %s)', t));
    RETURN NEXT;
    query := 'join of 100 probes';
    scans := pl_scans('SELECT p.pid, d.id FROM pl_probe p JOIN pl_docs d ON d.sig % p.sig');
    RETURN NEXT;
    query := 'join, minhash_similar';
    scans := pl_scans(format('SELECT p.pid, d.id FROM pl_probe p JOIN pl_docs d ON minhash_similar(d.sig, p.sig, %s)', t));
    RETURN NEXT;
    query := 'self-join a.id < b.id';
    scans := pl_scans('SELECT a.id, b.id FROM pl_docs a JOIN pl_docs b ON a.id < b.id AND a.sig % b.sig');
    RETURN NEXT;
  END LOOP;
  t := NULL;
  query := 'LATERAL ORDER BY <%> LIMIT 10';
  scans := pl_scans('SELECT p.pid, x.id FROM pl_probe p, LATERAL (SELECT id FROM pl_docs d ORDER BY d.sig <%> p.sig LIMIT 10) x');
  RETURN NEXT;
  -- without a LIMIT the index is not used (it returns at most
  -- minhash.lsh_max_scan_tuples rows)
  query := 'ORDER BY <%> without LIMIT';
  scans := pl_scans('SELECT id FROM pl_docs ORDER BY sig <%> (SELECT sig FROM pl_probe WHERE pid = 1)');
  RETURN NEXT;
END $$;

-- cluster c's variant v replaces 3v of its 60 elements (similarity to
-- variant 0: (60 - 3v) / (60 + 3v), 0.9 down to 0.38)
CREATE TABLE pl_docs (id int PRIMARY KEY, sig minhash) WITH (autovacuum_enabled = off);
INSERT INTO pl_docs
SELECT c * 10 + v, minhash(ARRAY(SELECT c * 100 + j FROM generate_series(3 * v + 1, 60) j)
                           || ARRAY(SELECT -(c * 100 + 10 * v + j) FROM generate_series(1, 3 * v) j))
FROM generate_series(1, 100) c, generate_series(0, 9) v;
INSERT INTO pl_docs SELECT 100000 + i, minhash(ARRAY(SELECT 10000000 + i * 100 + j FROM generate_series(1, 60) j))
FROM generate_series(1, 1000) i;
CREATE INDEX pl_docs_sig ON pl_docs USING lsh (sig);
CREATE TABLE pl_probe AS
  SELECT (row_number() OVER (ORDER BY hashint4(id), id))::int AS pid, sig
  FROM pl_docs ORDER BY hashint4(id), id LIMIT 100;
VACUUM ANALYZE pl_docs;
VACUUM ANALYZE pl_probe;
SELECT count(*) AS rows FROM pl_docs;
SELECT * FROM pl_choices(ARRAY[0.3, 0.5, 0.9]);

TRUNCATE pl_docs;
DROP INDEX pl_docs_sig;
INSERT INTO pl_docs
SELECT c * 10 + v, minhash(ARRAY(SELECT c * 100 + j FROM generate_series(3 * v + 1, 60) j)
                           || ARRAY(SELECT -(c * 100 + 10 * v + j) FROM generate_series(1, 3 * v) j))
FROM generate_series(1, 1000) c, generate_series(0, 9) v;
INSERT INTO pl_docs SELECT 100000 + i, minhash(ARRAY(SELECT 10000000 + i * 100 + j FROM generate_series(1, 60) j))
FROM generate_series(1, 10000) i;
CREATE INDEX pl_docs_sig ON pl_docs USING lsh (sig);
TRUNCATE pl_probe;
INSERT INTO pl_probe
  SELECT (row_number() OVER (ORDER BY hashint4(id), id))::int, sig
  FROM pl_docs ORDER BY hashint4(id), id LIMIT 100;
VACUUM ANALYZE pl_docs;
VACUUM ANALYZE pl_probe;
SELECT count(*) AS rows FROM pl_docs;
SELECT * FROM pl_choices(ARRAY[0.3, 0.5, 0.9]);

-- Large clusters (4,000 of 8,000 rows in 20 groups of 200 near-duplicates,
-- as documents sharing boilerplate): a probe finds its cluster through most
-- of the 30 bands, but verifies each row once. Priced per band, as the
-- estimate once did, the candidates made a sequential scan look cheaper
-- (6.0 ms against 0.6 ms through the index, at 0.5 and 0.9).
TRUNCATE pl_docs;
DROP INDEX pl_docs_sig;
INSERT INTO pl_docs
SELECT c * 1000 + v, minhash(ARRAY(SELECT c * 100000 + j FROM generate_series(1, 200 - v % 40) j)
                             || ARRAY(SELECT -(c * 100000 + v * 100 + j) FROM generate_series(1, v % 40) j))
FROM generate_series(1, 20) c, generate_series(0, 199) v;
INSERT INTO pl_docs SELECT 1000000 + i, minhash(ARRAY(SELECT i * 1000 + j FROM generate_series(1, 200) j))
FROM generate_series(1, 4000) i;
CREATE INDEX pl_docs_sig ON pl_docs USING lsh (sig);
TRUNCATE pl_probe;
INSERT INTO pl_probe
  SELECT (row_number() OVER (ORDER BY hashint4(id), id))::int, sig
  FROM pl_docs WHERE id < 1000000 ORDER BY hashint4(id), id LIMIT 100;
VACUUM ANALYZE pl_docs;
VACUUM ANALYZE pl_probe;
SELECT t, query, scans FROM pl_choices(ARRAY[0.5, 0.9]) WHERE query IN ('sig % q', 'join of 100 probes');

DROP TABLE pl_docs, pl_probe;
DROP FUNCTION pl_choices(float8[]);
DROP FUNCTION pl_scans(text);
