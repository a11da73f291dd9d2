-- minhash_similar_pairs sees exactly the rows the query's snapshot sees:
-- deleted rows never appear (before or after VACUUM), updated rows appear
-- in their current version, rows inserted after the build appear. Also empty
-- tables and indexes, NULL signatures and keys, and large groups of identical
-- rows under a small work_mem.

-- A walk longer than 10 s reports progress in NOTICEs: not in expected output
SET client_min_messages = warning;

-- Groups of identical texts: group g has g rows (ids g*100 + 1..g)
CREATE TABLE vis (id int PRIMARY KEY, tag text, body text, sig minhash);
INSERT INTO vis (id, tag, body)
SELECT g * 100 + i, 'g' || g, 'group ' || g || ' shares this text: ' || repeat('word' || g || ' ', 10)
FROM generate_series(1, 5) g, generate_series(1, g) i;
UPDATE vis SET sig = minhash(body);
CREATE INDEX vis_idx ON vis USING lsh (sig);
-- pairs per group: 0, 1, 3, 6, 10
SELECT key_a / 100 AS grp, count(*) FROM minhash_similar_pairs('vis_idx', 'id') GROUP BY 1 ORDER BY 1;

-- deleted rows vanish at once, in the deleting transaction and after commit
BEGIN;
DELETE FROM vis WHERE id IN (402, 501, 502);
SELECT key_a / 100 AS grp, count(*) FROM minhash_similar_pairs('vis_idx', 'id') GROUP BY 1 ORDER BY 1;
SELECT count(*) AS deleted_keys_seen FROM minhash_similar_pairs('vis_idx', 'id')
WHERE key_a IN (402, 501, 502) OR key_b IN (402, 501, 502);
COMMIT;
SELECT count(*) AS deleted_keys_seen FROM minhash_similar_pairs('vis_idx', 'id')
WHERE key_a IN (402, 501, 502) OR key_b IN (402, 501, 502);
VACUUM vis;
SELECT count(*) AS pairs_after_vacuum FROM minhash_similar_pairs('vis_idx', 'id');
SELECT * FROM minhash_lsh_check('vis_idx');

-- a rolled-back delete changes nothing
BEGIN;
SAVEPOINT s;
DELETE FROM vis WHERE id = 503;
SELECT count(*) AS without_503 FROM minhash_similar_pairs('vis_idx', 'id');
ROLLBACK TO s;
SELECT count(*) AS with_503 FROM minhash_similar_pairs('vis_idx', 'id');
COMMIT;

-- an update of the signature (a new index entry; the old version is dead)
UPDATE vis SET body = 'group 2 shares this text: ' || repeat('word2 ', 10), sig = minhash('group 2 shares this text: ' || repeat('word2 ', 10))
WHERE id = 301;
SELECT * FROM minhash_similar_pairs('vis_idx', 'id') WHERE key_a < 400 ORDER BY 1, 2;
-- an update of another column only (HOT: the index entry still leads to the row)
UPDATE vis SET tag = 'renamed' WHERE id = 201;
SELECT * FROM minhash_similar_pairs('vis_idx', 'tag', NULL::text) WHERE key_a < 'g4' ORDER BY 1, 2;

-- rows inserted after the build, one of them with a NULL key, one without a signature
INSERT INTO vis (id, tag, body) VALUES (601, 'g6', 'a new text for group six'), (602, NULL, 'a new text for group six'),
                                       (603, 'g6', 'a new text for group six');
UPDATE vis SET sig = minhash(body) WHERE id IN (601, 602);
SELECT * FROM minhash_similar_pairs('vis_idx', 'id') WHERE key_a > 600 ORDER BY 1, 2;
-- a row whose key is NULL is left out
SELECT * FROM minhash_similar_pairs('vis_idx', 'tag', NULL::text) WHERE key_a = 'g6' ORDER BY 1, 2;
SELECT * FROM minhash_lsh_check('vis_idx');

-- Empty: a table with no rows, an index whose rows are all deleted
CREATE TABLE empty_t (id int, sig minhash);
CREATE INDEX empty_idx ON empty_t USING lsh (sig);
SELECT * FROM minhash_similar_pairs('empty_idx', 'id');
SELECT * FROM minhash_clusters('empty_idx', 'id');
SELECT * FROM minhash_clusters('empty_idx', 'id', mode => 'representative');
INSERT INTO empty_t SELECT i, minhash('the same text'::text) FROM generate_series(1, 3) i;
SELECT * FROM minhash_similar_pairs('empty_idx', 'id') ORDER BY 1, 2;
DELETE FROM empty_t;
SELECT * FROM minhash_similar_pairs('empty_idx', 'id');
VACUUM empty_t;
SELECT * FROM minhash_similar_pairs('empty_idx', 'id');
SELECT * FROM minhash_clusters('empty_idx', 'id');
-- only NULL signatures: nothing is indexed
INSERT INTO empty_t VALUES (1, NULL), (2, NULL);
SELECT * FROM minhash_similar_pairs('empty_idx', 'id');

-- A large group under the smallest work_mem: 1100 identical rows are one
-- band group per band, read in chunks of 16 signatures, its row ids spilled
-- to a tuplesort, the row cache reset again and again. The answer must be
-- all 1100 * 1099 / 2 pairs, each once: compared by count and sums with the
-- pairs a < b of 1..1100.
CREATE TABLE dup (id int PRIMARY KEY, sig minhash);
INSERT INTO dup SELECT i, minhash('one text for every row of this table'::text) FROM generate_series(1, 1100) i;
INSERT INTO dup SELECT 2000 + i, minhash('another text, ' || i) FROM generate_series(1, 50) i;
CREATE INDEX dup_idx ON dup USING lsh (sig);
SET work_mem = '64kB';
SELECT count(*), sum(key_a) AS sum_a, sum(key_b) AS sum_b, sum(key_a::numeric * key_b) AS sum_ab,
       min(similarity), max(similarity)
FROM minhash_similar_pairs('dup_idx', 'id');
SELECT count(*), sum(a) AS sum_a, sum(b) AS sum_b, sum(a::numeric * b) AS sum_ab
FROM generate_series(1, 1100) a, generate_series(1, 1100) b WHERE a < b;
SELECT count(*), count(DISTINCT cluster_id), min(cluster_id) FROM minhash_clusters('dup_idx', 'id');
RESET work_mem;
