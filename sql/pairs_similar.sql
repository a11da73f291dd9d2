-- minhash_similar_pairs and minhash_clusters on planted near-duplicates,
-- against a brute-force self-join with sequential scans.
--
-- The planted rows are where LSH recall is certain: within a cluster every
-- pair has Jaccard >= 0.88 (at the index's 30 bands of 4 rows a pair is
-- missed with probability about 1e-12), and rows of different clusters share
-- no shingle. The data is deterministic (md5 words), so are the signatures.

-- A walk longer than 10 s reports progress in NOTICEs: not in expected output
SET client_min_messages = warning;

-- 60 clusters: a base text of 100 words and up to 3 variants (last word
-- replaced twice, a middle word replaced once); ids shuffled.
CREATE TABLE docs (id int PRIMARY KEY, name text COLLATE "C", grp int, body text, sig minhash);
INSERT INTO docs (id, name, grp, body)
SELECT row_number() OVER (ORDER BY md5(c || '/' || v)), 'doc-' || lpad(c::text, 2, '0') || '-' || v, c,
       (SELECT string_agg(CASE WHEN v = 1 AND i = 100 THEN 'tail' || c
                               WHEN v = 2 AND i = 100 THEN 'end' || c
                               WHEN v = 3 AND i = 50 THEN 'mid' || c
                               ELSE 'w' || substr(md5(c || '.' || i), 1, 6) END, ' ' ORDER BY i)
        FROM generate_series(1, 100) i)
FROM generate_series(1, 60) c, generate_series(0, 3) v
WHERE v <= c % 4;
UPDATE docs SET sig = minhash(body);
CREATE INDEX docs_sig_idx ON docs USING lsh (sig);
SELECT count(*) AS rows, count(DISTINCT grp) AS clusters FROM docs;

-- The reference: every pair with a.sig % b.sig, by sequential scans
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE selfjoin AS
SELECT a.id AS key_a, b.id AS key_b, jaccard(a.sig, b.sig) AS similarity
FROM docs a JOIN docs b ON a.sig % b.sig AND a.id < b.id;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT count(*) AS pairs, min(similarity), max(similarity) FROM selfjoin;

-- The function: same pairs, same estimates, each pair once with key_a < key_b
SELECT count(*) AS pairs, count(DISTINCT (key_a, key_b)) AS distinct_pairs,
       bool_and(key_a < key_b) AS ordered
FROM minhash_similar_pairs('docs_sig_idx', 'id');
SELECT count(*) AS only_in_function FROM (
    SELECT * FROM minhash_similar_pairs('docs_sig_idx', 'id') EXCEPT SELECT * FROM selfjoin) x;
SELECT count(*) AS only_in_selfjoin FROM (
    SELECT * FROM selfjoin EXCEPT SELECT * FROM minhash_similar_pairs('docs_sig_idx', 'id')) x;
-- every pair lies within a planted cluster
SELECT count(*) AS across_clusters
FROM minhash_similar_pairs('docs_sig_idx', 'id') p
JOIN docs a ON a.id = p.key_a JOIN docs b ON b.id = p.key_b
WHERE a.grp <> b.grp;
SELECT pg_typeof(key_a), pg_typeof(similarity) FROM minhash_similar_pairs('docs_sig_idx', 'id') LIMIT 1;

-- The threshold: the GUC by default, or the argument
SET minhash.similarity_threshold = 0.95;
SELECT count(*) AS pairs_at_guc_095 FROM minhash_similar_pairs('docs_sig_idx', 'id');
SELECT count(*) AS selfjoin_at_095 FROM selfjoin WHERE similarity >= 0.95;
RESET minhash.similarity_threshold;
SELECT count(*) AS pairs_at_arg_095 FROM minhash_similar_pairs('docs_sig_idx', 'id', 0.95);
SELECT count(*) AS pairs_at_1 FROM minhash_similar_pairs('docs_sig_idx', 'id', threshold => 1);

-- Keys of another type through key_type: text keys, ordered by the column's collation
SELECT a.name AS name_a, b.name AS name_b, p.similarity
FROM minhash_similar_pairs('docs_sig_idx', 'id') p
JOIN docs a ON a.id = p.key_a JOIN docs b ON b.id = p.key_b
WHERE a.grp IN (3, 7)
ORDER BY least(a.name, b.name), greatest(a.name, b.name);
SELECT * FROM minhash_similar_pairs('docs_sig_idx', 'name', NULL::text)
WHERE key_a LIKE 'doc-03-%' OR key_a LIKE 'doc-07-%'
ORDER BY key_a, key_b;
-- an int key returned as text, or as int
SELECT key_a, key_b FROM minhash_similar_pairs('docs_sig_idx', 'id', key_type => NULL::text)
ORDER BY key_a, key_b LIMIT 3;
SELECT pg_typeof(key_a) FROM minhash_similar_pairs('docs_sig_idx', 'id', key_type => NULL::int) LIMIT 1;
-- (positionally, NULL::int would be taken for the threshold: name key_type)

-- Clusters, connected mode: components of the self-join's pairs, named by their smallest key
CREATE TABLE components AS
WITH RECURSIVE e AS (SELECT key_a AS a, key_b AS b FROM selfjoin
                     UNION SELECT key_b, key_a FROM selfjoin),
     reach(s, t) AS (SELECT a, b FROM e UNION SELECT r.s, e.b FROM reach r JOIN e ON e.a = r.t)
