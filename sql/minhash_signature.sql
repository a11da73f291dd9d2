-- minhash(doc text, ...) and minhash(anyarray, ...): building signatures.
-- Every error is followed by its SQLSTATE.

CREATE TEMP TABLE docs (id int, body text);
INSERT INTO docs VALUES
    (1, 'The quick brown fox jumps over the lazy dog near the river bank.'),
    (2, 'The quick brown fox jumped over the lazy dogs near the river bank!'),
    (3, 'Completely different words appear in this unrelated sentence here.'),
    (4, ''),
    (5, 'short'),
    (6, 'Ärger über Öl in Köln, ÄRGER ÜBER ÖL IN KÖLN');

-- deterministic: the signature with 4 values is pinned here (any change of
-- shingling, hashing or seeding changes it)
SELECT minhash(body, num_perm => 4) AS sig
FROM docs WHERE id = 1;
SELECT minhash_num_perm(minhash(body)) AS default_num_perm, minhash_seed(minhash(body)) AS default_seed
FROM docs WHERE id = 1;

-- the invariant: minhash(d, u, k, n, s) = minhash(minhash_shingles(d, k, u), n, s)
SELECT id, unit, k, n, s,
       minhash(body, unit, k, n, s) = minhash(minhash_shingles(body, k, unit), n, s) AS invariant
FROM docs,
     (VALUES ('word', 0, 128, 1::bigint), ('word', 2, 64, 7), ('char', 0, 128, 1),
             ('char', 3, 256, -1), ('char_nospace', 5, 32, 123456789012)) AS p(unit, k, n, s)
ORDER BY id, unit, k;

-- the empty set (an empty or punctuation-only document, an empty array, only
-- NULLs) has every value 4294967295
SELECT minhash(''::text, num_perm => 3), minhash(' ?! '::text, num_perm => 3),
       minhash('{}'::int[], 3), minhash(ARRAY[NULL::int], 3);

-- a prefix of a signature is the signature with fewer hash functions
SELECT minhash(body, num_perm => 1024)::minhash(1) = minhash(body, num_perm => 1) AS k1,
       minhash(body, num_perm => 1024)::minhash(64) = minhash(body, num_perm => 64) AS k64,
       minhash(body, num_perm => 1024)::minhash(128) = minhash(body, num_perm => 128) AS k128,
       minhash(body, num_perm => 1024)::minhash(1000) = minhash(body, num_perm => 1000) AS k1000
FROM docs WHERE id = 2;

-- the seed selects another hash family
SELECT minhash(body, seed => 1)::bigint[] <> minhash(body, seed => 2)::bigint[] AS values_differ
FROM docs WHERE id = 1;
SELECT minhash_seed(minhash(body, seed => -77)) FROM docs WHERE id = 1;

-- arrays are sets of elements by text form: order, repeats and NULLs do not
-- matter, and integers and their text agree
SELECT minhash(ARRAY[1, 2, 3]) = minhash(ARRAY[3, 1, 2, 2, NULL]) AS set_semantics,
       minhash(ARRAY[1, 2, 3]) = minhash(ARRAY['1', '2', '3']) AS int_equals_text,
       minhash(ARRAY[1, 2, 3]::bigint[]) = minhash(ARRAY['3', '2', '1']::varchar[]) AS bigint_equals_varchar,
       minhash(ARRAY['a', 'b']::char(1)[]) = minhash(ARRAY['a', 'b']) AS bpchar_equals_text,
       minhash(ARRAY[[1, 2], [3, 4]]) = minhash(ARRAY[1, 2, 3, 4]) AS multidim_flattened,
       minhash(ARRAY[1.50, 2]) = minhash(ARRAY['1.50', '2']) AS numeric_text_form,
       minhash(ARRAY[1.50, 2]) <> minhash(ARRAY['1.5', '2']) AS text_form_not_value;
