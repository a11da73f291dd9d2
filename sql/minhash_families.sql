-- Hash families: the datasketch family against datasketch's own outputs,
-- families recorded in the signature, mixed families rejected, 1.0 values
-- read as native. Every error is followed by its SQLSTATE.

-- datasketch.MinHash(num_perm=k, seed=s).hashvalues for shingle lists
-- (tests/vectors/gen_datasketch.py ran datasketch itself): 4 k x 4 seeds x 5
-- documents, non-ASCII text and the empty string among them.
CREATE TEMP TABLE ds_raw (kind text, a text, b text, c text, d text, e text);
\copy ds_raw FROM PROGRAM 'grep ^sig tests/vectors/datasketch.tsv'
CREATE TEMP VIEW ds AS
SELECT a::int AS k, b::bigint AS seed, c AS doc,
       ARRAY(SELECT jsonb_array_elements_text(d::jsonb)) AS shingles,
       ARRAY(SELECT jsonb_array_elements_text(e::jsonb)::bigint) AS hashvalues
FROM ds_raw WHERE kind = 'sig';

SELECT count(*) AS vectors,
       count(*) FILTER (WHERE minhash(shingles, family => 'datasketch', num_perm => k, seed => seed)
                              = minhash_from_array(hashvalues, 'datasketch', seed)) AS equal,
       count(DISTINCT k) AS ks, count(DISTINCT seed) AS seeds, count(DISTINCT doc) AS docs
FROM ds;

-- The values themselves, for one vector: what minhash_to_array exports is
-- what datasketch computed.
SELECT minhash_to_array(minhash(shingles, family => 'datasketch', num_perm => k, seed => seed)) = hashvalues AS same
FROM ds WHERE k = 16 AND seed = 42 AND doc = 'nonascii';

-- A document's shingles are hashed as their UTF-8 bytes: the datasketch
-- signature of the text equals datasketch's over minhash_shingles(text).
SELECT minhash('The quick brown fox jumps over the lazy dog', family => 'datasketch',
               num_perm => k, seed => seed)
       = minhash_from_array(hashvalues, 'datasketch', seed) AS text_equals_datasketch
FROM ds WHERE doc = 'words' ORDER BY k, seed;
SELECT minhash_shingles('The quick brown fox jumps over the lazy dog')
       = (SELECT shingles FROM ds WHERE doc = 'words' LIMIT 1) AS same_shingles;

-- The family is part of the signature and of its text form.
SELECT minhash(ARRAY['a', 'b'], family => 'datasketch', num_perm => 4, seed => 42);
SELECT minhash_family(minhash(ARRAY['a', 'b'], family => 'datasketch')),
       minhash_family(minhash(ARRAY['a', 'b'])),
       minhash_family(minhash(ARRAY['a', 'b'], family => 'native'));
SELECT minhash(ARRAY['a', 'b'], family => 'native') = minhash(ARRAY['a', 'b']) AS native_is_default;
SELECT 'datasketch:42:[1,2,3]'::minhash, ' datasketch : 7 : [ 1 ] '::minhash,
       'native:5:[1]'::minhash, minhash_family('5:[1]'::minhash);
SELECT 'murmur:1:[1]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT 'datasketch 1:[1]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT 'datasketch:-1:[1]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT 'datasketch:4294967296:[1]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('some text', family => 'datasketch', seed => 4294967296);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('some text', family => 'murmur3');
\echo :LAST_ERROR_SQLSTATE
-- binary round trip keeps the family (flags byte 1)
SELECT minhash_send('datasketch:42:[1,2]'), minhash_send('42:[1,2]');
CREATE TEMP TABLE fam (id int, sig minhash);
INSERT INTO fam VALUES (1, 'datasketch:42:[1,2]'), (2, '42:[1,2]');
\copy fam TO 'results/minhash_families.copy' WITH (FORMAT binary)
CREATE TEMP TABLE fam2 (LIKE fam);
\copy fam2 FROM 'results/minhash_families.copy' WITH (FORMAT binary)
SELECT f.id, f.sig, f.sig = g.sig AS same FROM fam f JOIN fam2 g USING (id) ORDER BY id;
-- a shorter typmod keeps the family
SELECT 'datasketch:42:[1,2,3]'::minhash::minhash(2);

-- Imports name their family and seed; the bare cast is the native family
-- with seed 1, as in 1.0.
SELECT minhash_from_array(ARRAY[1, 2, 3], 'datasketch', 42), ARRAY[1, 2, 3]::bigint[]::minhash,
       minhash_from_array(ARRAY[1, 2, 3], 'native', 9);
SELECT minhash_from_array(ARRAY[1, 2, 3], 'datasketch', -1);
\echo :LAST_ERROR_SQLSTATE

-- Mixed families are rejected by everything that estimates, with a hint.
\set VERBOSITY default
SELECT jaccard(minhash('a b c', family => 'datasketch'), minhash('a b c'));
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('a b c', family => 'datasketch') % minhash('a b c');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('a b c', family => 'datasketch') <%> minhash('a b c');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('a b c', family => 'datasketch') | minhash('a b c');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_merge_agg(s) FROM (VALUES (minhash('a', family => 'datasketch')), (minhash('a'))) v(s);
\echo :LAST_ERROR_SQLSTATE
-- exact equality is total: different families are simply not equal
SELECT minhash('a b c', family => 'datasketch') = minhash('a b c') AS eq,
       minhash('a b c', family => 'datasketch') <> minhash('a b c') AS ne;

