-- The oph family (one-permutation hashing with optimal densification):
-- family => 'oph' for texts, arrays and lexemes; stored undensified, so |
-- and minhash_merge_agg give exactly the signature of the union; densified
-- when compared, and for the lsh index.
SET extra_float_digits = 0;

SELECT enum_range(NULL::minhash_family) AS families;
SELECT minhash('a b c d e f g h', family => 'oph', num_perm => 8, k => 1) AS eight_words,
       minhash('a b', family => 'oph', num_perm => 8, k => 1) AS two_words;
SELECT minhash_family(minhash('x y', family => 'oph')) AS family,
       minhash_num_perm(minhash('x y', family => 'oph', num_perm => 64)) AS k,
       minhash_bits(minhash('x y', family => 'oph')) AS bits;

-- the text form keeps the empty bins (4294967295) and reads back
SELECT sig::text::minhash = sig AS round_trip,
       minhash_to_array(sig) @> ARRAY[4294967295::bigint] AS has_empty_bins
FROM (SELECT minhash('two words', family => 'oph', num_perm => 32) AS sig) s;

-- units hashed once: with k = 1, a text and the array of its words agree
SELECT minhash('The quick brown fox', family => 'oph', k => 1)
     = minhash(ARRAY['the', 'quick', 'brown', 'fox'], family => 'oph') AS text_is_words;

-- a sketch union is exact: the | of two sketches is the sketch of the union
CREATE TEMP TABLE parts AS
SELECT g, array_agg(w ORDER BY w) AS words
FROM (SELECT i % 4 AS g, 'w' || i AS w FROM generate_series(1, 400) i) s GROUP BY g;
SELECT (SELECT minhash_merge_agg(minhash(words, family => 'oph', num_perm => 64)) FROM parts)
     = minhash((SELECT array_agg(w) FROM parts, unnest(words) w), family => 'oph', num_perm => 64)
       AS merge_agg_is_union,
       (SELECT minhash(words, family => 'oph', num_perm => 64) FROM parts WHERE g = 0)
       | (SELECT minhash(words, family => 'oph', num_perm => 64) FROM parts WHERE g = 1)
     = minhash((SELECT array_agg(w) FROM parts, unnest(words) w WHERE g IN (0, 1)),
               family => 'oph', num_perm => 64) AS bar_is_union;

-- comparisons densify: a set with many empty bins is identical to itself
-- and similar to its near copies, never "similar" through empty bins alone
SELECT jaccard(a, a) AS self, round(jaccard(a, b)::numeric, 2) AS near, jaccard(a, c) AS disjoint
FROM (SELECT minhash('one two three', family => 'oph', k => 1) AS a,
             minhash('one two four', family => 'oph', k => 1) AS b,
             minhash('five six seven', family => 'oph', k => 1) AS c) s;

-- against the exact Jaccard similarity over many pairs, within the error of
-- classic MinHash at k = 128
CREATE TEMP TABLE docs AS
SELECT i, string_agg('w' || ((i * 7 + j * 13) % 300), ' ') AS body
FROM generate_series(1, 30) i, generate_series(1, 60 + i) j GROUP BY i;
SELECT count(*) AS pairs,
       round(avg(abs(jaccard(minhash(a.body, family => 'oph', k => 1), minhash(b.body, family => 'oph', k => 1))
                     - jaccard(regexp_split_to_array(a.body, ' '), regexp_split_to_array(b.body, ' '))))::numeric, 2)
           <= 0.05 AS mean_error_small
FROM docs a JOIN docs b ON a.i < b.i;

-- the cardinality of an undensified sketch
SELECT n, minhash_cardinality(minhash(ARRAY(SELECT generate_series(1, n)), family => 'oph'))
             / n BETWEEN 0.8 AND 1.2 AS close
FROM (VALUES (10), (100), (1000), (100000)) v(n);

-- lexemes
SELECT minhash('The cats are running', 'english'::regconfig, family => 'oph', k => 1)
     = minhash(ARRAY['cat', 'run'], family => 'oph') AS lexemes;

-- compact oph: densified, then the low bits; never merged
SELECT minhash('a b c d e f', family => 'oph', bits => 16, num_perm => 8)
     = minhash('a b c d e f', family => 'oph', num_perm => 8)::minhash(8, 16) AS compact_oph,
       minhash_to_array(minhash('a b', family => 'oph', bits => 16, num_perm => 8, k => 1))
           @> ARRAY[65535::bigint] AS no_empty_marker_left;

-- bins depend on k: no prefix of an oph signature is a signature
SELECT minhash('a b c', family => 'oph', num_perm => 8)::minhash(4);
\echo :LAST_ERROR_SQLSTATE
-- families never mix
SELECT jaccard(minhash('a b c', family => 'oph'), minhash('a b c'));
\echo :LAST_ERROR_SQLSTATE

-- the lsh index sees densified values: a % query through it finds what a
-- sequential scan finds
CREATE FUNCTION pg_temp.explain_json(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON, COSTS OFF) ' || q INTO r;
    RETURN r;
END $$;
CREATE TEMP TABLE ophdocs AS
SELECT i, minhash(body, family => 'oph', k => 1) AS sig FROM docs;
CREATE INDEX ophdocs_lsh ON ophdocs USING lsh (sig) WITH (threshold = 0.3);
SET minhash.similarity_threshold = 0.3;
SET enable_seqscan = off;
SELECT pg_temp.explain_json('SELECT a.i, b.i FROM ophdocs a JOIN ophdocs b ON b.sig % a.sig')
       LIKE '%"Index Name": "ophdocs_lsh"%' AS index_used;