-- minhash(anyarray) is IMMUTABLE: no setting changes a signature. Types
-- whose text output follows a setting (dates, timestamps, intervals, floats,
-- money, bytea, ...) are hashed by their binary form instead (docs/sql.md)
CREATE TEMP TABLE settings_sig AS
SELECT minhash(ARRAY['2024-01-31'::date]) AS d,
       minhash(ARRAY['2024-01-31 12:00:00+00'::timestamptz]) AS ts,
       minhash(ARRAY['1 day 02:00:00'::interval]) AS iv,
       minhash(ARRAY[0.1::float8, 1e300]) AS f8,
       minhash(ARRAY[0.1::float4]) AS f4,
       minhash(ARRAY[12.5::money]) AS m,
       minhash(ARRAY['\x00ff'::bytea]) AS b,
       minhash(ARRAY['(0.1,2)'::point]) AS p,
       minhash(ARRAY['[2024-01-01 00:00+00,2024-02-01 00:00+00)'::tstzrange]) AS r,
       minhash(ARRAY[ROW(1, '2024-01-31 12:00:00+00'::timestamptz, 0.1::float8)]) AS rec;
SET DateStyle = 'German'; SET TimeZone = 'Asia/Kathmandu'; SET IntervalStyle = 'sql_standard';
SET extra_float_digits = -3; SET lc_monetary = 'C'; SET bytea_output = 'escape';
SELECT minhash(ARRAY['2024-01-31'::date]) = d AS date_stable,
       minhash(ARRAY['2024-01-31 12:00:00+00'::timestamptz]) = ts AS timestamptz_stable,
       minhash(ARRAY['1 day 02:00:00'::interval]) = iv AS interval_stable,
       minhash(ARRAY[0.1::float8, 1e300]) = f8 AS float8_stable,
       minhash(ARRAY[0.1::float4]) = f4 AS float4_stable,
       minhash(ARRAY[12.5::money]) = m AS money_stable,
       minhash(ARRAY['\x00ff'::bytea]) = b AS bytea_stable,
       minhash(ARRAY['(0.1,2)'::point]) = p AS point_stable,
       minhash(ARRAY['[2024-01-01 00:00+00,2024-02-01 00:00+00)'::tstzrange]) = r AS range_stable,
       minhash(ARRAY[ROW(1, '2024-01-31 12:00:00+00'::timestamptz, 0.1::float8)]) = rec AS record_stable
FROM settings_sig;
-- the exact Jaccard and the aggregate identify elements the same way
SELECT jaccard(ARRAY['2024-01-31 12:00:00+00'::timestamptz, '2024-02-01 00:00:00+00'],
               ARRAY['2024-01-31 12:00:00+00'::timestamptz]) AS jaccard_timestamptz,
       (SELECT minhash_agg(t) = minhash(array_agg(t))
        FROM generate_series(timestamptz '2024-01-01', '2024-01-02', '1 hour') t) AS agg_matches_array;
RESET DateStyle; RESET TimeZone; RESET IntervalStyle; RESET extra_float_digits;
RESET lc_monetary; RESET bytea_output;
-- elements are their forms, not the type's =: these equal values are
-- different elements until brought to one form (docs/sql.md)
SELECT 1.0 = 1.00 AND '-0'::float8 = 0 AND '1 day'::interval = '24 hours' AS equal,
       minhash(ARRAY[1.0]) = minhash(ARRAY[1.00]) AS numeric_same,
       minhash(ARRAY['-0'::float8]) = minhash(ARRAY[0::float8]) AS zero_same,
       minhash(ARRAY['1 day'::interval]) = minhash(ARRAY['24 hours'::interval]) AS interval_same,
       minhash(ARRAY[round(1.00, 1)]) = minhash(ARRAY[1.0]) AS numeric_rounded,
       minhash(ARRAY['-0'::float8 + 0.0]) = minhash(ARRAY[0::float8]) AS zero_added,
       minhash(ARRAY[justify_hours('24 hours'::interval)]) = minhash(ARRAY['1 day'::interval]) AS interval_justified;
