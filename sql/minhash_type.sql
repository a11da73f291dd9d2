-- Type minhash: text and binary I/O, typmod, casts to and from bigint[].
-- Every error is followed by its SQLSTATE.

-- Text form seed:[v1,...,vk]; whitespace around tokens is allowed, the output
-- is canonical; the seed is a signed 64-bit integer, values unsigned 32-bit.
SELECT '1:[12,34,56]'::minhash;
SELECT ' 7 : [ 0 ,4294967295 ,	1 ] '::minhash;
SELECT '-9223372036854775808:[5]'::minhash, '9223372036854775807:[5]'::minhash, '+3:[5]'::minhash;
SELECT minhash_num_perm('1:[12,34,56]'), minhash_seed('-5:[1]');

-- text round trip of computed signatures of every size class
SELECT k, (s::text)::minhash = s AS round_trip, minhash_num_perm(s) = k AS k_kept
FROM (SELECT k, minhash('the quick brown fox jumps over the lazy dog'::text, num_perm => k, seed => -42) AS s
      FROM unnest(ARRAY[1, 2, 127, 128, 1024]) k) t;

-- 1024 values is the maximum
SELECT minhash_num_perm(('1:[' || array_to_string(array_fill(7, ARRAY[1024]), ',') || ']')::minhash);
SELECT ('1:[' || array_to_string(array_fill(7, ARRAY[1025]), ',') || ']')::minhash;
\echo :LAST_ERROR_SQLSTATE

