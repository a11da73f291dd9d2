-- Bad arguments of minhash_similar_pairs and minhash_clusters: clear errors.
-- Every error is followed by its SQLSTATE.

-- A walk longer than 10 s reports progress in NOTICEs: not in expected output
SET client_min_messages = warning;

CREATE TABLE perr (id int PRIMARY KEY, name text, body text, pt point, sig minhash);
INSERT INTO perr VALUES (1, 'a', 'some text', point(1, 1), minhash('some text'::text)),
                        (2, 'b', 'some text', point(2, 2), minhash('some text'::text));
CREATE INDEX perr_idx ON perr USING lsh (sig);
CREATE INDEX perr_btree ON perr (name);

-- not an lsh index: a table, a btree index
SELECT * FROM minhash_similar_pairs('perr', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_btree', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('no_such_index', 'id');
\echo :LAST_ERROR_SQLSTATE
-- NULL index or key column
SELECT * FROM minhash_similar_pairs(NULL, 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_clusters('perr_idx', NULL);
\echo :LAST_ERROR_SQLSTATE
-- no such column
SELECT * FROM minhash_similar_pairs('perr_idx', 'nope');
\echo :LAST_ERROR_SQLSTATE
-- a key that does not convert to the result type
SELECT * FROM minhash_similar_pairs('perr_idx', 'name');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_idx', 'name', key_type => NULL::int);
\echo :LAST_ERROR_SQLSTATE
-- keys must have an order to name clusters (point has none)
SELECT * FROM minhash_similar_pairs('perr_idx', 'pt', NULL::point);
SELECT * FROM minhash_clusters('perr_idx', 'pt', NULL::point);
\echo :LAST_ERROR_SQLSTATE
-- threshold outside [0, 1] or not a number
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', 1.5);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', -0.1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_clusters('perr_idx', 'id', 'NaN'::float8);
\echo :LAST_ERROR_SQLSTATE
-- unknown clustering mode
SELECT * FROM minhash_clusters('perr_idx', 'id', mode => 'transitive');
\echo :LAST_ERROR_SQLSTATE
-- exact verification without a text, with bad shingle options
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', exact => true);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', exact => true, text_column => 'nope');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', exact => true, text_column => 'pt');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', exact => true, text_column => 'body', unit => 'sentence');
\echo :LAST_ERROR_SQLSTATE
-- the hints name no argument the pairs functions lack (minhash()'s config
-- and ignore, its document passed second), and a long value is cut
SELECT * FROM minhash_clusters('perr_idx', 'id', exact => true, text_column => 'body', unit => 'english');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', exact => true, text_column => 'body', unit => 'accents');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', exact => true, text_column => 'body', unit => repeat('long text ', 100));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', exact => true, text_column => 'body', k => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', exact => true, text_column => 'body', k => 300);
\echo :LAST_ERROR_SQLSTATE
-- shingle options without exact
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', text_column => 'body');
\echo :LAST_ERROR_SQLSTATE
-- the same call, corrected
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', exact => true, text_column => 'body', k => 2);

-- A NULL threshold in third place (sixth for minhash_match): untyped, it
-- fits both the threshold and the key_type overload, which PostgreSQL cannot
-- choose between (42725, docs/pairs.md); by name, typed or left out it is
-- the setting minhash.similarity_threshold.
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_clusters('perr_idx', 'id', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_match('perr_idx', 'id', 'perr', 'id', 'sig', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', threshold => NULL);
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', NULL::float8);
SELECT * FROM minhash_clusters('perr_idx', 'id', threshold => NULL);
SELECT * FROM minhash_match('perr_idx', 'id', 'perr', 'id', 'sig', threshold => NULL) ORDER BY 1, 2;
-- so is a parameter of no declared type (a driver preparing on the server)
PREPARE untyped_third AS SELECT * FROM minhash_similar_pairs($1, $2, $3);
\echo :LAST_ERROR_SQLSTATE
PREPARE named_third AS SELECT * FROM minhash_similar_pairs($1, $2, threshold => $3);
EXECUTE named_third('perr_idx', 'id', NULL);
DEALLOCATE named_third;
-- a typed integer NULL in third place is the threshold: keys stay bigint
SELECT pg_typeof(key_a), * FROM minhash_similar_pairs('perr_idx', 'id', NULL::int);
-- minhash_match's third place is batch (regclass), to which an integer
-- casts implicitly: an integer key_type there is ambiguous too; by name it
-- is the key type
SELECT * FROM minhash_match('perr_idx', 'id', NULL::int, 'perr', 'id', 'sig');
\echo :LAST_ERROR_SQLSTATE
SELECT pg_typeof(key), * FROM minhash_match('perr_idx', 'id', key_type => NULL::int, batch => 'perr',
                                            batch_key_column => 'id', batch_sig_column => 'sig') ORDER BY 2, 3;

-- privileges: SELECT on the columns read (key, signature, text), no row-level security
CREATE ROLE regress_pairs_reader;
SET ROLE regress_pairs_reader;
SELECT * FROM minhash_similar_pairs('perr_idx', 'id');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT SELECT (id) ON perr TO regress_pairs_reader;
SET ROLE regress_pairs_reader;
SELECT * FROM minhash_similar_pairs('perr_idx', 'id');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT SELECT (sig) ON perr TO regress_pairs_reader;
SET ROLE regress_pairs_reader;
SELECT * FROM minhash_similar_pairs('perr_idx', 'id');
SELECT * FROM minhash_similar_pairs('perr_idx', 'id', exact => true, text_column => 'body');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT SELECT ON perr TO regress_pairs_reader;
ALTER TABLE perr ENABLE ROW LEVEL SECURITY;
CREATE POLICY perr_first ON perr FOR SELECT USING (id = 1);
SET ROLE regress_pairs_reader;
SELECT * FROM minhash_similar_pairs('perr_idx', 'id');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP TABLE perr;
DROP ROLE regress_pairs_reader;

-- an index left invalid by a failed build
CREATE TABLE perr2 (id int, sig minhash);
INSERT INTO perr2 VALUES (1, minhash('a'::text)), (2, minhash('b'::text, num_perm => 64));
CREATE INDEX CONCURRENTLY perr2_idx ON perr2 USING lsh (sig);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_similar_pairs('perr2_idx', 'id');
\echo :LAST_ERROR_SQLSTATE
DROP TABLE perr2;

-- an OID that names no relation (a dropped index, a typo'd number): as
-- PostgreSQL says it, not "is not an lsh index"
SELECT * FROM minhash_similar_pairs(0, 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_clusters(0, 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_stats(0);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_lsh_clean_pending_list(0);
\echo :LAST_ERROR_SQLSTATE