-- An lsh index holds one family: others are rejected on insert and query.
CREATE TEMP TABLE lshfam (id int, sig minhash);
INSERT INTO lshfam SELECT i, minhash(ARRAY[i, i + 1, i + 2], family => 'datasketch', num_perm => 32, seed => 7)
FROM generate_series(1, 200) i;
CREATE INDEX lshfam_idx ON lshfam USING lsh (sig);
SET enable_seqscan = off;
SELECT id FROM lshfam
WHERE sig % minhash(ARRAY[10, 11, 12], family => 'datasketch', num_perm => 32, seed => 7) ORDER BY id;
SELECT id FROM lshfam WHERE sig % minhash(ARRAY[10, 11, 12], num_perm => 32, seed => 7);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO lshfam VALUES (0, minhash(ARRAY[1], num_perm => 32, seed => 7));
\echo :LAST_ERROR_SQLSTATE
RESET enable_seqscan;
SELECT key_a, key_b, round(similarity::numeric, 3) AS similarity
FROM minhash_similar_pairs('lshfam_idx', 'id', threshold => 0.4) ORDER BY 1, 2 LIMIT 3;

-- 1.0's binary form (flags 0, tests/vectors/gen_binary_1_0.py) reads as native,
-- and native signatures are still sent with flags 0, byte for byte as 1.0.
CREATE TEMP TABLE old10 (id int, sig minhash);
\copy old10 FROM 'tests/vectors/minhash-1.0.copy' WITH (FORMAT binary)
SELECT id, sig, minhash_family(sig), minhash_send(sig) FROM old10 ORDER BY id;
SELECT sig = ('1:[12,34,56]'::minhash) AS text_1_0_equal FROM old10 WHERE id = 1;

-- an unknown family or reserved bits in the binary form are rejected
CREATE TEMP TABLE badflags (id int, sig minhash);
\copy badflags FROM 'tests/vectors/minhash-badflags.copy' WITH (FORMAT binary)
\set VERBOSITY sqlstate
\copy badflags FROM 'tests/vectors/minhash-badflags.copy' WITH (FORMAT binary)
\set VERBOSITY default

-- Signatures stored under 1.0 and an lsh index built under 1.0 read as
-- native after ALTER EXTENSION minhash UPDATE.
SELECT current_database() AS regress_db \gset
CREATE DATABASE minhash_families_v10;
\c minhash_families_v10
CREATE EXTENSION minhash VERSION '1.0';
CREATE TABLE stored (id int, body text, sig minhash);
INSERT INTO stored SELECT i, 'row ' || i || ' of the quick brown fox jumps over the lazy dog',
                          minhash('row ' || i || ' of the quick brown fox jumps over the lazy dog', num_perm => 32)
FROM generate_series(1, 50) i;
CREATE INDEX stored_lsh ON stored USING lsh (sig);
ALTER EXTENSION minhash UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'minhash';
SELECT count(*) AS rows, count(*) FILTER (WHERE minhash_family(sig) = 'native') AS native,
       count(*) FILTER (WHERE sig = minhash(body, num_perm => 32)) AS equal_to_new
FROM stored;
SET enable_seqscan = off;
SELECT id FROM stored WHERE sig % minhash('row 7 of the quick brown fox jumps over the lazy dog', num_perm => 32) ORDER BY id LIMIT 3;
SELECT id FROM stored WHERE sig % minhash('row 7 of the quick brown fox jumps over the lazy dog', family => 'datasketch', num_perm => 32);
\echo :LAST_ERROR_SQLSTATE
RESET enable_seqscan;
SELECT count(DISTINCT sig) FROM stored;
\c :regress_db
DROP DATABASE minhash_families_v10;

-- exact verification on an index over minhash(text, family => ..., unit, k)
-- uses the index's unit and k (the family does not change exact similarity)
CREATE TEMP TABLE dsdocs (id int PRIMARY KEY, body text);
INSERT INTO dsdocs VALUES (1, 'a b c d e f g h'), (2, 'a b c d e f g x'), (3, 'p q r s t u v w');
CREATE INDEX dsdocs_lsh ON dsdocs USING lsh (minhash(body, family => 'datasketch', k => 2, num_perm => 64));
SELECT key_a, key_b, round(similarity::numeric, 3) AS similarity
FROM minhash_similar_pairs('dsdocs_lsh', 'id', threshold => 0.5, exact => true);
SELECT round(jaccard(minhash_shingles('a b c d e f g h', 2), minhash_shingles('a b c d e f g x', 2))::numeric, 3) AS exact_k2;

-- minhash_family('a literal') is the cast to the enum of the same name
-- (22P02); the accessor needs the literal typed
SELECT minhash_family('datasketch:9:[5,6]');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_family('datasketch:9:[5,6]'::minhash) AS accessor, minhash_family('oph') AS cast_of_a_name;
