-- Compact signatures: minhash(..., bits => 16 | 8) and the typmod
-- minhash(k, bits) keep the low bits of each value; the estimate corrects
-- for the values that agree by chance (b-bit minwise hashing); widths never
-- mix; every SQL surface of the type carries the width.
SET extra_float_digits = 0;

-- values keep their low bits: the 16-bit signature is the 32-bit one mod 2^16
CREATE TEMP TABLE w AS
SELECT minhash(d, num_perm => 16) AS s32,
       minhash(d, num_perm => 16, bits => 16) AS s16,
       minhash(d, num_perm => 16, bits => 8) AS s8
FROM (VALUES ('the quick brown fox jumps over the lazy dog and runs away')) v(d);
SELECT minhash_bits(s32) AS bits32, minhash_bits(s16) AS bits16, minhash_bits(s8) AS bits8,
       minhash_num_perm(s16) AS k16, minhash_seed(s8) AS seed8,
       ARRAY(SELECT v % 65536 FROM unnest(minhash_to_array(s32)) v) = minhash_to_array(s16) AS low16,
       ARRAY(SELECT v % 256 FROM unnest(minhash_to_array(s32)) v) = minhash_to_array(s8) AS low8,
       s32::minhash(16, 16) = s16 AS cast_32_16, s16::minhash(16, 8) = s8 AS cast_16_8,
       minhash(ARRAY['a', 'b'], bits => 8, num_perm => 4)
           = minhash(ARRAY['a', 'b'], num_perm => 4)::minhash(4, 8) AS arrays,
       minhash('to be or not', 'english'::regconfig, bits => 16, num_perm => 8)
           = minhash('to be or not', 'english'::regconfig, num_perm => 8)::minhash(8, 16) AS lexemes
FROM w;

-- the text form: a width tag after the family, and back
SELECT minhash('a b c d e f g', num_perm => 4, bits => 16) AS text16,
       minhash('a b c d e f g', num_perm => 4, bits => 8, family => 'datasketch') AS text8;
SELECT 'bits16:1:[0,65535]'::minhash::text AS in_out,
       'bits16:1:[0,65535]'::minhash = minhash_from_array('{0,65535}', 'native', 1, 16) AS from_array,
       ' oph : bits8 : 7 : [ 1, 2 ] '::minhash AS spaces,
       'bits32:1:[5]'::minhash AS bits32_is_plain;
SELECT 'bits16:1:[1,65536]'::minhash;
\echo :LAST_ERROR_SQLSTATE
SELECT 'bits12:1:[1]'::minhash;
\echo :LAST_ERROR_SQLSTATE
-- the family before the width tag, each once: the detail says so rather
-- than that a seed was expected
SELECT 'bits16:oph:1:[1]'::minhash;
SELECT 'oph:oph:1:[1]'::minhash;
SELECT 'bits8:bits16:1:[1]'::minhash;
SELECT minhash_from_array('{1,256}', 'native', 1, 8);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('a b', bits => 12);
\echo :LAST_ERROR_SQLSTATE

-- bits is named only: a positional integer still means what it meant before
SELECT minhash('some text', 16);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash(ARRAY[1, 2, 3], 64, 5) = minhash(ARRAY[1, 2, 3], num_perm => 64, seed => 5) AS positional_num_perm;

-- the typmod minhash(k, bits); minhash(k, 32) is minhash(k)
CREATE TEMP TABLE compact (id int, sig minhash(64, 16), sig8 minhash(64, 8), plain minhash(64, 32));
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'compact'::regclass AND attnum > 0 ORDER BY attnum;
INSERT INTO compact
SELECT i, minhash(d, num_perm => 64, bits => 16), minhash(d, num_perm => 64, bits => 8),
       minhash(d, num_perm => 64)
FROM (SELECT i, 'document number ' || i || ' has some words, ' || repeat('and more ', i % 5) AS d
      FROM generate_series(1, 40) i) s;
-- assignment keeps the width exactly: a 32-bit signature is refused, with the cast as a hint
INSERT INTO compact (id, sig) VALUES (0, minhash('x', num_perm => 64));
\echo :LAST_ERROR_SQLSTATE
INSERT INTO compact (id, sig) VALUES (0, minhash('x', num_perm => 64)::minhash(64, 16));
SELECT sig = minhash('x', num_perm => 64, bits => 16) AS cast_is_bits FROM compact WHERE id = 0;
DELETE FROM compact WHERE id = 0;
-- no cast widens
SELECT minhash('x', bits => 8)::minhash(128, 16);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x', bits => 8)::minhash(128);
\echo :LAST_ERROR_SQLSTATE
-- an explicit cast shortens and narrows at once
SELECT minhash('a b c d e f g', num_perm => 8)::minhash(3, 8)
     = minhash('a b c d e f g', num_perm => 3, bits => 8) AS shorten_and_narrow;
