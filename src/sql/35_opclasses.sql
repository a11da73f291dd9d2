
-- ---------------------------------------------------------------------------
-- Exact equality and a total order (src/pg/compare.cpp): btree and hash
-- operator classes for GROUP BY, DISTINCT, UNIQUE, merge and hash joins.
-- The order is family, seed, num_perm, then the values: total, stable, and
-- meaningless beyond that (similarity is % and <%>).
-- ---------------------------------------------------------------------------

CREATE FUNCTION minhash_lt(minhash, minhash) RETURNS boolean
    AS 'MODULE_PATHNAME', 'minhash_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_le(minhash, minhash) RETURNS boolean
    AS 'MODULE_PATHNAME', 'minhash_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_gt(minhash, minhash) RETURNS boolean
    AS 'MODULE_PATHNAME', 'minhash_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_ge(minhash, minhash) RETURNS boolean
    AS 'MODULE_PATHNAME', 'minhash_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_cmp(minhash, minhash) RETURNS integer
    AS 'MODULE_PATHNAME', 'minhash_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_hash(minhash) RETURNS integer
    AS 'MODULE_PATHNAME', 'minhash_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_hash_extended(minhash, bigint) RETURNS bigint
    AS 'MODULE_PATHNAME', 'minhash_hash_extended' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_lt(minhash, minhash) IS 'less than, in the btree order of signatures';
COMMENT ON FUNCTION minhash_le(minhash, minhash) IS 'less than or equal, in the btree order of signatures';
COMMENT ON FUNCTION minhash_gt(minhash, minhash) IS 'greater than, in the btree order of signatures';
COMMENT ON FUNCTION minhash_ge(minhash, minhash) IS 'greater than or equal, in the btree order of signatures';
COMMENT ON FUNCTION minhash_cmp(minhash, minhash) IS 'btree comparison of signatures (-1, 0, 1)';
COMMENT ON FUNCTION minhash_hash(minhash) IS 'hash of a signature, for hash indexes and joins';
COMMENT ON FUNCTION minhash_hash_extended(minhash, bigint) IS 'seeded 64-bit hash of a signature';

CREATE OPERATOR < (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
CREATE OPERATOR <= (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
CREATE OPERATOR > (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
CREATE OPERATOR >= (
    LEFTARG = minhash, RIGHTARG = minhash, FUNCTION = minhash_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR < (minhash, minhash) IS 'less than (btree order)';
COMMENT ON OPERATOR <= (minhash, minhash) IS 'less than or equal (btree order)';
COMMENT ON OPERATOR > (minhash, minhash) IS 'greater than (btree order)';
COMMENT ON OPERATOR >= (minhash, minhash) IS 'greater than or equal (btree order)';

CREATE OPERATOR CLASS minhash_btree_ops DEFAULT FOR TYPE minhash USING btree AS
    OPERATOR 1 < (minhash, minhash),
    OPERATOR 2 <= (minhash, minhash),
    OPERATOR 3 = (minhash, minhash),
    OPERATOR 4 >= (minhash, minhash),
    OPERATOR 5 > (minhash, minhash),
    FUNCTION 1 minhash_cmp(minhash, minhash);

CREATE OPERATOR CLASS minhash_hash_ops DEFAULT FOR TYPE minhash USING hash AS
    OPERATOR 1 = (minhash, minhash),
    FUNCTION 1 minhash_hash(minhash),
    FUNCTION 2 minhash_hash_extended(minhash, bigint);
