-- jaccard (estimated and exact), the operators % <%> = <> |, merge,
-- cardinality, and the GUC minhash.similarity_threshold.
-- Every error is followed by its SQLSTATE.

-- Signatures written out, so the answers are known: 2 of 4 positions agree.
SELECT jaccard('1:[1,2,3,4]'::minhash, '1:[1,2,9,9]'::minhash) AS half,
       jaccard('1:[1,2,3,4]'::minhash, '1:[1,2,3,4]'::minhash) AS same,
       jaccard('1:[1,2,3,4]'::minhash, '1:[5,6,7,8]'::minhash) AS disjoint,
       '1:[1,2,3,4]'::minhash <%> '1:[1,2,9,9]' AS distance;

-- % compares with minhash.similarity_threshold, read at every call
SHOW minhash.similarity_threshold;
SELECT '1:[1,2,3,4]'::minhash % '1:[1,2,9,9]' AS at_half, '1:[1,2,3,4]'::minhash % '1:[1,9,9,9]' AS at_quarter;
SET minhash.similarity_threshold = 0.25;
SELECT '1:[1,2,3,4]'::minhash % '1:[1,2,9,9]' AS at_half, '1:[1,2,3,4]'::minhash % '1:[1,9,9,9]' AS at_quarter;
SET minhash.similarity_threshold = 0.6;
SELECT '1:[1,2,3,4]'::minhash % '1:[1,2,9,9]' AS at_half, '1:[1,2,3,4]'::minhash % '1:[1,2,3,4]' AS identical;
SET minhash.similarity_threshold = 1;
SELECT '1:[1,2,3,4]'::minhash % '1:[1,2,3,4]' AS identical, '1:[1,2,3,4]'::minhash % '1:[1,2,3,5]' AS almost;
SET minhash.similarity_threshold = 0;
SELECT '1:[1,2,3,4]'::minhash % '1:[5,6,7,8]' AS disjoint;
RESET minhash.similarity_threshold;
-- out of range or not a number: 22023; the prefix minhash is reserved: 42602
SET minhash.similarity_threshold = 1.5;
\echo :LAST_ERROR_SQLSTATE
SET minhash.similarity_threshold = -0.1;
\echo :LAST_ERROR_SQLSTATE
SET minhash.similarity_threshold = 'NaN';
\echo :LAST_ERROR_SQLSTATE
SET minhash.similarity_treshold = 0.5;
\echo :LAST_ERROR_SQLSTATE
SELECT name, setting, min_val, max_val, context, vartype FROM pg_settings WHERE name LIKE 'minhash.%';

-- = and <>
SELECT '1:[1,2]'::minhash = '1:[1,2]' AS eq, '1:[1,2]'::minhash = '1:[2,1]' AS eq2,
       '1:[1,2]'::minhash <> '1:[2,1]' AS ne, '1:[1,2]'::minhash <> '1:[1,2]' AS ne2;

-- operator declarations: commutators, negators, selectivity estimators
SELECT oprname, oprcom::regoper AS commutator, oprnegate::regoper AS negator,
       oprrest, oprjoin, oprresult::regtype
FROM pg_operator
WHERE oprleft = 'minhash'::regtype AND oprright = 'minhash'::regtype
ORDER BY oprname;

-- merge: the element-wise minimum, the signature of the union
SELECT '1:[5,2,8]'::minhash | '1:[3,4,8]' AS merged, minhash_merge('1:[5,2,8]', '1:[3,4,8]') AS same;
SELECT minhash(ARRAY[1, 2, 3, 4]) | minhash(ARRAY[3, 4, 5]) = minhash(ARRAY[1, 2, 3, 4, 5]) AS union_signature,
       minhash(ARRAY['a'], 64, 5) | minhash('{}'::text[], 64, 5) = minhash(ARRAY['a'], 64, 5) AS empty_is_identity;

-- Estimates of computed signatures: exact Jaccard of the shingle sets versus
-- the estimate, within 4 standard errors sqrt(J(1-J)/k).
CREATE TEMP TABLE pairs (a text, b text);
INSERT INTO pairs VALUES
    ('the quick brown fox jumps over the lazy dog',
     'the quick brown fox jumps over the lazy dog'),
    ('the quick brown fox jumps over the lazy dog',
     'The quick brown fox jumps over the lazy dog!'),
    ('the quick brown fox jumps over the lazy dog',
     'the quick brown fox leaps over the lazy dog'),
    ('the quick brown fox jumps over the lazy dog',
     'a completely different sentence without any overlap');
SELECT exact, estimate, abs(estimate - exact) <= 4 * sqrt(exact * (1 - exact) / 256) AS within_4_se
FROM (SELECT jaccard(minhash_shingles(a, 2), minhash_shingles(b, 2)) AS exact,
             jaccard(minhash(a, k => 2, num_perm => 256), minhash(b, k => 2, num_perm => 256)) AS estimate
      FROM pairs) x;
