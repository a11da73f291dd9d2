-- minhash 1.0 -> 1.1 (ALTER EXTENSION minhash UPDATE TO '1.1').
-- Every change to an SQL object in src/sql/ since 1.0 is repeated here, so that an
-- updated install equals a fresh 1.1 install (tests check this).

\echo Use "ALTER EXTENSION minhash UPDATE TO '1.1'" to load this file. \quit

-- minhash(anyarray) no longer hashes setting-dependent text forms (issue 8):
-- the function is the same C symbol, only its description changes.
COMMENT ON FUNCTION minhash(anyarray, integer, bigint) IS
    'MinHash signature of the set of non-NULL array elements, identified by a form no setting changes (text for integers, text types and other types whose output reads no setting; binary for the rest)';
