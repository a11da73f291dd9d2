
-- ---------------------------------------------------------------------------
-- Operators on signatures. % and <%> are the lsh index's operators.
-- ---------------------------------------------------------------------------

-- STABLE, not IMMUTABLE: the result depends on minhash.similarity_threshold.
CREATE FUNCTION minhash_similar(minhash, minhash) RETURNS boolean
    AS 'MODULE_PATHNAME', 'minhash_similar' LANGUAGE C STABLE STRICT PARALLEL SAFE COST 5;
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

CREATE OPERATOR % (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_similar,
    COMMUTATOR = %, RESTRICT = matchingsel, JOIN = matchingjoinsel
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
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
    HASHES, MERGES
);
COMMENT ON OPERATOR = (minhash, minhash) IS 'equal';

CREATE OPERATOR <> (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_ne,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
COMMENT ON OPERATOR <> (minhash, minhash) IS 'not equal';

CREATE OPERATOR | (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_merge,
    COMMUTATOR = |
);
COMMENT ON OPERATOR | (minhash, minhash) IS 'signature of the union (minhash_merge)';