-- integer sets of known Jaccard: |A∩B| / |A∪B|
SELECT j, k, abs(est - j) <= 4 * sqrt(j * (1 - j) / k) + 1e-12 AS within_4_se
FROM (SELECT 500.0 / 1500 AS j, k,
             jaccard(minhash(ARRAY(SELECT generate_series(1, 1000)), k),
                     minhash(ARRAY(SELECT generate_series(501, 1500)), k)) AS est
      FROM unnest(ARRAY[64, 128, 256, 1024]) k
      UNION ALL
      SELECT 900.0 / 1000, k,
             jaccard(minhash(ARRAY(SELECT generate_series(1, 950)), k),
                     minhash(ARRAY(SELECT generate_series(51, 1000)), k))
      FROM unnest(ARRAY[64, 128, 256, 1024]) k) t
ORDER BY j, k;

-- exact Jaccard of arrays: distinct non-NULL elements by text form
SELECT jaccard(ARRAY[1, 2, 3], ARRAY[2, 3, 4]) AS half,
       jaccard(ARRAY[1, 1, 2, NULL], ARRAY[2, 1]) AS repeats_and_nulls,
       jaccard('{}'::int[], '{}'::int[]) AS both_empty,
       jaccard('{}'::int[], ARRAY[1]) AS one_empty,
       jaccard(ARRAY['a', 'b'], ARRAY['c']) AS disjoint,
       jaccard(ARRAY[1.0], ARRAY[1.00]) AS text_forms_differ,
       jaccard(ARRAY[[1, 2], [3, 4]], ARRAY[1, 2]) AS multidim;

-- exact at scale (many sort runs and merge passes, repeats): the same
-- fraction SQL's INTERSECT and UNION give
WITH a AS (SELECT ARRAY(SELECT (i % 70000)::text FROM generate_series(1, 100000) i) AS v),
     b AS (SELECT ARRAY(SELECT (i * 3 % 90001)::text FROM generate_series(1, 60000) i) AS v)
SELECT jaccard(a.v, b.v) AS exact,
       jaccard(a.v, b.v) = (SELECT count(*) FROM (SELECT unnest(a.v) INTERSECT SELECT unnest(b.v)) i)::float8
                           / (SELECT count(*) FROM (SELECT unnest(a.v) UNION SELECT unnest(b.v)) u) AS same_as_sql,
       jaccard(b.v, a.v) = jaccard(a.v, b.v) AS symmetric
FROM a, b;

-- cardinality: about n for n distinct elements (relative error ~ 1/sqrt(k))
SELECT n, abs(minhash_cardinality(minhash(ARRAY(SELECT generate_series(1, n)), 1024)) / n - 1) < 0.15 AS close
FROM unnest(ARRAY[10, 1000, 100000]) n ORDER BY n;
SELECT minhash_cardinality(minhash('{}'::int[])) AS empty,
       minhash_cardinality(minhash(ARRAY[1, 2, 3]) | minhash(ARRAY[3, 4])) > minhash_cardinality(minhash(ARRAY[1])) AS union_grows;

-- NULL in, NULL out
SELECT jaccard(NULL::minhash, '1:[1]') IS NULL AS jaccard_null, (NULL::minhash % '1:[1]') IS NULL AS similar_null,
       ('1:[1]'::minhash <%> NULL) IS NULL AS distance_null, ('1:[1]'::minhash | NULL) IS NULL AS merge_null,
       jaccard(ARRAY[1], NULL) IS NULL AS exact_null, minhash_cardinality(NULL) IS NULL AS cardinality_null;

-- signatures of different families are not comparable: 22023, both values in DETAIL
SELECT jaccard('1:[1,2,3]'::minhash, '1:[1,2]'::minhash);
\echo :LAST_ERROR_SQLSTATE
SELECT jaccard('1:[1,2]'::minhash, '2:[1,2]'::minhash);
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[1,2]'::minhash % '1:[1,2,3]';
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[1,2]'::minhash <%> '-1:[1,2]';
\echo :LAST_ERROR_SQLSTATE
SELECT '1:[1,2]'::minhash | '1:[1]';
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_merge('1:[1,2]', '3:[1,2]');
\echo :LAST_ERROR_SQLSTATE
-- exact equality (= <>, the btree and hash opclasses' operator) is total
-- since 1.1: signatures built differently are simply not equal
SELECT '1:[1,2]'::minhash = '1:[1,2,3]';
SELECT '1:[1,2]'::minhash <> '5:[1,2]';
-- two untyped literals could be signatures or arrays: not unique (42725);
-- one cast decides
SELECT jaccard('{1,2}', '{2,3}');
\echo :LAST_ERROR_SQLSTATE
SELECT jaccard('{1,2}'::int[], '{2,3}') AS arrays, jaccard('1:[1,2]'::minhash, '1:[1,3]') AS signatures;
