-- Probe depth (LSH Forest prefixes): LIMIT k returns k rows, % at thresholds
-- below and above the build threshold, the planner's choice between two
-- indexes, and %'s selectivity. (The depths the scans probe, in the counters
-- of EXPLAIN ANALYZE: lsh_explain.)

-- 60 clusters of 20 variants (the m-th replaces 3m of 100 elements: Jaccard
-- 0.27 to 0.97 within a cluster) and 3000 background rows: 40 of a shared
-- vocabulary of 200 (Jaccard about 0.11 between them).
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
SELECT bands, rows FROM minhash_lsh_stats('lf_sig5');
SELECT * FROM minhash_lsh_check('lf_sig5');

-- % at t = 0.3, 0.5 (the design threshold), 0.7 and 0.9: the depth chosen
-- from the S-curve, and recall >= 0.99 on pairs at Jaccard >= t + 0.1 for the
-- 60 queries of variant 0 (the truth: jaccard(), the estimate % uses)
CREATE FUNCTION lf_recall(t float8) RETURNS TABLE (pairs bigint, recall_ok boolean)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('minhash.similarity_threshold', t::text, true);
  PERFORM set_config('enable_seqscan', 'off', true);
  CREATE TEMP TABLE got AS
    SELECT q.id AS qid, x.id FROM lf q CROSS JOIN LATERAL (SELECT id FROM lf d WHERE d.sig % q.sig) x
    WHERE q.m = 0;
  PERFORM set_config('enable_seqscan', 'on', true);
  RETURN QUERY
    SELECT count(*), count(g.id)::float8 / count(*) >= 0.99
    FROM lf q JOIN lf d ON jaccard(q.sig, d.sig) >= t + 0.1
    LEFT JOIN got g ON g.qid = q.id AND g.id = d.id
    WHERE q.m = 0;
  DROP TABLE got;
END $$;
SELECT t, r.* FROM unnest(ARRAY[0.3, 0.5, 0.7, 0.9]) t, LATERAL lf_recall(t) r;
-- the test can fail: a recall target of 0.5 probes whole bands at 0.3 (as
-- 1.0 did at every threshold), and recall at Jaccard >= 0.4 falls short
SET minhash.lsh_recall = 0.5;
SELECT * FROM lf_recall(0.3);
RESET minhash.lsh_recall;

SELECT sig AS q FROM lf WHERE id = 32 * 7 \gset

-- ORDER BY <%> LIMIT k: k rows, nearest first, even where fewer rows share a
-- band with the query (a background row shares a whole band with almost none)
SELECT sig AS b FROM lf WHERE id = 10007 \gset
SELECT count(*) FROM (SELECT id FROM lf ORDER BY sig <%> :'b' LIMIT 50) x;
SELECT count(*) FROM (SELECT id FROM lf ORDER BY sig <%> :'b' LIMIT 10000) x;
-- in exact distance order: the same distances as a sequential scan and sort
CREATE TEMP TABLE by_index AS
  SELECT row_number() OVER () AS n, d FROM (SELECT sig <%> :'b' AS d FROM lf ORDER BY sig <%> :'b' LIMIT 200) x;
SET enable_indexscan = off;
CREATE TEMP TABLE by_sort AS
  SELECT row_number() OVER () AS n, d FROM (SELECT sig <%> :'b' AS d FROM lf ORDER BY sig <%> :'b' LIMIT 200) x;
RESET enable_indexscan;
SELECT count(*) AS rows, count(*) FILTER (WHERE i.d = s.d) AS same_distance
FROM by_index i JOIN by_sort s USING (n);
-- the same through one scan rescanned per outer row (LATERAL): each query's
-- rows and distances equal a sequential scan and sort's, ties in TID order
SET enable_seqscan = off;
CREATE TEMP TABLE lat_index AS
  SELECT q.id AS qid, x.n, x.t, x.d FROM lf q CROSS JOIN LATERAL
    (SELECT row_number() OVER () AS n, t, d FROM
      (SELECT ctid AS t, sig <%> q.sig AS d FROM lf d ORDER BY sig <%> q.sig LIMIT 40) y) x
  WHERE q.id IN (32, 10007, 10500, 1000, 10001);
RESET enable_seqscan;
SET enable_indexscan = off;
CREATE TEMP TABLE lat_sort AS
  SELECT q.id AS qid, x.n, x.t, x.d FROM lf q CROSS JOIN LATERAL
    (SELECT row_number() OVER () AS n, t, d FROM
      (SELECT ctid AS t, sig <%> q.sig AS d FROM lf d ORDER BY sig <%> q.sig, ctid LIMIT 40) y) x
  WHERE q.id IN (32, 10007, 10500, 1000, 10001);
RESET enable_indexscan;
SELECT count(*) AS rows, count(*) FILTER (WHERE i.d = s.d) AS same_distance,
       count(*) FILTER (WHERE i.t = s.t) AS same_row