SELECT s AS key, least(s, min(t)) AS cluster_id FROM reach GROUP BY s;
SELECT count(*) AS members, count(DISTINCT cluster_id) AS clusters FROM components;
SELECT count(*) AS only_in_function FROM (
    SELECT * FROM minhash_clusters('docs_sig_idx', 'id') EXCEPT SELECT * FROM components) x;
SELECT count(*) AS only_in_selfjoin FROM (
    SELECT * FROM components EXCEPT SELECT * FROM minhash_clusters('docs_sig_idx', 'id')) x;
-- the planted clusters of two rows or more, each named by its smallest id
SELECT count(*) AS mismatches FROM minhash_clusters('docs_sig_idx', 'id') c
JOIN docs d ON d.id = c.key
WHERE c.cluster_id <> (SELECT min(id) FROM docs e WHERE e.grp = d.grp);
SELECT count(*) AS planted_members FROM docs d
WHERE (SELECT count(*) FROM docs e WHERE e.grp = d.grp) > 1;

-- Representative mode: every member is similar to its representative; on
-- these clusters (all members pairwise similar) it equals connected mode
SELECT count(*) AS members, count(DISTINCT cluster_id) AS clusters,
       bool_and(r.sig % m.sig) AS similar_to_representative
FROM minhash_clusters('docs_sig_idx', 'id', mode => 'representative') c
JOIN docs m ON m.id = c.key JOIN docs r ON r.id = c.cluster_id;
SELECT count(*) AS differences FROM (
    (SELECT * FROM minhash_clusters('docs_sig_idx', 'id', mode => 'representative')
     EXCEPT SELECT * FROM minhash_clusters('docs_sig_idx', 'id'))
    UNION ALL
    (SELECT * FROM minhash_clusters('docs_sig_idx', 'id')
     EXCEPT SELECT * FROM minhash_clusters('docs_sig_idx', 'id', mode => 'representative'))) x;
SELECT * FROM minhash_clusters('docs_sig_idx', 'name', NULL::text)
WHERE cluster_id IN ('doc-03-0', 'doc-07-0') ORDER BY key;

-- Chaining: a ~ b and b ~ c but not a ~ c. Connected mode puts all three
-- together; representative mode keeps c apart.
CREATE TABLE chain (id int PRIMARY KEY, sig minhash);
INSERT INTO chain VALUES
    (1, minhash_from_array(ARRAY[1,2,3,4,5,6,7,8,9,10])),
    (2, minhash_from_array(ARRAY[1,2,3,4,5,6,17,18,19,20])),
    (3, minhash_from_array(ARRAY[21,22,23,24,5,6,17,18,19,20]));
CREATE INDEX chain_idx ON chain USING lsh (sig) WITH (bands = 5, rows = 2);
SELECT * FROM minhash_similar_pairs('chain_idx', 'id') ORDER BY 1, 2;
SELECT * FROM minhash_clusters('chain_idx', 'id') ORDER BY 1;
SELECT * FROM minhash_clusters('chain_idx', 'id', mode => 'representative') ORDER BY 1;

-- Deduplicate: keep the smallest id of each cluster
BEGIN;
DELETE FROM docs WHERE id IN (SELECT key FROM minhash_clusters('docs_sig_idx', 'id') WHERE key <> cluster_id);
SELECT count(*) AS rows_left, count(DISTINCT grp) AS clusters_left FROM docs;
SELECT count(*) AS pairs_left FROM minhash_similar_pairs('docs_sig_idx', 'id');
ROLLBACK;
SELECT count(*) AS pairs_after_rollback FROM minhash_similar_pairs('docs_sig_idx', 'id');

-- A larger index: 3000 rows at 128 bands of 1 row are 384,000 band entries
-- in over 300 leaves, more than 1017 entries a leaf: the leaves are in the
-- narrow (7-byte) format. 1000 groups of three identical rows: 3 pairs each.
CREATE TABLE narrow (id int PRIMARY KEY, sig minhash);
INSERT INTO narrow SELECT i, minhash('document ' || (i % 1000) || ' ' || repeat('w' || (i % 1000) || ' ', 8))
FROM generate_series(1, 3000) i;
CREATE INDEX narrow_idx ON narrow USING lsh (sig) WITH (bands = 128, rows = 1);
SELECT leaf_pages > 300 AS many_leaves, entries / leaf_pages > 1017 AS narrow_leaves FROM minhash_lsh_stats('narrow_idx');
SELECT count(*) AS pairs, min(similarity), bool_and(key_a % 1000 = key_b % 1000) AS within_groups,
       count(DISTINCT (key_a, key_b)) AS distinct_pairs
FROM minhash_similar_pairs('narrow_idx', 'id');
-- appended entries (inserts after the build) in narrow leaves
INSERT INTO narrow SELECT 3000 + i, minhash('document ' || i || ' ' || repeat('w' || i || ' ', 8)) FROM generate_series(1, 10) i;
SELECT count(*) AS pairs_with_new_rows FROM minhash_similar_pairs('narrow_idx', 'id') WHERE key_b > 3000;
