-- Words from PostgreSQL's text search: minhash(doc, config => ...) and
-- minhash_shingles(doc, [k,] config => ...) shingle the lexemes of
-- to_tsvector(config, doc) in document order. Every error is followed by its SQLSTATE.

-- Stop words dropped, words stemmed: the lexemes, in document order
-- (to_tsvector lists them alphabetically, with positions).
SELECT to_tsvector('english', 'The cats were sitting on the mats, and the dogs sat by the doors');
SELECT minhash_shingles('The cats were sitting on the mats, and the dogs sat by the doors', 1, config => 'english');
SELECT minhash_shingles('The cats were sitting on the mats, and the dogs sat by the doors', 0, config => 'english');
SELECT minhash_shingles('The cats were sitting on the mats, and the dogs sat by the doors', 3, config => 'english');
-- simple: no stop words, no stemming, lower-cased: the same words as the default unit
SELECT minhash_shingles('The cats were sitting on the mats', 2, config => 'simple')
     = minhash_shingles('The cats were sitting on the mats', 2) AS simple_is_word;
SELECT minhash('The cats were sitting on the mats', config => 'simple', k => 2)
     = minhash('The cats were sitting on the mats', k => 2) AS simple_signature_is_word;
-- any regconfig, by name or OID; a lexeme is one word even with punctuation in it
SELECT minhash_shingles('Mail info@example.com about version 15.4', 2, 'english'::regconfig);
SELECT minhash_shingles('Mail info@example.com about version 15.4', 2);

-- What it changes: the default word unit sees different words, english sees the same stems
SELECT round(jaccard(minhash(a), minhash(b))::numeric, 2) AS word,
       round(jaccard(minhash(a, config => 'english'), minhash(b, config => 'english'))::numeric, 2) AS english
FROM (VALUES ('The quick brown foxes were jumping over the lazy dogs',
              'A quick brown fox jumped over lazy dogs')) v(a, b);

-- A user's own configuration: english without stemming (stop words only)
CREATE TEXT SEARCH DICTIONARY english_stop_only (TEMPLATE = simple, STOPWORDS = english);
CREATE TEXT SEARCH CONFIGURATION english_nostem (COPY = english);
ALTER TEXT SEARCH CONFIGURATION english_nostem
    ALTER MAPPING FOR asciiword, word WITH english_stop_only;
SELECT minhash_shingles('The cats were sitting on the mats', 2, config => 'english_nostem');

-- families and parameters combine; fewer lexemes than k give one shingle; none give the empty set
SELECT minhash('The cats sat', config => 'english', num_perm => 4, seed => 9, family => 'datasketch');
SELECT minhash('The cats sat', config => 'english', num_perm => 4, seed => 9, family => 'datasketch')
     = minhash(ARRAY['cat sat'], family => 'datasketch', num_perm => 4, seed => 9) AS lexeme_shingle_bytes;
SELECT minhash('the and of', config => 'english', num_perm => 4), minhash_shingles('the and of', 0, config => 'english');
SELECT minhash('', config => 'english', num_perm => 4);
-- non-ASCII text through a configuration
SELECT minhash_shingles('Die Straßen und die Häuser der Stadt', 2, config => 'german');
SELECT minhash_shingles('text', 0, config => 'english'), minhash_shingles('text', 300, config => 'english');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('text', config => 'no_such_config');
\echo :LAST_ERROR_SQLSTATE
-- a configuration given positionally is read as a unit: the hint names config =>
SELECT minhash('text', 'english');
\echo :LAST_ERROR_SQLSTATE

-- IMMUTABLE only with an explicit configuration, as to_tsvector(regconfig, text)
SELECT p.oid::regprocedure, p.provolatile
FROM pg_proc p WHERE p.proname IN ('minhash', 'minhash_shingles')
  AND 'regconfig'::regtype = ANY (p.proargtypes) ORDER BY 1::text;

-- Expression indexes and the pairs functions
CREATE TEMP TABLE articles (id int PRIMARY KEY, body text);
INSERT INTO articles VALUES
  (1, 'The committee approved the new budget for the city parks on Monday'),
  (2, 'A committee approves new budgets for city parks on Mondays'),
  (3, 'The weather was cold and rainy for most of the week'),
  (4, 'Weather: cold, rainy for most of this week'),
  (5, 'An entirely different sentence about astronomy and distant galaxies');
CREATE INDEX articles_lsh ON articles USING lsh (minhash(body, config => 'english', k => 2, num_perm => 64));
SET enable_seqscan = off;
SET plan_cache_mode = force_generic_plan;
PREPARE q(text) AS SELECT id FROM articles
WHERE minhash(body, config => 'english', k => 2, num_perm => 64) % minhash($1, config => 'english', k => 2, num_perm => 64);
EXPLAIN (COSTS OFF) EXECUTE q('committee approves the new budget for city parks Monday');
DEALLOCATE q;
RESET plan_cache_mode;
SELECT id FROM articles
WHERE minhash(body, config => 'english', k => 2, num_perm => 64)
    % minhash('committee approves the new budget for city parks Monday', config => 'english', k => 2, num_perm => 64)
ORDER BY id;
RESET enable_seqscan;
SELECT key_a, key_b, round(similarity::numeric, 2) AS similarity
FROM minhash_similar_pairs('articles_lsh', 'id', threshold => 0.5) ORDER BY 1, 2;
SELECT key, cluster_id FROM minhash_clusters('articles_lsh', 'id', threshold => 0.5) ORDER BY 1;
-- the default word unit finds no pair among the same rows
SELECT count(*) AS word_pairs FROM articles a JOIN articles b ON a.id < b.id
WHERE jaccard(minhash(a.body, k => 2, num_perm => 64), minhash(b.body, k => 2, num_perm => 64)) >= 0.5;
-- exact => true verifies on the lexeme shingles of the index's configuration and k
SELECT key_a, key_b, round(similarity::numeric, 2) AS similarity
FROM minhash_similar_pairs('articles_lsh', 'id', threshold => 0.5, exact => true) ORDER BY 1, 2;
SELECT jaccard(minhash_shingles(a.body, 2, config => 'english'), minhash_shingles(b.body, 2, config => 'english'))
FROM articles a, articles b WHERE a.id = 3 AND b.id = 4;
-- the same with text_column; naming a unit overrides the configuration (then nothing is that similar)
SELECT count(*) FROM minhash_similar_pairs('articles_lsh', 'id', threshold => 0.5, exact => true, text_column => 'body');
SELECT count(*) FROM minhash_similar_pairs('articles_lsh', 'id', threshold => 0.5, exact => true, unit => 'word');