-- malformed literals: 22P02, naming the text (cut after 64 bytes)
SELECT ''::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT 'x'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT '1[1,2]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT '1:1,2]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[1,,2]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[1,2'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[1 2]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[1,2] 3'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[-1]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[4294967296]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT '9223372036854775808:[1]'::minhash;
\echo :LAST_ERROR_SQLSTATE

-- NULL in, NULL out
SELECT NULL::minhash IS NULL AS is_null, minhash_num_perm(NULL) IS NULL AS strict;

-- typmod minhash(k)
SELECT format_type('minhash'::regtype, 128);
CREATE TEMP TABLE sig3 (id int, s minhash(3));
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'sig3'::regclass AND attname = 's';
INSERT INTO sig3 VALUES (1, '1:[1,2,3]');
INSERT INTO sig3 VALUES (2, '2:[4,5,6]'::minhash);
-- assignment with another k: 22023, shorter or longer
INSERT INTO sig3 VALUES (3, '1:[1,2]');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO sig3 VALUES (3, '1:[1,2,3,4]'::minhash);
\echo :LAST_ERROR_SQLSTATE
UPDATE sig3 SET s = minhash('some text'::text);
\echo :LAST_ERROR_SQLSTATE
-- an explicit cast shortens (a prefix is a valid signature), never lengthens
SELECT '1:[1,2,3,4]'::minhash::minhash(2), CAST('1:[1,2,3,4]'::minhash AS minhash(4));
INSERT INTO sig3 VALUES (3, minhash('some text'::text)::minhash(3));
SELECT id, minhash_num_perm(s) FROM sig3 ORDER BY id;
SELECT minhash('some text'::text)::minhash(3) = minhash('some text'::text, num_perm => 3) AS prefix_is_smaller_signature;
SELECT '1:[1,2]'::minhash::minhash(3);
\echo :LAST_ERROR_SQLSTATE
-- invalid modifiers: 22023
SELECT '1:[1]'::minhash(0);
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[1]'::minhash(1025);
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[1]'::minhash(1, 2);
\echo :LAST_ERROR_SQLSTATE

-- binary round trip through send/recv: COPY ... (FORMAT binary) to a file and back
SELECT minhash_send('1:[1,2]') AS wire_format;
CREATE TEMP TABLE sigs (id int, s minhash);
INSERT INTO sigs VALUES
    (1, '1:[1,2,3]'),
    (2, '-1:[4294967295]'),
    (3, minhash('binary round trip of a computed signature'::text, num_perm => 1024, seed => 99)),
    (4, NULL);
SELECT '/tmp/minhash_regress_' || pg_backend_pid() || '.bin' AS binfile \gset
SELECT format('cat %s && rm -f %s', :'binfile', :'binfile') AS readcmd \gset
COPY sigs TO :'binfile' WITH (FORMAT binary);
CREATE TEMP TABLE sigs_back (LIKE sigs);
COPY sigs_back FROM PROGRAM :'readcmd' WITH (FORMAT binary);
SELECT a.id, a.s = b.s AS equal, a.s::text = b.s::text AS same_text, b.s IS NULL AS null_kept
FROM sigs a JOIN sigs_back b USING (id) ORDER BY id;
-- recv enforces the column's typmod
COPY (SELECT 1, s FROM sigs WHERE id = 1) TO :'binfile' WITH (FORMAT binary);
CREATE TEMP TABLE sigs_k2 (id int, s minhash(2));
COPY sigs_k2 FROM PROGRAM :'readcmd' WITH (FORMAT binary);
\echo :LAST_ERROR_SQLSTATE
-- recv rejects malformed binary data: the bytes of a bytea column written
-- with COPY (FORMAT binary) are read back as a minhash field
CREATE TEMP TABLE raw_sigs (id int, bytes bytea);
INSERT INTO raw_sigs VALUES
    (1, '\x010000010000000000000001000000ff'),      -- valid: 1:[255]
    (2, '\x020000010000000000000001000000ff'),      -- version 2
    (3, '\x014000010000000000000001000000ff'),      -- reserved flag bit set
    (4, '\x01000000000000000000000100'),            -- num_perm 0
    (5, '\x01000401000000000000000100'),            -- num_perm 1025
    (6, '\x010000020000000000000001000000ff'),      -- 2 values announced, 1 sent
    (7, '\x010000010000000000000001000000ff00');    -- trailing byte
CREATE TEMP TABLE sigs_raw_back (id int, s minhash);
DO $$
DECLARE
    r record;
    f text := '/tmp/minhash_regress_raw_' || pg_backend_pid() || '.bin';
BEGIN
    FOR r IN SELECT id FROM raw_sigs ORDER BY id LOOP
        EXECUTE format('COPY (SELECT id, bytes FROM raw_sigs WHERE id = %s) TO %L WITH (FORMAT binary)', r.id, f);
        BEGIN
            EXECUTE format('COPY sigs_raw_back FROM %L WITH (FORMAT binary)', f);
            RAISE NOTICE 'row %: accepted', r.id;
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE 'row %: % %', r.id, SQLSTATE, SQLERRM;
        END;
    END LOOP;
    EXECUTE format('COPY (SELECT 1 WHERE false) TO PROGRAM %L', 'rm -f ' || f);
END
$$;
SELECT * FROM sigs_raw_back;

-- text COPY uses minhash_in with the column's typmod
COPY sigs_k2 FROM stdin;
1	1:[10,20]
2	1:[10,20,30]
\.
\echo :LAST_ERROR_SQLSTATE

-- export and import as bigint[]; the seed is given on import (default 1)
SELECT '7:[0,4294967295,12]'::minhash::bigint[] AS exported, minhash_to_array('7:[5]');
SELECT '{0,4294967295,12}'::bigint[]::minhash AS cast_seed_1,
       minhash_from_array('{0,4294967295,12}') AS default_seed,
       minhash_from_array('{0,4294967295,12}', 7) AS seed_7,
       minhash_from_array(minhash_to_array('-3:[8,9]'), -3) = '-3:[8,9]' AS round_trip;
-- by name: the first parameter, "values", is an SQL keyword and is quoted
SELECT minhash_from_array("values" => '{5,6}', seed => 9) AS named;
SELECT minhash_from_array('{1,-1}');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_from_array('{4294967296}');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_from_array('{}');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_from_array('{1,NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_from_array('{{1,2},{3,4}}');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_from_array(array_fill(1::bigint, ARRAY[1025]));
\echo :LAST_ERROR_SQLSTATE

-- minhash(x) with one argument would also be the cast syntax; minhash(unknown)
-- makes a bare literal a document, as in WHERE minhash(body) % minhash('query')
SELECT minhash('a short document') = minhash('a short document'::text) AS literal_is_document,
       minhash('a short document'::text) = minhash('a short document', 'word') AS typed_is_document;
SELECT minhash_num_perm(minhash('1:[5,6]')) AS literal_is_a_document,
       minhash_num_perm('1:[5,6]'::minhash) AS cast_is_a_signature;
SELECT minhash(NULL) IS NULL AS null_literal;