SELECT NULL::minhash(64, 12);
\echo :LAST_ERROR_SQLSTATE
SELECT NULL::minhash(64, 16, 2);
\echo :LAST_ERROR_SQLSTATE

-- The estimate: the share of equal positions m/k corrected for chance
-- agreement of the low bits, (m/k - 2^-b) / (1 - 2^-b), clamped to [0, 1].
CREATE TEMP TABLE pairs AS
SELECT a.id AS a, b.id AS b, a.sig AS a16, b.sig AS b16, a.sig8 AS a8, b.sig8 AS b8,
       a.plain AS a32, b.plain AS b32
FROM compact a JOIN compact b ON a.id < b.id;
CREATE FUNCTION pg_temp.equal_positions(x minhash, y minhash) RETURNS int LANGUAGE sql AS
    $$ SELECT count(*)::int FROM unnest(minhash_to_array(x), minhash_to_array(y)) u(p, q) WHERE p = q $$;
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE jaccard(a16, b16) = greatest(0, least(1,
           (pg_temp.equal_positions(a16, b16) / 64.0 - 2 ^ -16) / (1 - 2 ^ -16)))) AS formula16,
       count(*) FILTER (WHERE jaccard(a8, b8) = greatest(0, least(1,
           (pg_temp.equal_positions(a8, b8) / 64.0 - 2 ^ -8) / (1 - 2 ^ -8)))) AS formula8,
       count(*) FILTER (WHERE jaccard(a32, b32) = pg_temp.equal_positions(a32, b32) / 64.0) AS plain32,
       count(*) FILTER (WHERE jaccard(a8, b8) <= pg_temp.equal_positions(a8, b8) / 64.0) AS never_above_share,
       count(*) FILTER (WHERE abs(jaccard(a16, b16) - jaccard(a32, b32)) > 0.05) AS far_from_32
FROM pairs;
-- identical signatures are 1, and %, <%>, minhash_similar agree with jaccard
SELECT jaccard(sig, sig) AS self16, jaccard(sig8, sig8) AS self8,
       sig % sig AS similar_self, sig <%> sig AS distance_self,
       minhash_similar(sig, sig, 1.0) AS at_one, sig %>= ROW(sig, 1.0)::minhash_query AS query_form
FROM compact WHERE id = 3;
SELECT count(*) FILTER (WHERE (a16 % b16) = (jaccard(a16, b16) >= 0.5)) = count(*) AS percent_is_jaccard,
       count(*) FILTER (WHERE (a16 <%> b16) = 1 - jaccard(a16, b16)) = count(*) AS distance_is_jaccard
FROM pairs;

-- widths never mix: 22023, with the cast as a hint
SELECT jaccard(minhash('a b c'), minhash('a b c', bits => 16));
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('a b c', bits => 16) % minhash('a b c', bits => 8);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('a b c', bits => 8) <%> minhash('a b c');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_similar(minhash('a b c', bits => 8), minhash('a b c'), 0.5);
\echo :LAST_ERROR_SQLSTATE

-- compact values do not merge (the union needs the whole minima): a hint to
-- merge first, then cast; one row has nothing to merge
SELECT minhash('a b', bits => 16) | minhash('c d', bits => 16);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_merge_agg(sig) FROM compact;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_merge_agg(sig) = sig AS one_row FROM compact WHERE id = 7 GROUP BY sig;
SELECT minhash_merge_agg(plain)::minhash(64, 16)
     = (SELECT minhash_merge_agg(plain) FROM compact)::minhash(64, 16) AS merge_then_cast
FROM compact;
SELECT minhash_agg(x)::minhash(128, 8) = minhash(array_agg(x), bits => 8) AS agg_then_cast
FROM generate_series(1, 100) x;
-- the cardinality needs whole minima
SELECT minhash_cardinality(sig) FROM compact WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE

