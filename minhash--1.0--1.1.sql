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

-- issue 11: the shippable, indexable threshold form (src/sql/30_operators.sql, 50_lsh.sql)
CREATE TYPE minhash_query AS (query minhash, threshold double precision);
COMMENT ON TYPE minhash_query IS 'a query signature and a similarity threshold, the right side of %>=';

CREATE FUNCTION minhash_similar_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'minhash_similar_support' LANGUAGE C STRICT;

CREATE FUNCTION minhash_similar(sig minhash, q minhash, t double precision) RETURNS boolean
    AS 'MODULE_PATHNAME', 'minhash_similar_t' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5
    SUPPORT minhash_similar_support;
COMMENT ON FUNCTION minhash_similar(minhash, minhash, double precision) IS
    'estimated Jaccard similarity >= t (indexable by lsh, shippable by postgres_fdw)';

CREATE FUNCTION minhash_similar_query(minhash, minhash_query) RETURNS boolean
    AS 'MODULE_PATHNAME', 'minhash_similar_query' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5;
COMMENT ON FUNCTION minhash_similar_query(minhash, minhash_query) IS
    'estimated Jaccard similarity >= the threshold of the query';

CREATE OPERATOR %>= (
    LEFTARG = minhash, RIGHTARG = minhash_query, FUNCTION = minhash_similar_query,
    RESTRICT = matchingsel, JOIN = matchingjoinsel
);
COMMENT ON OPERATOR %>= (minhash, minhash_query) IS
    'estimated Jaccard similarity at least the threshold of the query';

ALTER OPERATOR FAMILY minhash_ops USING lsh ADD OPERATOR 3 %>= (minhash, minhash_query);
