-- exact => true and a document beyond the memory bound: exact verification
-- keeps a row's distinct shingle hashes in at most a quarter of work_mem
-- (2,048 at the smallest work_mem, 64kB). A row with more is verified by the
-- estimate of its signature instead of failing the call, and one NOTICE
-- counts such rows; every other pair keeps its exact similarity.

-- The documents: words w1 .. wN, 5-word shingles (the default).
--   1: w1 .. w3000, 2,996 shingles: beyond the bound at 64kB
--   2: row 1 with words 1 .. 300 replaced: beyond it too
--   3: w1 .. w2000, 1,996 shingles: within it
--   4, 5: within it, a pair of their own
--   6: w2501 .. w3000, 496 shingles: within it
CREATE TABLE exb (id int PRIMARY KEY, body text);
CREATE FUNCTION exb_words(lo int, hi int, prefix text DEFAULT 'w') RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT string_agg(prefix || i, ' ' ORDER BY i) FROM generate_series(lo, hi) i $$;
INSERT INTO exb VALUES
  (1, exb_words(1, 3000)),
  (2, exb_words(1, 300, 'x') || ' ' || exb_words(301, 3000)),
  (3, exb_words(1, 2000)),
  (4, exb_words(5001, 5100)),
  (5, exb_words(5001, 5090) || ' ' || exb_words(1, 10, 'y')),
  (6, exb_words(2501, 3000));
CREATE INDEX exb_idx ON exb USING lsh (minhash(body)) WITH (threshold = 0.1);

-- every pair's estimate and exact similarity, by brute force
CREATE TABLE exb_truth AS
SELECT a.id AS key_a, b.id AS key_b,
       jaccard(minhash(a.body), minhash(b.body)) AS estimate,
       jaccard(minhash_shingles(a.body), minhash_shingles(b.body)) AS exact
FROM exb a JOIN exb b ON a.id < b.id;
SELECT key_a, key_b, round(estimate::numeric, 3) AS estimate, round(exact::numeric, 3) AS exact
FROM exb_truth WHERE estimate > 0 OR exact > 0 ORDER BY 1, 2;
SELECT id, array_length(minhash_shingles(body), 1) AS shingles FROM exb ORDER BY id;

-- each pair: the similarity returned, and which value it is
CREATE FUNCTION exb_pairs(t float8) RETURNS TABLE (key_a bigint, key_b bigint, similarity numeric, is_value text)
LANGUAGE sql AS $$
  SELECT p.key_a, p.key_b, round(p.similarity::numeric, 3),
         CASE WHEN p.similarity = x.exact AND p.similarity = x.estimate THEN 'both'
              WHEN p.similarity = x.exact THEN 'exact'
              WHEN p.similarity = x.estimate THEN 'estimate' ELSE 'neither' END
  FROM minhash_similar_pairs('exb_idx', 'id', t, exact => true) p
  JOIN exb_truth x USING (key_a, key_b) ORDER BY 1, 2 $$;

-- at the default work_mem every row fits: exact values, no NOTICE
SELECT * FROM exb_pairs(0.15);
SELECT * FROM exb_pairs(0.65);

-- at 64kB rows 1 and 2 do not fit: their pairs, with each other and with
-- rows that fit (3, 6), are verified and reported by the estimate; 4-5
-- stays exact. One NOTICE counts the two rows, each once even when the row
-- cache (16 kB of shingles here) is refilled and fetches a row again
SET work_mem = '64kB';
SELECT * FROM exb_pairs(0.15);
-- the threshold applies to that estimate: 1-3 (exact 0.666, estimate 0.648)
-- is not returned at 0.65
SELECT * FROM exb_pairs(0.65);
-- the same with the walk in parallel workers (the rows are resolved, and
-- the exact similarity computed, in the leader)
BEGIN;
SET LOCAL minhash.pairs_min_parallel_index_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT * FROM exb_pairs(0.15);
COMMIT;
-- clusters: the same pairs
SELECT key, cluster_id FROM minhash_clusters('exb_idx', 'id', 0.65, exact => true) ORDER BY 1;
-- the lexemes of a text search configuration, under the same bound
CREATE INDEX exb_lexeme_idx ON exb USING lsh (minhash(body, 'simple'::regconfig)) WITH (threshold = 0.1);
SELECT key_a, key_b, round(similarity::numeric, 3) AS similarity
FROM minhash_similar_pairs('exb_lexeme_idx', 'id', 0.5, exact => true) ORDER BY 1, 2;
RESET work_mem;
SELECT key_a, key_b, round(similarity::numeric, 3) AS similarity
FROM minhash_similar_pairs('exb_lexeme_idx', 'id', 0.5, exact => true) ORDER BY 1, 2;

DROP FUNCTION exb_pairs, exb_words;
DROP TABLE exb, exb_truth;
