
-- ---------------------------------------------------------------------------
-- Shingles, signatures, similarity, export, LSH parameters.
-- ---------------------------------------------------------------------------

CREATE FUNCTION minhash_shingles(doc text, k integer DEFAULT 0, unit text DEFAULT 'word')
    RETURNS text[]
    AS 'MODULE_PATHNAME', 'minhash_shingles' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash_shingles(text, integer, text) IS
    'distinct shingles of a document, in order of first appearance (unit word, char or char_nospace; k = 0: 5 words or 9 characters)';

CREATE FUNCTION minhash(doc text, unit text DEFAULT 'word', k integer DEFAULT 0,
                        num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(text, text, integer, integer, bigint) IS
    'MinHash signature of the shingles of a document';

-- COST: shingling and hashing a document costs about a thousand operators;
-- saying so lets the planner see that a scan re-computing minhash(body) per
-- row is dear next to an lsh index over that expression.

-- minhash(x) with one argument is also the function-style cast x::minhash,
-- which the parser prefers unless a function matches x's type exactly: these
-- overloads keep minhash(varchar_column) and minhash('a literal') signatures,
-- not parse errors of the minhash literal syntax.
CREATE FUNCTION minhash(doc unknown) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_unknown' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(unknown) IS
    'MinHash signature of a document given as a bare literal (all defaults)';

CREATE FUNCTION minhash(doc varchar, unit text DEFAULT 'word', k integer DEFAULT 0,
                        num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(varchar, text, integer, integer, bigint) IS
    'MinHash signature of the shingles of a document';

-- bpchar's padding is whitespace, which shingling normalizes away.
CREATE FUNCTION minhash(doc bpchar, unit text DEFAULT 'word', k integer DEFAULT 0,
                        num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(bpchar, text, integer, integer, bigint) IS
    'MinHash signature of the shingles of a document';

-- minhash(body, 3): a number where the unit goes is a mistake (meant as k?
-- as num_perm?). This overload catches every call whose second positional
-- argument is an integer and fails with a hint naming the argument
-- (k => 3); without it the parser's error names no way out. Its parameters
-- are unnamed so that named calls (minhash(body, k => 3)) never reach it.
CREATE FUNCTION minhash(text, integer, "any" DEFAULT NULL, "any" DEFAULT NULL,
                        "any" DEFAULT NULL)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_int' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION minhash(text, integer, "any", "any", "any") IS
    'not a signature: an error explaining that the second argument of minhash(doc, ...) is the unit';

CREATE FUNCTION minhash(elements anyarray, num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 200;
COMMENT ON FUNCTION minhash(anyarray, integer, bigint) IS
    'MinHash signature of the set of non-NULL array elements, identified by a form no setting changes (text for integers, text types and other types whose output reads no setting; binary for the rest)';

CREATE FUNCTION jaccard(a minhash, b minhash) RETURNS double precision
    AS 'MODULE_PATHNAME', 'minhash_jaccard' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5;
COMMENT ON FUNCTION jaccard(minhash, minhash) IS
    'estimated Jaccard similarity: the share of equal signature values';

CREATE FUNCTION jaccard(a anyarray, b anyarray) RETURNS double precision
    AS 'MODULE_PATHNAME', 'minhash_jaccard_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION jaccard(anyarray, anyarray) IS
    'exact Jaccard similarity of the sets of non-NULL array elements (two empty sets: 1)';

CREATE FUNCTION minhash_merge(a minhash, b minhash) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_merge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_merge(minhash, minhash) IS
    'signature of the union of two sets (element-wise minimum)';

CREATE FUNCTION minhash_cardinality(sig minhash) RETURNS double precision
    AS 'MODULE_PATHNAME', 'minhash_cardinality' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_cardinality(minhash) IS
    'estimated number of distinct elements of the set behind a signature';

CREATE FUNCTION minhash_num_perm(sig minhash) RETURNS integer
    AS 'MODULE_PATHNAME', 'minhash_num_perm' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_num_perm(minhash) IS 'number of hash functions (values) of a signature';

CREATE FUNCTION minhash_seed(sig minhash) RETURNS bigint
    AS 'MODULE_PATHNAME', 'minhash_seed' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_seed(minhash) IS 'seed of the hash family of a signature';

CREATE FUNCTION minhash_bits(sig minhash) RETURNS integer
    AS 'MODULE_PATHNAME', 'minhash_sig_bits' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_bits(minhash) IS 'bits kept of each value of a signature: 32, or 16 or 8 (compact)';

CREATE FUNCTION minhash_to_array(sig minhash) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'minhash_to_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_to_array(minhash) IS 'the values of a signature, for export';

CREATE FUNCTION minhash_from_array("values" bigint[], seed bigint DEFAULT 1) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_from_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_from_array(bigint[], bigint) IS
    'signature from exported values (each 0..4294967295) and the seed they were computed with';

-- One argument, as a cast function must have: the seed is the default, 1.
CREATE FUNCTION minhash_from_int8_array(bigint[]) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_from_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_from_int8_array(bigint[]) IS
    'cast bigint[] to minhash with seed 1; use minhash_from_array for another seed';

CREATE CAST (minhash AS bigint[]) WITH FUNCTION minhash_to_array(minhash);
CREATE CAST (bigint[] AS minhash) WITH FUNCTION minhash_from_int8_array(bigint[]);

CREATE FUNCTION minhash_lsh_params(threshold double precision, num_perm integer DEFAULT 128,
                                   fp_weight double precision DEFAULT 0.5,
                                   fn_weight double precision DEFAULT 0.5)
    RETURNS TABLE (bands integer, rows integer,
                   false_positive double precision, false_negative double precision)
    AS 'MODULE_PATHNAME', 'minhash_lsh_params' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
    ROWS 1;
COMMENT ON FUNCTION minhash_lsh_params(double precision, integer, double precision, double precision) IS
    'LSH bands and rows minimising the weighted false-positive and false-negative areas for a threshold';

CREATE FUNCTION minhash_bands(sig minhash, bands integer, "rows" integer) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'minhash_bands' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_bands(minhash, integer, integer) IS
    'one 64-bit hash per LSH band of rows consecutive values';

-- Band keys of a prefix of each band, and the first band two signatures share:
-- what an lsh index and its all-pairs walk compare, for computing the pairs of
-- a table outside one index (a distributed table, docs/scale-out.md).
CREATE FUNCTION minhash_bands(sig minhash, bands integer, "rows" integer, depth integer) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'minhash_bands_depth' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_bands(minhash, integer, integer, integer) IS
    'the band keys an lsh index with these bands and rows stores, on the bits a probe of that depth compares';

CREATE FUNCTION minhash_first_band(a minhash, b minhash, bands integer, "rows" integer, depth integer)
    RETURNS integer
    AS 'MODULE_PATHNAME', 'minhash_first_band' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_first_band(minhash, minhash, integer, integer, integer) IS
    'first LSH band (1-based) whose keys a probe of that depth matches for a and b, or NULL';
COMMENT ON CAST (minhash AS bigint[]) IS 'export the values of a signature';
COMMENT ON CAST (bigint[] AS minhash) IS 'import native-family values computed with seed 1 (minhash_from_array names family and seed)';