-- a composite type is hashed through its extended hash support (equal
-- values, the same element), a domain as its base type
CREATE TYPE sig_pair AS (a int, b text);
CREATE DOMAIN sig_int AS int;
SELECT minhash(ARRAY[ROW(1, 'x')::sig_pair, ROW(1, 'x')::sig_pair], 4) = minhash(ARRAY[ROW(1, 'x')::sig_pair], 4) AS composite_set,
       minhash(ARRAY[1, 2]::sig_int[]) = minhash(ARRAY[1, 2]) AS domain_as_base;
DROP TYPE sig_pair; DROP DOMAIN sig_int;
-- a type with neither hash support nor a send function falls back to its text form
SELECT minhash(ARRAY[makeaclitem(10, 10, 'SELECT', false)], 4)
     = minhash(ARRAY[makeaclitem(10, 10, 'SELECT', false)::text], 4) AS aclitem_text_form;
SELECT minhash(ARRAY[1, 2, 3], 4, 9) AS sig, minhash(ARRAY[1, 2, 3], num_perm => 4, seed => 9) AS named;

-- documents as sets: the signature of an element set is the same however the
-- set is written down
SELECT minhash(ARRAY['the lazy dog', 'the quick fox'], 16) = minhash(ARRAY['the quick fox', 'the lazy dog'], 16) AS order_free;

-- varchar and char documents are documents, not signature literals
CREATE TEMP TABLE vdocs (v varchar(100), c char(30));
INSERT INTO vdocs SELECT body, left(body, 30) FROM docs WHERE id = 1;
SELECT minhash(v) = minhash(v::text) AS varchar_doc, minhash(c, 'char') = minhash(rtrim(c)::text, 'char') AS bpchar_doc
FROM vdocs;

-- index expressions need IMMUTABLE
CREATE TEMP TABLE indexed_docs AS SELECT * FROM docs;
CREATE INDEX ON indexed_docs ((minhash_num_perm(minhash(body, num_perm => 16))));
CREATE INDEX ON indexed_docs ((minhash_seed(minhash(ARRAY[id, 2 * id]))));
SELECT provolatile, proparallel, proisstrict FROM pg_proc
WHERE oid = 'minhash(text, text, integer, integer, bigint)'::regprocedure;

-- NULL in, NULL out
SELECT minhash(NULL::text) IS NULL AS null_doc, minhash('x'::text, NULL) IS NULL AS null_unit,
       minhash('x'::text, num_perm => NULL) IS NULL AS null_num_perm,
       minhash(NULL::int[]) IS NULL AS null_array, minhash(ARRAY[1], seed => NULL) IS NULL AS null_seed;

-- errors: 22023
SELECT minhash('x'::text, num_perm => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x'::text, num_perm => 1025);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash(ARRAY[1], num_perm => -5);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x'::text, k => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x'::text, k => 257);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash('x'::text, 'paragraph');
\echo :LAST_ERROR_SQLSTATE

-- Query cancel inside one call: a 78 MB document hashed as character
-- shingles takes seconds; statement_timeout stops it (57014), and promptly,
-- which needs the shingling and hashing loops to check for interrupts (an
-- error raised once the call returned would come seconds late). The document
-- is built in the statement, in well under the timeout, so the time is spent
-- in minhash().
SET statement_timeout = '300ms';
SELECT minhash_num_perm(minhash(repeat('lorem ipsum dolor sit amet consectetur ', 2000000), 'char'));
\echo :LAST_ERROR_SQLSTATE
CREATE FUNCTION canceled_within(query text, bound interval) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE query;
    RETURN 'not canceled';
EXCEPTION WHEN query_canceled THEN
    RETURN CASE WHEN clock_timestamp() - t0 < bound THEN 'canceled promptly'
                ELSE 'canceled late: ' || (clock_timestamp() - t0)::text END;
END $$;
SELECT canceled_within($q$SELECT minhash(repeat('lorem ipsum dolor sit amet consectetur ', 2000000), 'char')$q$, '1.3 s');
SELECT canceled_within($q$SELECT minhash_shingles(repeat('lorem ipsum dolor sit amet consectetur ', 2000000), 0, 'char')$q$, '1.3 s');
RESET statement_timeout;
DROP FUNCTION canceled_within;
