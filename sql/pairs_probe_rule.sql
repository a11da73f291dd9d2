-- One probe rule: minhash_similar_pairs and minhash_clusters find exactly
-- the pairs the per-row % probes find through the same index, at every
-- threshold and minhash.lsh_recall; band keys computed in SQL (minhash_bands,
-- minhash_first_band: the distributed pairs of a Citus table) find them too;
-- minhash_lsh_recall gives the recall of that rule, checked against its
-- formula and against planted pairs.
--
-- Families of two sets, a base of n elements and a variant with m of them
-- replaced, so each pair has a known Jaccard (n - m) / (n + m): 0.4, 0.55,
-- 0.75, 0.8, 0.85, 0.9, 300 families each; families share nothing.
-- enable_seqscan = off makes plans look costly enough to compile: no JIT
SET jit = off;
CREATE TABLE pr (id int PRIMARY KEY, fam int, j float8, elems int[], sig minhash);
INSERT INTO pr
SELECT f * 2 + v, f, l.j,
       ARRAY(SELECT f * 1000 + e FROM generate_series(CASE WHEN v = 0 THEN 1 ELSE l.m + 1 END, l.n) e)
       || CASE WHEN v = 0 THEN '{}'::int[] ELSE ARRAY(SELECT f * 1000 + 500 + e FROM generate_series(1, l.m) e) END,
       NULL
FROM (VALUES (0, 70, 30, 0.4), (1, 155, 45, 0.55), (2, 70, 10, 0.75), (3, 90, 10, 0.8),
             (4, 185, 15, 0.85), (5, 95, 5, 0.9)) AS l(level, n, m, j),
     generate_series(l.level * 300, l.level * 300 + 299) f, generate_series(0, 1) v;
UPDATE pr SET sig = minhash(elems);
-- the planted Jaccard of each family, checked
SELECT count(*) AS families, bool_and(abs(jaccard(a.elems, b.elems) - a.j) < 1e-9) AS planted
FROM pr a JOIN pr b ON b.id = a.id + 1 AND a.id % 2 = 0;

-- An index built for 0.9: 7 bands of 18 rows. Its keys keep 15 bits of a
-- band's first value and one bit of each of the next 14: rows whose keys
-- agree mostly differ in some of those values, which is what a % probe
-- matches and what the pairs must match too.
CREATE INDEX pr_sig9 ON pr USING lsh (sig) WITH (threshold = 0.9);
SELECT bands, rows FROM minhash_lsh_stats('pr_sig9');
ANALYZE pr;

-- pairs == the union of the per-row % probes through the index, and
-- clusters == the components of those pairs, at t = 0.3 .. 0.9, with the
-- default minhash.lsh_recall and with 0.6 (deeper probes) and 0.9999
-- (shallower): the depth changes, the equality holds
CREATE FUNCTION pr_check(t float8) RETURNS TABLE (depth int, probes bigint, pairs bigint, missing bigint, extra bigint,
                                                clusters_differ bigint)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('minhash.similarity_threshold', t::text, true);
  PERFORM set_config('enable_seqscan', 'off', true);
  CREATE TEMP TABLE probes ON COMMIT DROP AS
    SELECT a.id AS a, b.id AS b FROM pr a CROSS JOIN LATERAL (SELECT id FROM pr b WHERE b.sig % a.sig OFFSET 0) b
    WHERE a.id < b.id;
  PERFORM set_config('enable_seqscan', 'on', true);
  CREATE TEMP TABLE walked ON COMMIT DROP AS SELECT key_a AS a, key_b AS b FROM minhash_similar_pairs('pr_sig9', 'id', t);
  -- connected components of the probes' pairs, each row labelled with the
  -- smallest key it reaches, against minhash_clusters
  CREATE TEMP TABLE comp ON COMMIT DROP AS SELECT k AS key, k AS cluster_id FROM (SELECT a FROM probes UNION SELECT b FROM probes) s(k);
  LOOP
    UPDATE comp c SET cluster_id = m.cid
    FROM (SELECT e.k, min(o.cluster_id) AS cid
          FROM (SELECT a, b FROM probes UNION ALL SELECT b, a FROM probes) e(k, other)
          JOIN comp o ON o.key = e.other GROUP BY e.k) m
    WHERE m.k = c.key AND m.cid < c.cluster_id;
    EXIT WHEN NOT FOUND;
  END LOOP;
  CREATE TEMP TABLE clus ON COMMIT DROP AS SELECT key::int, cluster_id::int FROM minhash_clusters('pr_sig9', 'id', t);
  RETURN QUERY SELECT (SELECT m.depth FROM minhash_lsh_recall('pr_sig9', t) m LIMIT 1),
    (SELECT count(*) FROM probes), (SELECT count(*) FROM walked),
    (SELECT count(*) FROM (SELECT * FROM probes EXCEPT SELECT * FROM walked) x),
    (SELECT count(*) FROM (SELECT * FROM walked EXCEPT SELECT * FROM probes) x),
    (SELECT count(*) FROM ((SELECT * FROM clus EXCEPT SELECT * FROM comp)
                          UNION ALL (SELECT * FROM comp EXCEPT SELECT * FROM clus)) x);
  DROP TABLE probes, walked, comp, clus;