-- equality, order and hashing see the width: 32 bits sort first (after
-- family, seed and num_perm), equal values at another width are not equal
SELECT '1:[5]'::minhash = 'bits16:1:[5]'::minhash AS eq_32_16,
       '1:[5]'::minhash < 'bits16:1:[5]'::minhash AS lt_32_16,
       'bits16:1:[5]'::minhash < 'bits8:1:[5]'::minhash AS lt_16_8,
       'bits16:1:[4]'::minhash < 'bits16:1:[5]'::minhash AS lt_values,
       minhash_hash('bits16:1:[5]') = minhash_hash('bits16:1:[5]') AS hash_stable,
       minhash_hash('bits16:1:[5]') <> minhash_hash('1:[5]') AS hash_width;
SET enable_hashagg = off;
SELECT count(*) AS sorted_groups
FROM (SELECT sig FROM (SELECT sig FROM compact UNION ALL SELECT sig FROM compact) u GROUP BY sig) g;
RESET enable_hashagg;
SET enable_sort = off;
SELECT count(*) AS hashed_groups
FROM (SELECT sig FROM (SELECT sig FROM compact UNION ALL SELECT sig FROM compact) u GROUP BY sig) g;
RESET enable_sort;
SET enable_mergejoin = off;
SET enable_nestloop = off;
SELECT count(*) AS hash_join FROM compact a JOIN compact b ON a.sig = b.sig;
RESET enable_mergejoin;
RESET enable_nestloop;
CREATE INDEX compact_btree ON compact (sig);
SET enable_seqscan = off;
SELECT id FROM compact WHERE sig = (SELECT sig FROM compact WHERE id = 5);
RESET enable_seqscan;

-- the binary form: 2 or 1 bytes a value, the width in the flags byte
SELECT minhash_send('bits16:1:[1,65535]') AS wire16, minhash_send('oph:bits8:1:[1,255]') AS wire8;
SELECT '/tmp/minhash_compact_' || pg_backend_pid() || '.bin' AS binfile \gset
SELECT format('cat %s && rm -f %s', :'binfile', :'binfile') AS readcmd \gset
COPY (SELECT id, sig, sig8 FROM compact) TO :'binfile' WITH (FORMAT binary);
CREATE TEMP TABLE compact_back (id int, sig minhash(64, 16), sig8 minhash);
COPY compact_back FROM PROGRAM :'readcmd' WITH (FORMAT binary);
SELECT count(*) AS rows, count(*) FILTER (WHERE a.sig = b.sig AND a.sig8 = b.sig8) AS equal
FROM compact a JOIN compact_back b USING (id);
-- recv checks the column's typmod (width included) and the value lengths
COPY (SELECT id, sig8 FROM compact WHERE id = 1) TO :'binfile' WITH (FORMAT binary);
CREATE TEMP TABLE compact_16 (id int, sig minhash(64, 16));
COPY compact_16 FROM PROGRAM :'readcmd' WITH (FORMAT binary);
\echo :LAST_ERROR_SQLSTATE
CREATE TEMP TABLE raw16 (id int, bytes bytea);
INSERT INTO raw16 VALUES
    (1, '\x011000020000000000000001ffff0001'),  -- valid: bits16:1:[65535,1]
    (2, '\x0110000200000000000000010001'),      -- 2 values announced, 1 sent
    (3, '\x012000020000000000000001ff01'),      -- valid: bits8:1:[255,1]
    (4, '\x013000010000000000000001ff'),       -- width code 3 does not exist
    (5, '\x01210002ffffffffffffffff0102');      -- datasketch, seed -1: out of its range
CREATE TEMP TABLE raw16_back (id int, s minhash);
DO $$
DECLARE
    r record;
    f text := '/tmp/minhash_compact_raw_' || pg_backend_pid() || '.bin';
BEGIN
    FOR r IN SELECT id FROM raw16 ORDER BY id LOOP
        EXECUTE format('COPY (SELECT id, bytes FROM raw16 WHERE id = %s) TO %L WITH (FORMAT binary)', r.id, f);
        BEGIN
            EXECUTE format('COPY raw16_back FROM %L WITH (FORMAT binary)', f);
            RAISE NOTICE 'row %: accepted', r.id;
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE 'row %: % %', r.id, SQLSTATE, SQLERRM;
        END;
    END LOOP;
    EXECUTE format('COPY (SELECT 1 WHERE false) TO PROGRAM %L', 'rm -f ' || f);
END
$$;
SELECT * FROM raw16_back ORDER BY id;

-- The lsh index over compact signatures: sql/lsh_compact.sql.
