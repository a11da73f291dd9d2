-- minhash_similar(sig, q, t): the threshold in the query. IMMUTABLE (so
-- postgres_fdw can ship it), and indexable: its planner support function
-- turns it into the lsh index condition sig %>= ROW(q, t)::minhash_query.

-- 50 groups of 10: within a group the m-th member drops m of 60 shared
-- elements for its own (Jaccard from about 0.7 to 1 with the group's first)
CREATE TABLE lt (id int, sig minhash);
INSERT INTO lt
SELECT g * 10 + m, minhash(ARRAY(SELECT g * 1000 + j FROM generate_series(m + 1, 60) j)
                           || ARRAY(SELECT -(g * 1000 + m * 10 + j) FROM generate_series(1, m) j))
FROM generate_series(1, 50) g, generate_series(0, 9) m;
CREATE INDEX lt_sig ON lt USING lsh (sig);
ANALYZE lt;

SELECT p.provolatile, p.proisstrict, p.prosupport::regproc
FROM pg_proc p WHERE p.oid = 'minhash_similar(minhash, minhash, double precision)'::regprocedure;
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'minhash_ops';

-- the index condition, with the indexed column on either side (its plans:
-- lsh_explain); the estimate of rows is %'s (1%), not the 1/3 of an unknown
-- boolean function (a table this small is read sequentially otherwise)
CREATE FUNCTION lt_plan_rows(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN ' || q LOOP RETURN (regexp_match(l, 'rows=(\d+)'))[1]::int; END LOOP;
END $$;
-- the two forms estimate alike at the same threshold
SET minhash.similarity_threshold = 0.8;
SELECT lt_plan_rows('SELECT id FROM lt WHERE minhash_similar(sig, minhash(ARRAY[1,2,3]), 0.8)') AS threshold_form,
       lt_plan_rows('SELECT id FROM lt WHERE sig % minhash(ARRAY[1,2,3])') AS percent_operator;
RESET minhash.similarity_threshold;

-- the same rows as % at minhash.similarity_threshold = t, through the index and without it
SET minhash.similarity_threshold = 0.8;
SELECT array_agg(id ORDER BY id) FROM lt WHERE sig % (SELECT sig FROM lt WHERE id = 100);
RESET minhash.similarity_threshold;
SELECT array_agg(id ORDER BY id) FROM lt WHERE minhash_similar(sig, (SELECT sig FROM lt WHERE id = 100), 0.8);
SELECT array_agg(id ORDER BY id) FROM lt WHERE minhash_similar(sig, (SELECT sig FROM lt WHERE id = 100), 0.95);
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT array_agg(id ORDER BY id) FROM lt WHERE minhash_similar(sig, (SELECT sig FROM lt WHERE id = 100), 0.8);
RESET enable_indexscan;
RESET enable_bitmapscan;
-- an index scan (not bitmap) too
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT array_agg(id ORDER BY id) FROM lt WHERE minhash_similar(sig, (SELECT sig FROM lt WHERE id = 100), 0.8);
-- with ORDER BY <%> LIMIT: the index narrows, the sort orders the few candidates
SELECT id, round((sig <%> (SELECT sig FROM lt WHERE id = 100))::numeric, 3) AS distance
FROM lt WHERE minhash_similar(sig, (SELECT sig FROM lt WHERE id = 100), 0.5)
ORDER BY sig <%> (SELECT sig FROM lt WHERE id = 100), id LIMIT 3;
RESET enable_bitmapscan;
RESET enable_seqscan;

-- the operator itself
SELECT count(*) FROM lt WHERE sig %>= ROW((SELECT sig FROM lt WHERE id = 100), 0.8)::minhash_query;
SELECT '1:[5,1]'::minhash %>= ROW('1:[5,8]'::minhash, 0.5)::minhash_query AS half,
       '1:[5,1]'::minhash %>= ROW('1:[5,8]'::minhash, 0.6)::minhash_query AS above;

-- NULLs: strict function; a NULL field of the query matches nothing
SELECT minhash_similar(NULL, '1:[5,1]', 0.5), minhash_similar('1:[5,1]', '1:[5,1]', NULL);
SELECT count(*) FROM lt WHERE minhash_similar(sig, (SELECT sig FROM lt WHERE id = 100), NULL);
SELECT count(*) FROM lt WHERE sig %>= ROW(NULL::minhash, 0.5)::minhash_query;
SELECT count(*) FROM lt WHERE sig %>= ROW((SELECT sig FROM lt WHERE id = 100), NULL)::minhash_query;

-- a threshold outside [0, 1]: an error, in the function and in the index scan
SELECT minhash_similar('1:[5,1]', '1:[5,1]', 1.5);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_similar('1:[5,1]', '1:[5,1]', 'NaN');
\echo :LAST_ERROR_SQLSTATE
SET enable_seqscan = off;
SELECT count(*) FROM lt WHERE minhash_similar(sig, (SELECT sig FROM lt WHERE id = 100), -0.1);
\echo :LAST_ERROR_SQLSTATE
RESET enable_seqscan;
-- different hash families are an error, as for %
SELECT minhash_similar('1:[5,1]', minhash_from_array(ARRAY[5,1]::bigint[], 2), 0.5);
\echo :LAST_ERROR_SQLSTATE

-- scans are counted in pg_stat_user_indexes (wait for this backend's counters)
SELECT pg_stat_force_next_flush();
SELECT idx_scan > 0 AS counted FROM pg_stat_user_indexes WHERE indexrelname = 'lt_sig';

DROP FUNCTION lt_plan_rows(text);
DROP TABLE lt;