END $$;
SELECT t, c.* FROM unnest(ARRAY[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]) t, pr_check(t) c;
SET minhash.lsh_recall = 0.6;
SELECT t, c.* FROM unnest(ARRAY[0.5, 0.9]) t, pr_check(t) c;
SET minhash.lsh_recall = 0.9999;
SELECT t, c.* FROM unnest(ARRAY[0.5, 0.9]) t, pr_check(t) c;
RESET minhash.lsh_recall;

-- the same pairs from band keys computed in SQL, as the distributed pairs of
-- a Citus table compute them: rows sharing minhash_bands at the probe depth,
-- reported from the first band whose keys agree, verified by the estimate
CREATE FUNCTION pr_sql_check(t float8) RETURNS TABLE (sql_pairs bigint, missing bigint, extra bigint)
LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE by_sql ON COMMIT DROP AS
    WITH d AS (SELECT m.depth FROM minhash_lsh_recall('pr_sig9', t) m LIMIT 1),
    k AS (SELECT p.id, p.sig, b.band::int AS band, b.key
          FROM pr p, d, unnest(minhash_bands(p.sig, 7, 18, d.depth)) WITH ORDINALITY AS b(key, band))
    SELECT x.id AS a, y.id AS b FROM k x JOIN k y ON x.key = y.key AND x.band = y.band AND x.id < y.id, d
    WHERE minhash_first_band(x.sig, y.sig, 7, 18, d.depth) = x.band AND minhash_similar(x.sig, y.sig, t);
  CREATE TEMP TABLE walked ON COMMIT DROP AS SELECT key_a::int AS a, key_b::int AS b FROM minhash_similar_pairs('pr_sig9', 'id', t);
  RETURN QUERY SELECT (SELECT count(*) FROM by_sql),
    (SELECT count(*) FROM (SELECT * FROM by_sql EXCEPT SELECT * FROM walked) x),
    (SELECT count(*) FROM (SELECT * FROM walked EXCEPT SELECT * FROM by_sql) x);
  DROP TABLE by_sql, walked;
END $$;
SELECT t, c.* FROM unnest(ARRAY[0.4, 0.9]) t, pr_sql_check(t) c;
-- and on compact (16-bit) and oph signatures: minhash_bands and
-- minhash_first_band key the values the index keys (widened, densified),
-- not the stored form
DROP INDEX pr_sig9;
UPDATE pr SET sig = minhash(elems, 16::bigint);
CREATE INDEX pr_sig9 ON pr USING lsh (sig) WITH (threshold = 0.9);
SELECT t, c.* FROM unnest(ARRAY[0.4, 0.9]) t, pr_sql_check(t) c;
DROP INDEX pr_sig9;
UPDATE pr SET sig = minhash(elems, 'oph'::minhash_family);
CREATE INDEX pr_sig9 ON pr USING lsh (sig) WITH (threshold = 0.9);
SELECT t, c.* FROM unnest(ARRAY[0.4, 0.9]) t, pr_sql_check(t) c;
DROP INDEX pr_sig9;
UPDATE pr SET sig = minhash(elems);
CREATE INDEX pr_sig9 ON pr USING lsh (sig) WITH (threshold = 0.9);

-- minhash_lsh_recall: J = t, t + 0.05, t + 0.1 (up to 1) and the depth. The
-- formula: a band of depth m matches with p = prod over its first
-- min(m, 15) values of (J + (1 - J) / 2^w), w the bits the key keeps of
-- value j (15, then 1 each); recall = 1 - (1 - p)^7.
CREATE FUNCTION pr_formula(s float8, depth int) RETURNS float8 LANGUAGE sql AS $$
  SELECT 1 - (1 - exp(sum(ln(s + (1 - s) / 2 ^ (CASE WHEN i = 1 THEN 15 ELSE 1 END)))))^7
  FROM generate_series(1, least(depth, 15)) i
