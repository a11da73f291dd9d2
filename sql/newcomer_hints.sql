-- Mistakes a newcomer makes, and the errors and warnings that point the way.
\set VERBOSITY default
CREATE TABLE nh (id int, body text, v varchar, b char(30), tags text[], n int);
INSERT INTO nh VALUES (1, 'the quick brown fox jumps over the lazy dog', 'the quick brown fox',
                       'the quick brown fox', '{a,b}', 1);

-- A number as the second argument (meant as the shingle size k, or as
-- num_perm): an error whose hint names the argument, for a column of any text
-- type, a literal, and with more arguments after it. SQLSTATE 42883, as the
-- "function does not exist" it replaces.
SELECT minhash(body, 3) FROM nh;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('the quick brown fox', 3);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash(v, 3, 256) FROM nh;
\echo :LAST_ERROR_SQLSTATE
-- for a text document too, where an integer also casts implicitly to the
-- regconfig of minhash(doc, config, k, ...): not "is not unique" (42725),
-- with three, four and five numbers and a unit in k's place
SELECT minhash(body, 3, 256) FROM nh;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('the quick brown fox', 3, 256);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash(body, 3, 256, 7) FROM nh;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash(body, 3, 256, 7, 8::bigint) FROM nh;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash(body, 3, 'char') FROM nh;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash(body, n, body) FROM nh;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash(b, 2) FROM nh;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash(body, NULL::int) FROM nh;
\echo :LAST_ERROR_SQLSTATE
-- With bits named, a number second goes to the text search
-- overload instead (an integer casts implicitly to regconfig): no
-- configuration has that OID, and the hint names the argument. The same for
-- minhash_shingles' third argument. SQLSTATE 42704, as regconfig's input.
SELECT minhash(body, 3, bits => 16) FROM nh;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_shingles(body, 2, 3) FROM nh;
\echo :LAST_ERROR_SQLSTATE
-- and with bits or family named, a unit second goes to the overload of
-- ignore (a domain over text): the hint names the unit's argument
SELECT minhash(body, 'char', bits => 16) FROM nh;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash(body, 'char', family => 'oph') FROM nh;
\echo :LAST_ERROR_SQLSTATE
-- and a text search configuration there: the hint names config
SELECT minhash(body, 'english', bits => 16) FROM nh;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_family(minhash(body, unit => 'char', family => 'oph')) FROM nh;
-- the spellings the hint suggests work, and mean what they say
SELECT minhash(body, k => 3) = minhash(body, 'word', 3) AS k_named,
       minhash_num_perm(minhash(body, num_perm => 3)) AS num_perm_named
FROM nh;
-- a literal or NULL unit still goes to the text function
SELECT minhash(body, 'char') = minhash(body, unit => 'char') AS unit_positional,
       minhash(body, NULL) IS NULL AS null_unit
FROM nh;
-- arrays keep num_perm second
SELECT minhash_num_perm(minhash(tags, 64)) FROM nh;

-- minhash(body, 'char', 128) means k = 128, a shingle of 128 characters:
-- almost certainly meant as num_perm. It works, with a warning that says how
-- to write num_perm, once per call in the query (not once per row).
SELECT minhash_num_perm(minhash(body, 'char', 128)) AS num_perm FROM nh;
SELECT count(minhash(body || g, 'word', 64)) FROM nh, generate_series(1, 5) g;
-- shingle sizes below 64 are not questioned
SELECT minhash_num_perm(minhash(body, 'char', 63)) FROM nh;

-- A driver's untyped parameter (psycopg 3, node-postgres) in minhash($1)
-- matches minhash(unknown), the overload that makes minhash('a literal') a
-- signature rather than a cast, and its type stays undetermined: the README
-- tells client programs to write minhash($1::text).
PREPARE untyped AS SELECT minhash($1);
\echo :LAST_ERROR_SQLSTATE
PREPARE typed AS SELECT minhash($1::text) = minhash('the quick brown fox');
EXECUTE typed('the quick brown fox');
DEALLOCATE typed;

-- An lsh index on the text (or array) instead of its signature: the error
-- names the expression to index.
CREATE INDEX ON nh USING lsh (body);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX ON nh USING lsh (v);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX ON nh USING lsh (tags);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX ON nh USING lsh (lower(body));
\echo :LAST_ERROR_SQLSTATE
-- also on an empty table (the build runs, with no rows), and for an unlogged one
CREATE UNLOGGED TABLE nh_empty (body text);
CREATE INDEX ON nh_empty USING lsh (body);
\echo :LAST_ERROR_SQLSTATE
-- a type that is neither: PostgreSQL's own error
CREATE INDEX ON nh USING lsh (n);
\echo :LAST_ERROR_SQLSTATE
-- what the hint says works
CREATE INDEX nh_body_idx ON nh USING lsh (minhash(body));
CREATE INDEX nh_tags_idx ON nh USING lsh (minhash(tags));
SET enable_seqscan = off;
SELECT id FROM nh WHERE minhash(body) % minhash('the quick brown fox jumps over the lazy dog');
RESET enable_seqscan;

DROP TABLE nh, nh_empty;

-- arguments swapped: the document where the unit goes is echoed only in
-- part, and the hint says the document comes first
SELECT minhash('char', repeat('The quick brown fox jumps over the lazy dog. ', 1000));
\echo :LAST_ERROR_SQLSTATE
-- the same in minhash_shingles, whose unit comes after k: its hint names it
SELECT minhash_shingles('char', 9, repeat('The quick brown fox jumps over the lazy dog. ', 1000));
\echo :LAST_ERROR_SQLSTATE
-- a text where a signature is expected
SELECT minhash('the quick brown fox'::text) % 'the quick brown fox';
\echo :LAST_ERROR_SQLSTATE
-- a long unknown value is cut too
SELECT count(*) FROM minhash_clusters('pg_class_oid_index', 'oid', mode => repeat('connected', 100));
\echo :LAST_ERROR_SQLSTATE
