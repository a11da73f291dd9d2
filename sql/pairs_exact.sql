-- exact => true: candidate pairs (rows sharing a band) verified on the exact
-- Jaccard similarity of their shingles, which equals
-- jaccard(minhash_shingles(a, k, unit), minhash_shingles(b, k, unit)).

-- A walk longer than 10 s reports progress in NOTICEs: not in expected output
SET client_min_messages = warning;

-- 30 clusters of 80-word texts: the base (v = 0) and variants with 1, 2 and
-- 6 words replaced. Exact similarities within a cluster: 0.87 and 0.75 to the
-- base, 0.65 between the first two variants, below 0.45 for the third; 0
-- across clusters. At threshold 0.7 the pairs to find have J >= 0.75, where
-- the index's bands miss a pair with probability about 1e-5.
CREATE TABLE ex (id int PRIMARY KEY, body text, sig minhash);
INSERT INTO ex (id, body)
SELECT c * 10 + v,
       (SELECT string_agg(CASE WHEN (v = 1 AND i = 40) OR (v = 2 AND i IN (27, 54)) OR (v = 3 AND i % 13 = 0)
                               THEN 'x' || v || '_' || i ELSE 'w' || substr(md5(c || '.' || i), 1, 6) END,
                          ' ' ORDER BY i)
        FROM generate_series(1, 80) i)
FROM generate_series(1, 30) c, generate_series(0, 3) v;
UPDATE ex SET sig = minhash(body);
CREATE INDEX ex_sig_idx ON ex USING lsh (sig);

-- the reference: exact Jaccard of every pair, by brute force
CREATE TABLE ex_shingles AS SELECT id, minhash_shingles(body) AS sh FROM ex;
CREATE TABLE ex_truth AS
SELECT a.id AS key_a, b.id AS key_b, jaccard(a.sh, b.sh) AS j
FROM ex_shingles a JOIN ex_shingles b ON a.id < b.id;
SELECT round(j::numeric, 2) AS exact_jaccard, count(*) FROM ex_truth WHERE j > 0 GROUP BY 1 ORDER BY 1;

-- the pairs at exact J >= 0.7, each with its exact J (text_column given)
SELECT count(*) AS pairs FROM minhash_similar_pairs('ex_sig_idx', 'id', 0.7, exact => true, text_column => 'body');
SELECT count(*) AS differences FROM (
    (SELECT * FROM minhash_similar_pairs('ex_sig_idx', 'id', 0.7, exact => true, text_column => 'body')
     EXCEPT SELECT * FROM ex_truth WHERE j >= 0.7)
    UNION ALL
    (SELECT * FROM ex_truth WHERE j >= 0.7
     EXCEPT SELECT * FROM minhash_similar_pairs('ex_sig_idx', 'id', 0.7, exact => true, text_column => 'body'))) x;
-- estimates and exact values differ; exact mode reports the exact one
SELECT e.key_a, e.key_b, round(e.similarity::numeric, 4) AS estimate, round(x.similarity::numeric, 4) AS exact
FROM minhash_similar_pairs('ex_sig_idx', 'id', 0.7) e
JOIN minhash_similar_pairs('ex_sig_idx', 'id', 0.7, exact => true, text_column => 'body') x USING (key_a, key_b)
WHERE e.key_a < 40 ORDER BY 1, 2;

-- the same through an expression index on minhash(body): no text_column needed
CREATE INDEX ex_expr_idx ON ex USING lsh (minhash(body));
SELECT count(*) AS differences FROM (
    (SELECT * FROM minhash_similar_pairs('ex_expr_idx', 'id', 0.7, exact => true)
     EXCEPT SELECT * FROM ex_truth WHERE j >= 0.7)
    UNION ALL
    (SELECT * FROM ex_truth WHERE j >= 0.7
     EXCEPT SELECT * FROM minhash_similar_pairs('ex_expr_idx', 'id', 0.7, exact => true))) x;

-- character shingles: the index expression's unit and k are used
CREATE INDEX ex_char_idx ON ex USING lsh (minhash(body, 'char', 7));
CREATE TABLE ex_char_truth AS
SELECT a.id AS key_a, b.id AS key_b,
       jaccard(minhash_shingles(a.body, 7, 'char'), minhash_shingles(b.body, 7, 'char')) AS j
FROM ex a JOIN ex b ON a.id < b.id AND a.id / 10 = b.id / 10;
SELECT count(*) AS pairs, count(*) FILTER (WHERE t.j = p.similarity) AS equal_to_sql
FROM minhash_similar_pairs('ex_char_idx', 'id', 0.8, exact => true) p
JOIN ex_char_truth t USING (key_a, key_b);
SELECT count(*) AS sql_pairs_at_08 FROM ex_char_truth WHERE j >= 0.8;
-- unit and k given explicitly override the expression's (here: the same values)
SELECT count(*) AS pairs FROM minhash_similar_pairs('ex_char_idx', 'id', 0.8, exact => true, unit => 'char', k => 7);
-- with text_column on a plain column index, unit and k default to word, 5
SELECT count(*) AS pairs FROM minhash_similar_pairs('ex_sig_idx', 'id', 0.8, exact => true, text_column => 'body', unit => 'word', k => 5);
SELECT count(*) AS pairs FROM minhash_similar_pairs('ex_sig_idx', 'id', 0.8, exact => true, text_column => 'body');

-- a NULL text is never similar; an empty text is similar to another empty text (J = 1)
INSERT INTO ex VALUES (901, NULL, minhash('same'::text)), (902, 'same', minhash('same'::text)),
                      (903, '', minhash('same'::text)), (904, '', minhash('same'::text));
SELECT * FROM minhash_similar_pairs('ex_sig_idx', 'id', 0.7, exact => true, text_column => 'body')
WHERE key_a > 900 ORDER BY 1, 2;

-- clusters on exact similarity
SELECT count(*) AS members, count(DISTINCT cluster_id) AS clusters
FROM minhash_clusters('ex_expr_idx', 'id', 0.7, exact => true);
