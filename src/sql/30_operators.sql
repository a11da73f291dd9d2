
-- ---------------------------------------------------------------------------
-- Operators on signatures. % and <%> are the lsh index's operators.
-- ---------------------------------------------------------------------------

-- The planner support of %'s function: on a Citus coordinator, refuses a %
-- on a distributed table that would reach the workers without the session's
-- threshold (src/pg/citus/citus_threshold.cpp, docs/scale-out.md).
CREATE FUNCTION minhash_threshold_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'minhash_threshold_support' LANGUAGE C STRICT;

-- STABLE, not IMMUTABLE: the result depends on minhash.similarity_threshold.
CREATE FUNCTION minhash_similar(minhash, minhash) RETURNS boolean
    AS 'MODULE_PATHNAME', 'minhash_similar' LANGUAGE C STABLE STRICT PARALLEL SAFE COST 5
    SUPPORT minhash_threshold_support;
COMMENT ON FUNCTION minhash_similar(minhash, minhash) IS
    'estimated Jaccard similarity >= minhash.similarity_threshold';

CREATE FUNCTION minhash_distance(minhash, minhash) RETURNS double precision
    AS 'MODULE_PATHNAME', 'minhash_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5;
COMMENT ON FUNCTION minhash_distance(minhash, minhash) IS
    'estimated Jaccard distance, 1 - jaccard';

CREATE FUNCTION minhash_eq(minhash, minhash) RETURNS boolean
    AS 'MODULE_PATHNAME', 'minhash_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_eq(minhash, minhash) IS 'signatures are equal (same family, seed, num_perm and values)';

CREATE FUNCTION minhash_ne(minhash, minhash) RETURNS boolean
    AS 'MODULE_PATHNAME', 'minhash_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_ne(minhash, minhash) IS 'signatures are not equal';

-- Selectivity of %: from the build statistics of an lsh index on the column
-- or expression (docs/lsh.md, "Cost estimate"), else 1/ndistinct.
CREATE FUNCTION minhash_similar_sel(internal, oid, internal, integer) RETURNS float8
    AS 'MODULE_PATHNAME', 'minhash_similar_sel' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_similar_sel(internal, oid, internal, integer) IS
    'restriction selectivity of %';

CREATE FUNCTION minhash_similar_joinsel(internal, oid, internal, smallint, internal) RETURNS float8
    AS 'MODULE_PATHNAME', 'minhash_similar_joinsel' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_similar_joinsel(internal, oid, internal, smallint, internal) IS
    'join selectivity of %';

CREATE OPERATOR % (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_similar,
    COMMUTATOR = %, RESTRICT = minhash_similar_sel, JOIN = minhash_similar_joinsel
);
COMMENT ON OPERATOR % (minhash, minhash) IS
    'estimated Jaccard similarity at least minhash.similarity_threshold';

CREATE OPERATOR <%> (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_distance,
    COMMUTATOR = <%>
);
COMMENT ON OPERATOR <%> (minhash, minhash) IS 'estimated Jaccard distance, 1 - jaccard';

CREATE OPERATOR = (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_eq,
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
    HASHES, MERGES
);
COMMENT ON OPERATOR = (minhash, minhash) IS 'equal';

CREATE OPERATOR <> (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_ne,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = pg_catalog.neqsel, JOIN = pg_catalog.neqjoinsel
);
COMMENT ON OPERATOR <> (minhash, minhash) IS 'not equal';

CREATE OPERATOR | (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_merge,
    COMMUTATOR = |
);
COMMENT ON OPERATOR | (minhash, minhash) IS 'signature of the union (minhash_merge)';

-- The threshold in the query instead of a GUC: IMMUTABLE, so postgres_fdw
-- ships it to a server whose extensions option lists minhash. Its planner
-- support function makes it an lsh index condition, sig %>= ROW(q, t)::minhash_query
-- (docs/scale-out.md, src/pg/lsh/lsh_support.cpp).
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
    RESTRICT = pg_catalog.matchingsel, JOIN = pg_catalog.matchingjoinsel
);
COMMENT ON OPERATOR %>= (minhash, minhash_query) IS
    'estimated Jaccard similarity at least the threshold of the query';
