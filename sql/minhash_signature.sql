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
-- the text form is the output function's: for some types it follows settings
SET DateStyle = 'ISO, YMD';
SELECT minhash(ARRAY['2024-01-31'::date]) = minhash(ARRAY['2024-01-31']) AS iso_date_text_form;
SET DateStyle = 'German';
SELECT minhash(ARRAY['2024-01-31'::date]) = minhash(ARRAY['31.01.2024']) AS german_date_text_form;
RESET DateStyle;
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
