-- minhash 1.0 -> 1.1 (ALTER EXTENSION minhash UPDATE TO '1.1').
-- Every change to an SQL object in src/sql/ since 1.0 is repeated here, so that an
-- updated install equals a fresh 1.1 install (tests check this).

\echo Use "ALTER EXTENSION minhash UPDATE TO '1.1'" to load this file. \quit

-- minhash(doc, 3): an error whose hint names k => 3 (src/sql/20_functions.sql)
CREATE FUNCTION minhash(text, integer, "any" DEFAULT NULL, "any" DEFAULT NULL,
                        "any" DEFAULT NULL)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_int' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION minhash(text, integer, "any", "any", "any") IS
    'not a signature: an error explaining that the second argument of minhash(doc, ...) is the unit';

-- USING lsh (body) on text or arrays: placeholders whose build hints minhash(body) (src/sql/50_lsh.sql)
CREATE OPERATOR CLASS text_needs_minhash_ops DEFAULT FOR TYPE text USING lsh AS
    STORAGE text;
COMMENT ON OPERATOR CLASS text_needs_minhash_ops USING lsh IS
    'placeholder: an lsh index on text fails with a hint to index minhash(column)';
CREATE OPERATOR CLASS array_needs_minhash_ops DEFAULT FOR TYPE anyarray USING lsh AS
    STORAGE anyarray;
COMMENT ON OPERATOR CLASS array_needs_minhash_ops USING lsh IS
    'placeholder: an lsh index on an array fails with a hint to index minhash(column)';

-- minhash(anyarray) no longer hashes setting-dependent text forms (issue 8):
-- the function is the same C symbol, only its description changes.
COMMENT ON FUNCTION minhash(anyarray, integer, bigint) IS
    'MinHash signature of the set of non-NULL array elements, identified by a form no setting changes (text for integers, text types and other types whose output reads no setting; binary for the rest)';
