-- Smaller hardening fixes (issue 8, item 5): settings made before the
-- library is loaded, type modifiers, exact verification within work_mem.

-- minhash.similarity_threshold set in a session before the library is
-- loaded: PostgreSQL keeps it in a placeholder it cannot check, and at load
-- drops an invalid value with a WARNING, keeping the default 0.5. The first
-- use of the threshold must fail instead of silently answering at 0.5.
\c
SET minhash.similarity_threshold = 1.5;
SELECT minhash_num_perm('1:[1,2]');
SHOW minhash.similarity_threshold;
SELECT '1:[1,2]'::minhash % '1:[1,3]' AS similar;
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE hard_sig (id int, sig minhash);
INSERT INTO hard_sig SELECT g, minhash(ARRAY[1, 2, 3]) FROM generate_series(1, 3) g;
CREATE INDEX hard_sig_idx ON hard_sig USING lsh (sig);
SELECT count(*) FROM minhash_similar_pairs('hard_sig_idx', 'id');
\echo :LAST_ERROR_SQLSTATE
SET enable_seqscan = off;
SELECT count(*) FROM hard_sig WHERE sig % minhash(ARRAY[1, 2, 3]);
\echo :LAST_ERROR_SQLSTATE
RESET enable_seqscan;
-- an explicit threshold does not read the setting
SELECT count(*) FROM minhash_similar_pairs('hard_sig_idx', 'id', threshold => 0.5);
-- once loaded, the setting is checked when it is set; a valid value clears the error
SET minhash.similarity_threshold = 1.5;
\echo :LAST_ERROR_SQLSTATE
SET minhash.similarity_threshold = 0.4;
SELECT '1:[1,2]'::minhash % '1:[1,3]' AS similar;
-- RESET clears it too
\c
SET minhash.similarity_threshold = 'high';
SELECT minhash_num_perm('1:[1,2]');
SELECT '1:[1,2]'::minhash % '1:[1,3]' AS similar;
\echo :LAST_ERROR_SQLSTATE
RESET minhash.similarity_threshold;
SELECT '1:[1,2]'::minhash % '1:[1,3]' AS similar;
-- a valid value set before loading is kept
\c
SET minhash.similarity_threshold = 0.25;
SELECT '1:[1,2,3,4]'::minhash % '1:[1,5,6,7]' AS similar, current_setting('minhash.similarity_threshold');

-- Type modifiers: -1 is none, anything else is a num_perm from 1 to 1024
-- (22023); no call stores a signature of 0 values
SELECT minhash_enforce_typmod('1:[1,2]', 0, true);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_enforce_typmod('1:[1,2]', -2, true);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_enforce_typmod('1:[1,2]', 1025, false);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_enforce_typmod('1:[1,2]', -1, false) AS no_typmod,
       minhash_enforce_typmod('1:[1,2]', 1, true) AS shortened;
SELECT minhash_in('1:[1]', 0, 0);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO hard_sig VALUES (4, minhash_enforce_typmod('1:[1,2]', 0, true));
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM hard_sig WHERE minhash_num_perm(sig) < 1;

-- Exact verification keeps 8 bytes per distinct shingle of a row, within a
-- quarter of work_mem: a text with more distinct shingles is verified by
-- its estimate, and a NOTICE naming the limit counts such rows, rather than
-- an allocation of any size; a long but repetitive text needs little room
-- and is verified exactly (sql/pairs_exact_bound.sql tells the values apart).
CREATE TABLE hard_docs (id int, body text);
INSERT INTO hard_docs
SELECT g, (SELECT string_agg('w' || i, ' ') FROM generate_series(1, 3000) i) FROM generate_series(1, 2) g;
INSERT INTO hard_docs SELECT g, repeat('a b c d e f g ', 50000) FROM generate_series(3, 4) g;
CREATE INDEX hard_docs_idx ON hard_docs USING lsh (minhash(body));
SET work_mem = '64kB';
SELECT * FROM minhash_similar_pairs('hard_docs_idx', 'id', exact => true) ORDER BY 1, 2;
DELETE FROM hard_docs WHERE id <= 2;
SELECT * FROM minhash_similar_pairs('hard_docs_idx', 'id', exact => true) ORDER BY 1, 2;
RESET work_mem;
INSERT INTO hard_docs
SELECT g, (SELECT string_agg('w' || i, ' ') FROM generate_series(1, 3000) i) FROM generate_series(1, 2) g;
SELECT * FROM minhash_similar_pairs('hard_docs_idx', 'id', exact => true) ORDER BY 1, 2;

-- The same bound for the lexemes of a text search configuration (the index
-- is on minhash(body, config)): the lexeme path was once unbounded.
CREATE INDEX hard_docs_lexeme_idx ON hard_docs USING lsh (minhash(body, 'simple'::regconfig));
SET work_mem = '64kB';
SELECT * FROM minhash_similar_pairs('hard_docs_lexeme_idx', 'id', exact => true) ORDER BY 1, 2;
DELETE FROM hard_docs WHERE id <= 2;
SELECT * FROM minhash_similar_pairs('hard_docs_lexeme_idx', 'id', exact => true) ORDER BY 1, 2;
RESET work_mem;
DROP TABLE hard_sig, hard_docs;