CREATE TEMP TABLE via_index AS
SELECT a.i, b.i AS j FROM ophdocs a JOIN ophdocs b ON b.sig % a.sig;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE via_scan AS
SELECT a.i, b.i AS j FROM ophdocs a JOIN ophdocs b ON b.sig % a.sig;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT (SELECT count(*) FROM via_scan) AS scan_pairs,
       (SELECT count(*) FROM (SELECT * FROM via_scan EXCEPT SELECT * FROM via_index) d) AS missed_by_index,
       (SELECT count(*) FROM (SELECT * FROM via_index EXCEPT SELECT * FROM via_scan) d) AS extra_in_index;
SELECT count(*) AS lsh_check_problems FROM minhash_lsh_check('ophdocs_lsh');

-- compact oph signatures (densified, then narrowed to 16 bits) of small
-- sets (many empty bins; each cluster's rows at similarities 0.1 to 1),
-- through an index's pending list and after VACUUM: % through the index,
-- the pairs walk and minhash_match return no pair the per-row comparison
-- rejects, and the same pairs from the pending list as from the tree
CREATE TEMP TABLE oph16 (i int, sig minhash(128, 16)) WITH (autovacuum_enabled = off);
CREATE INDEX oph16_lsh ON oph16 USING lsh (sig) WITH (threshold = 0.3);
CREATE TEMP TABLE oph16_rows AS
SELECT c * 10 + m AS i,
       minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(1, 4 + c % 40) j WHERE j % 10 >= m),
               family => 'oph', bits => 16) AS sig
FROM generate_series(1, 40) c, generate_series(0, 9) m;
INSERT INTO oph16 SELECT * FROM oph16_rows WHERE i % 2 = 0;
VACUUM oph16;
INSERT INTO oph16 SELECT * FROM oph16_rows WHERE i % 2 = 1;
SELECT live_rows, pending_rows FROM minhash_lsh_stats('oph16_lsh');
CREATE TEMP TABLE oph16_seq AS
SELECT a.i, b.i AS j FROM oph16 a JOIN oph16 b ON jaccard(a.sig, b.sig) >= 0.3;
CREATE TEMP TABLE oph16_got (at text, form text, i int, j int);
CREATE FUNCTION pg_temp.oph16_collect(at text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    INSERT INTO oph16_got SELECT at, '%', a.i, b.i FROM oph16 a JOIN oph16 b ON b.sig % a.sig;
    PERFORM set_config('enable_seqscan', 'on', true);
    INSERT INTO oph16_got SELECT at, 'pairs', key_a, key_b FROM minhash_similar_pairs('oph16_lsh', 'i', 0.3);
    INSERT INTO oph16_got SELECT at, 'match', batch_key, key FROM minhash_match('oph16_lsh', 'i', 'oph16', 'i', 'sig', 0.3);
END $$;
SELECT pg_temp.oph16_collect('pending');
VACUUM oph16;
SELECT pending_rows FROM minhash_lsh_stats('oph16_lsh');
SELECT pg_temp.oph16_collect('tree');
SELECT count(*) AS lsh_check_problems FROM minhash_lsh_check('oph16_lsh', true);
SELECT at, form, count(*) AS found,
       count(*) FILTER (WHERE NOT EXISTS (SELECT FROM oph16_seq s WHERE s.i = g.i AND s.j = g.j)) AS rejected,
       (SELECT count(*) FROM oph16_seq s
        WHERE (form <> 'pairs' OR s.i < s.j)
          AND NOT EXISTS (SELECT FROM oph16_got h WHERE h.at = g.at AND h.form = g.form AND h.i = s.i AND h.j = s.j))
           AS missed
FROM oph16_got g GROUP BY at, form ORDER BY form, at;
SELECT count(*) AS differ_pending_tree
FROM ((SELECT form, i, j FROM oph16_got WHERE at = 'pending' EXCEPT SELECT form, i, j FROM oph16_got WHERE at = 'tree')
      UNION ALL
      (SELECT form, i, j FROM oph16_got WHERE at = 'tree' EXCEPT SELECT form, i, j FROM oph16_got WHERE at = 'pending')) d;
RESET minhash.similarity_threshold;

-- minhash.simd chooses the kernel of the native family: every choice signs alike
SELECT minhash('kernels agree on every bit', num_perm => 256) AS auto_sig \gset
SET minhash.simd = portable;
SELECT minhash('kernels agree on every bit', num_perm => 256) = :'auto_sig' AS portable_same;
SET minhash.simd = avx2;
SELECT minhash('kernels agree on every bit', num_perm => 256) = :'auto_sig' AS avx2_same;
RESET minhash.simd;
SET minhash.simd = sse4;
\echo :LAST_ERROR_SQLSTATE

-- A comparison keeps an oph argument's densified form (fn_extra) while the
-- argument repeats: the same sketch under another seed densifies otherwise
-- (0.75 at seed 1, 0.5 at seed 2), and so does another sketch
WITH v AS (SELECT '{4294967295,5,4294967295,4294967295,9,4294967295,4294967295,4294967295}'::bigint[] AS a,
                  '{4294967295,5,4294967295,4294967295,4294967295,4294967295,4294967295,4294967295}'::bigint[] AS a1,
                  '{5,5,5,5,9,9,9,9}'::bigint[] AS b)
SELECT n, s, one_filled,
       jaccard(minhash_from_array(CASE WHEN one_filled THEN a1 ELSE a END, 'oph', s),
               minhash_from_array(b, 'oph', s)) AS estimate,
       minhash_similar(minhash_from_array(b, 'oph', s),
                       minhash_from_array(CASE WHEN one_filled THEN a1 ELSE a END, 'oph', s), 0.6) AS similar
FROM v, (VALUES (1, 1, false), (2, 2, false), (3, 2, false), (4, 1, false), (5, 1, true), (6, 1, false))
        t(n, s, one_filled)
ORDER BY n;
