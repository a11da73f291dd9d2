-- minhash 1.0 -> 1.1 (ALTER EXTENSION minhash UPDATE TO '1.1').
-- Every change to an SQL object in src/sql/ since 1.0 is repeated here, so that an
-- updated install equals a fresh 1.1 install (tests check this).

\echo Use "ALTER EXTENSION minhash UPDATE TO '1.1'" to load this file. \quit

-- issue 10: % gets selectivity estimators fed by the lsh index's statistics
CREATE FUNCTION minhash_similar_sel(internal, oid, internal, integer) RETURNS float8
    AS 'MODULE_PATHNAME', 'minhash_similar_sel' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_similar_sel(internal, oid, internal, integer) IS
    'restriction selectivity of %';
CREATE FUNCTION minhash_similar_joinsel(internal, oid, internal, smallint, internal) RETURNS float8
    AS 'MODULE_PATHNAME', 'minhash_similar_joinsel' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_similar_joinsel(internal, oid, internal, smallint, internal) IS
    'join selectivity of %';
ALTER OPERATOR % (minhash, minhash) SET (RESTRICT = minhash_similar_sel, JOIN = minhash_similar_joinsel);