FROM lat_index i JOIN lat_sort s USING (qid, n);
-- a cluster row: its 19 variants first, then the rest (at distance 1, tied:
-- any of them, whichever plan the planner picks)
SELECT array_agg(c ORDER BY n) FILTER (WHERE n <= 20) AS first_20,
       count(*) FILTER (WHERE n > 20 AND c IS DISTINCT FROM 7) AS others
FROM (SELECT row_number() OVER () AS n, c FROM (SELECT c FROM lf ORDER BY sig <%> :'q' LIMIT 22) x) y;
-- minhash.lsh_max_scan_tuples bounds the widening: at the bound the scan
-- returns the rows verified so far, closest first, and stops (it checks the
-- bound between stages: depths 4, 3 and 2 verify 938 signatures, lsh_explain)
SET minhash.lsh_max_scan_tuples = 500;
SET enable_seqscan = off;
SELECT count(*) FROM (SELECT id FROM lf ORDER BY sig <%> :'b' LIMIT 1000) x;
RESET enable_seqscan;
RESET minhash.lsh_max_scan_tuples;

-- %'s selectivity comes from the index's statistics (the key-prefix
-- multiplicities, docs/lsh.md): the matches of an average row, falling with
-- the threshold, where 1.0 said a flat 1% (42 rows) at every threshold. Beside
-- the true counts for a cluster row (the background rows, 3000 of 4200, have
-- none, so a cluster row has about three times the average)
CREATE FUNCTION lf_estimate(query text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
  RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;
CREATE FUNCTION lf_estimates(tt float8, q minhash, OUT t float8, OUT estimate float8, OUT actual bigint,
                             OUT join_estimate float8, OUT join_actual bigint)
LANGUAGE plpgsql AS $$
BEGIN
  t := tt;
  PERFORM set_config('minhash.similarity_threshold', t::text, true);
  estimate := lf_estimate(format('SELECT id FROM lf WHERE sig %% %L', q));
  -- the true counts: sequential scans compare every pair (the index finds
  -- the pairs that share a band)
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  SELECT count(*) INTO actual FROM lf WHERE sig % q;
  join_estimate := lf_estimate('SELECT * FROM lf a JOIN lf b ON a.sig % b.sig WHERE a.m = 0');
  SELECT count(*) INTO join_actual FROM lf a JOIN lf b ON a.sig % b.sig WHERE a.m = 0;
END $$;
SELECT e.* FROM unnest(ARRAY[0.3, 0.5, 0.9]::float8[]) t, LATERAL lf_estimates(t, :'q'::minhash) e;

-- two indexes on one column, for 0.5 and 0.8: a query at 0.5 plans on the 0.5
-- index (the 0.8 index would probe prefixes of 2 values in 12 bands, which
-- the background rows share often), one at 0.8 on the 0.8 index
CREATE INDEX lf_sig8 ON lf USING lsh (sig) WITH (threshold = 0.8);
SELECT bands, rows FROM minhash_lsh_stats('lf_sig8');
SET enable_seqscan = off;
SET minhash.similarity_threshold = 0.5;
EXPLAIN (COSTS OFF) SELECT id FROM lf WHERE sig % :'q';
SET minhash.similarity_threshold = 0.8;
EXPLAIN (COSTS OFF) SELECT id FROM lf WHERE sig % :'q';
RESET minhash.similarity_threshold;
RESET enable_seqscan;

-- minhash_similar_pairs below the index's design threshold probes prefixes
-- too: at 0.5 through the 0.8 index, recall >= 0.99 on pairs at >= 0.6
CREATE TEMP TABLE truth AS
  SELECT a.id AS a, b.id AS b FROM lf a JOIN lf b ON a.c = b.c AND a.id < b.id
  WHERE jaccard(a.sig, b.sig) >= 0.6;
SELECT count(*) AS pairs,
       count(p.key_a)::float8 / count(*) >= 0.99 AS recall_ok
FROM truth t LEFT JOIN minhash_similar_pairs('lf_sig8', 'id', 0.5) p
  ON (p.key_a::int, p.key_b::int) IN ((t.a, t.b), (t.b, t.a));
-- and can fail: with a recall target of 0.5 it probes 5 of 10 values
SET minhash.lsh_recall = 0.5;
SELECT count(p.key_a)::float8 / count(*) >= 0.99 AS recall_ok
FROM truth t LEFT JOIN minhash_similar_pairs('lf_sig8', 'id', 0.5) p
  ON (p.key_a::int, p.key_b::int) IN ((t.a, t.b), (t.b, t.a));
RESET minhash.lsh_recall;

DROP TABLE lf;
DROP FUNCTION lf_recall(float8);
DROP FUNCTION lf_estimates(float8, minhash);
DROP FUNCTION lf_estimate(text);