$$;
SELECT t, round(r.similarity::numeric, 2) AS similarity, r.depth, round(r.recall::numeric, 4) AS recall,
       abs(r.recall - pr_formula(r.similarity, r.depth)) < 1e-12 AS formula
FROM unnest(ARRAY[0.5, 0.7, 0.8, 0.9, 0.97]) t, minhash_lsh_recall('pr_sig9', t) r;
-- the similarities as written, without the float noise of t + 0.1
SELECT t, array_agg(r.similarity) AS similarities
FROM unnest(ARRAY[0.05, 0.7, 0.123]) t, minhash_lsh_recall('pr_sig9', t) r GROUP BY t ORDER BY t;
-- the depth follows minhash.lsh_recall, and so does the recall
SET minhash.lsh_recall = 0.9999;
SELECT round(similarity::numeric, 2) AS similarity, depth, round(recall::numeric, 4) AS recall FROM minhash_lsh_recall('pr_sig9', 0.9);
RESET minhash.lsh_recall;
-- the default threshold is minhash.similarity_threshold; the 30 x 4 default index
SET minhash.similarity_threshold = 0.5;
CREATE INDEX pr_sig5 ON pr USING lsh (sig);
SELECT round(similarity::numeric, 2) AS similarity, depth, round(recall::numeric, 4) AS recall FROM minhash_lsh_recall('pr_sig5');
RESET minhash.similarity_threshold;
DROP INDEX pr_sig5;

-- and against planted pairs: at t = 0.7 with minhash.lsh_recall = 0.5 the
-- index probes 10 values deep; of the families whose estimate reaches 0.7
-- (what a sequential scan returns), the share the pairs find is the recall
-- at their Jaccard, within 4 standard deviations of the binomial count
SET minhash.lsh_recall = 0.5;
WITH found AS (SELECT key_a, key_b FROM minhash_similar_pairs('pr_sig9', 'id', 0.7)),
fam AS (SELECT a.j, (f.key_a IS NOT NULL) AS got
        FROM pr a JOIN pr b ON b.id = a.id + 1 AND a.id % 2 = 0
        LEFT JOIN found f ON f.key_a = a.id AND f.key_b = b.id
        WHERE a.j >= 0.75 AND jaccard(a.sig, b.sig) >= 0.7),
d AS (SELECT depth FROM minhash_lsh_recall('pr_sig9', 0.7) LIMIT 1),
m AS (SELECT j, count(*) AS n, avg(got::int) AS measured, pr_formula(j, (SELECT depth FROM d)) AS expected
      FROM fam GROUP BY j)
SELECT j, (SELECT depth FROM d) AS depth, n > 250 AS most_families,
       round(expected::numeric, 3) AS expected,
       abs(measured - expected) <= 4 * sqrt(expected * (1 - expected) / n) + 0.01 AS measured_matches
FROM m ORDER BY j;
RESET minhash.lsh_recall;

-- errors
SELECT * FROM minhash_lsh_recall('pr_sig9', 1.5);
SELECT * FROM minhash_lsh_recall('pr', 0.5);
SELECT * FROM minhash_lsh_recall(NULL, 0.5);
CREATE ROLE regress_probe_reader;
SET ROLE regress_probe_reader;
SELECT * FROM minhash_lsh_recall('pr_sig9', 0.5);
RESET ROLE;
GRANT SELECT (id) ON pr TO regress_probe_reader;
SET ROLE regress_probe_reader;
SELECT count(*) FROM minhash_lsh_recall('pr_sig9', 0.5);
RESET ROLE;
REVOKE ALL ON pr FROM regress_probe_reader;
DROP ROLE regress_probe_reader;
-- an index that never held a signature: k unknown, so no recall yet
CREATE TABLE pr_empty (sig minhash);
CREATE INDEX pr_empty_idx ON pr_empty USING lsh (sig);
SELECT * FROM minhash_lsh_recall('pr_empty_idx', 0.5);
DROP TABLE pr_empty;

DROP FUNCTION pr_check(float8), pr_sql_check(float8), pr_formula(float8, int);
DROP TABLE pr;
RESET jit;
