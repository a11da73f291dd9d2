-- minhash_lsh_params and minhash_bands.
-- Every error is followed by its SQLSTATE.

-- Known answers with equal weights (issue 2): 0.5 -> 25 x 5, 0.8 -> 9 x 13, 0.9 -> 5 x 25
SELECT t, bands, rows, bands * rows <= 128 AS fits,
       round(false_positive::numeric, 6) AS false_positive, round(false_negative::numeric, 6) AS false_negative
FROM unnest(ARRAY[0.5, 0.8, 0.9]) t, minhash_lsh_params(t) ORDER BY t;
SELECT bands, rows, round(false_positive::numeric, 10) AS false_positive, round(false_negative::numeric, 10) AS false_negative
FROM minhash_lsh_params(threshold => 0.5, num_perm => 128, fp_weight => 0.5, fn_weight => 0.5);

-- The reported areas are the integrals of P(s) = 1 - (1 - s^r)^b below and of
-- 1 - P(s) above the threshold (midpoint rule, 20000 steps).
WITH p AS (SELECT t, (minhash_lsh_params(t, k)).* FROM (VALUES (0.5, 128), (0.8, 128), (0.7, 64), (0.3, 256)) v(t, k)),
     s AS (SELECT (i + 0.5) / 20000.0::float8 AS s FROM generate_series(0, 19999) i)
SELECT p.t, p.bands, p.rows,
       abs(p.false_positive - sum(CASE WHEN s.s < p.t THEN 1 - (1 - s.s ^ p.rows) ^ p.bands ELSE 0 END) / 20000) < 1e-4 AS fp_area,
       abs(p.false_negative - sum(CASE WHEN s.s >= p.t THEN (1 - s.s ^ p.rows) ^ p.bands ELSE 0 END) / 20000) < 1e-4 AS fn_area
FROM p, s GROUP BY p.t, p.bands, p.rows, p.false_positive, p.false_negative ORDER BY p.t;

-- b * r <= k always; the weights trade one error for the other
SELECT k, t, bands * rows <= k AS fits
FROM unnest(ARRAY[1, 2, 16, 100, 256]) k, unnest(ARRAY[0.0, 0.1, 0.5, 0.95, 1.0]) t,
     minhash_lsh_params(t, k)
WHERE bands * rows > k OR bands < 1 OR rows < 1;
SELECT bands, rows, bands * rows <= 1024 AS fits FROM minhash_lsh_params(0.5, 1024);
SELECT (SELECT false_positive FROM minhash_lsh_params(0.5, 128, 0.9, 0.1))
     <= (SELECT false_positive FROM minhash_lsh_params(0.5, 128, 0.5, 0.5)) AS fewer_false_positives,
       (SELECT false_negative FROM minhash_lsh_params(0.5, 128, 0.1, 0.9))
     <= (SELECT false_negative FROM minhash_lsh_params(0.5, 128, 0.5, 0.5)) AS fewer_false_negatives;

