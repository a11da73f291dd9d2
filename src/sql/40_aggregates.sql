
-- ---------------------------------------------------------------------------
-- Aggregates. minhash_agg keeps a signature as internal state and ships it
-- between parallel workers as bytea; minhash_merge_agg's state is a minhash.
-- ---------------------------------------------------------------------------

CREATE FUNCTION minhash_agg_trans(internal, anyelement) RETURNS internal
    AS 'MODULE_PATHNAME', 'minhash_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION minhash_agg_trans(internal, anyelement, integer, bigint) RETURNS internal
    AS 'MODULE_PATHNAME', 'minhash_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION minhash_agg_final(internal) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION minhash_agg_combine(internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'minhash_agg_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION minhash_agg_serial(internal) RETURNS bytea
    AS 'MODULE_PATHNAME', 'minhash_agg_serial' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_agg_deserial(bytea, internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'minhash_agg_deserial' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minhash_agg_trans(internal, anyelement) IS 'transition function of minhash_agg';
COMMENT ON FUNCTION minhash_agg_trans(internal, anyelement, integer, bigint) IS
    'transition function of minhash_agg with num_perm and seed';
COMMENT ON FUNCTION minhash_agg_final(internal) IS 'final function of minhash_agg';
COMMENT ON FUNCTION minhash_agg_combine(internal, internal) IS 'combine function of minhash_agg';
COMMENT ON FUNCTION minhash_agg_serial(internal) IS 'serialization function of minhash_agg';
COMMENT ON FUNCTION minhash_agg_deserial(bytea, internal) IS 'deserialization function of minhash_agg';

-- SSPACE: the state of the default k = 128 (16-byte header + 128 values)
CREATE AGGREGATE minhash_agg(element anyelement) (
    SFUNC = minhash_agg_trans,
    STYPE = internal,
    SSPACE = 528,
    FINALFUNC = minhash_agg_final,
    COMBINEFUNC = minhash_agg_combine,
    SERIALFUNC = minhash_agg_serial,
    DESERIALFUNC = minhash_agg_deserial,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE minhash_agg(anyelement) IS
    'MinHash signature (128 values, seed 1) of the set of non-NULL input values';

CREATE AGGREGATE minhash_agg(element anyelement, num_perm integer, seed bigint) (
    SFUNC = minhash_agg_trans,
    STYPE = internal,
    SSPACE = 528,
    FINALFUNC = minhash_agg_final,
    COMBINEFUNC = minhash_agg_combine,
    SERIALFUNC = minhash_agg_serial,
    DESERIALFUNC = minhash_agg_deserial,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE minhash_agg(anyelement, integer, bigint) IS
    'MinHash signature of the set of non-NULL input values, with num_perm values and a seed';

CREATE FUNCTION minhash_merge_trans(minhash, minhash) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_merge_trans' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_merge_trans(minhash, minhash) IS
    'transition and combine function of minhash_merge_agg';

CREATE AGGREGATE minhash_merge_agg(minhash) (
    SFUNC = minhash_merge_trans,
    STYPE = minhash,
    COMBINEFUNC = minhash_merge_trans,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE minhash_merge_agg(minhash) IS
    'signature of the union of the input signatures';