-- errors: 22023
SELECT * FROM minhash_lsh_params(-0.1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_params(1.1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_params('NaN');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_params(0.5, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_params(0.5, 2048);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_params(0.5, 128, -1, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_params(0.5, 128, 'Infinity', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_params(0.5, 128, 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS strict_no_rows FROM minhash_lsh_params(NULL);

-- minhash_bands: one 64-bit hash per band of r consecutive values
SELECT array_length(minhash_bands(minhash(ARRAY[1, 2, 3]), 25, 5), 1) AS bands;
-- equal bands hash equal, different bands differently; the band index is
-- hashed in, so equal values in different bands do not collide
SELECT b[1] = c[1] AS band1_shared, b[2] = c[2] AS band2_shared, b[3] = c[3] AS band3_shared
FROM (SELECT minhash_bands('1:[1,2,3,4,5,6]', 3, 2) b, minhash_bands('1:[1,2,9,9,5,6]', 3, 2) c) t;
SELECT b[1] <> b[2] AS index_hashed FROM minhash_bands('1:[7,7,7,7]', 2, 2) b;
-- only the first b * r values count
SELECT minhash_bands('1:[1,2,3,4,5]', 2, 2) = minhash_bands('1:[1,2,3,4,99]', 2, 2) AS prefix_only;
-- similar documents share bands more often than dissimilar ones
SELECT cardinality(ARRAY(SELECT unnest(minhash_bands(minhash(a, k => 2), 32, 4))
                         INTERSECT SELECT unnest(minhash_bands(minhash(b, k => 2), 32, 4)))) > 0 AS share_a_band
FROM (VALUES ('the quick brown fox jumps over the lazy dog', 'the quick brown fox jumps over the lazy dog today'),
             ('the quick brown fox jumps over the lazy dog', 'an entirely different sentence about something else')) v(a, b);
SELECT minhash_bands(NULL, 1, 1) IS NULL AS strict;
SELECT minhash_bands('1:[1,2,3,4]', 0, 2);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_bands('1:[1,2,3,4]', 2, -1);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_bands('1:[1,2,3,4]', 2, 3);
\echo :LAST_ERROR_SQLSTATE

-- minhash_bands(sig, bands, rows, depth): the keys an lsh index with these
-- bands and rows stores, on the bits a probe of that depth compares: each
-- band's number in the top bits (5 bits for 25 bands), its first values'
-- hash bits below; depth = rows keeps whole keys, a shorter depth only the
-- prefix (the low bits zero)
SELECT bool_and(k >> 27 = i - 1) AS band_in_top_bits, bool_and(k < 2 ^ 32) AS keys_of_32_bits
FROM unnest(minhash_bands(minhash(ARRAY[1, 2, 3]), 25, 5, 5)) WITH ORDINALITY AS t(k, i);
SELECT bool_and(d.k = w.k & ~((1::int8 << (32 - 5 - 14)) - 1)) AS depth1_is_a_prefix_of_the_key
FROM unnest(minhash_bands(minhash(ARRAY[1, 2, 3]), 25, 5, 1)) WITH ORDINALITY AS d(k, i)
JOIN unnest(minhash_bands(minhash(ARRAY[1, 2, 3]), 25, 5, 5)) WITH ORDINALITY AS w(k, i) USING (i);
-- agreeing on the first value of a band is enough at depth 1, not at depth 2
SELECT (minhash_bands('1:[1,2,3,4,5,6]', 3, 2, 1))[2] = (minhash_bands('1:[1,2,3,9,5,6]', 3, 2, 1))[2] AS depth1_shared,
       (minhash_bands('1:[1,2,3,4,5,6]', 3, 2, 2))[2] = (minhash_bands('1:[1,2,3,9,5,6]', 3, 2, 2))[2] AS depth2_shared;
SELECT minhash_bands('1:[1,2,3,4]', 2, 2, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_bands('1:[1,2,3,4]', 2, 2, 3);
\echo :LAST_ERROR_SQLSTATE

-- minhash_first_band(a, b, bands, rows, depth): the first band (from 1)
-- whose keys a probe of that depth matches (the first depth values agree, or
-- the bits the key keeps of them), NULL if none
SELECT minhash_first_band('1:[1,2,3,4,5,6]', '1:[1,9,3,4,5,6]', 3, 2, 2) AS first_whole,
       minhash_first_band('1:[1,2,3,4,5,6]', '1:[1,9,3,4,5,6]', 3, 2, 1) AS first_prefix,
       minhash_first_band('1:[1,2,3,4,5,6]', '1:[9,9,9,9,9,9]', 3, 2, 1) AS none,
       minhash_first_band('1:[1,2,3,4,5,6]', '1:[9,9,9,9,5,9]', 3, 2, 1) AS third;
-- it is the first band whose keys are equal, as the keys of minhash_bands show
WITH s AS (SELECT minhash(ARRAY(SELECT g FROM generate_series(1, 60) g)) a,
                  minhash(ARRAY(SELECT g FROM generate_series(5, 64) g)) b)
SELECT minhash_first_band(a, b, 30, 4, 4) =
       (SELECT min(i) FROM generate_subscripts(minhash_bands(a, 30, 4, 4), 1) i
        WHERE (minhash_bands(a, 30, 4, 4))[i] = (minhash_bands(b, 30, 4, 4))[i]) AS matches_keys,
       minhash_first_band(a, b, 30, 4, 2) =
       (SELECT min(i) FROM generate_subscripts(minhash_bands(a, 30, 4, 2), 1) i
        WHERE (minhash_bands(a, 30, 4, 2))[i] = (minhash_bands(b, 30, 4, 2))[i]) AS matches_keys_at_depth_2
FROM s;
SELECT minhash_first_band('1:[1,2,3,4]', '2:[1,2,3,4]', 2, 2, 2);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_first_band('1:[1,2,3,4]', '1:[1,2,3,4]', 3, 2, 2);
\echo :LAST_ERROR_SQLSTATE
