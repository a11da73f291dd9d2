
-- ---------------------------------------------------------------------------
-- Type minhash: a MinHash signature, [family:][bitsN:]seed:[v1,...,vk] in text
-- form. Typmod minhash(k) fixes num_perm, minhash(k, bits) also the bits kept
-- of each value (8, 16 or 32); an explicit cast to a smaller k truncates, to
-- fewer bits keeps the low bits of each value.
-- ---------------------------------------------------------------------------

CREATE TYPE minhash;

CREATE FUNCTION minhash_in(cstring, oid, integer) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_out(minhash) RETURNS cstring
    AS 'MODULE_PATHNAME', 'minhash_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_recv(internal, oid, integer) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_send(minhash) RETURNS bytea
    AS 'MODULE_PATHNAME', 'minhash_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_typmod_in(cstring[]) RETURNS integer
    AS 'MODULE_PATHNAME', 'minhash_typmod_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_typmod_out(integer) RETURNS cstring
    AS 'MODULE_PATHNAME', 'minhash_typmod_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- ALIGNMENT double: the 64-bit seed is read in place once detoasted.
-- STORAGE external: signatures are random numbers, compression gains nothing.
CREATE TYPE minhash (
    INPUT = minhash_in,
    OUTPUT = minhash_out,
    RECEIVE = minhash_recv,
    SEND = minhash_send,
    TYPMOD_IN = minhash_typmod_in,
    TYPMOD_OUT = minhash_typmod_out,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = double,
    STORAGE = external
);

COMMENT ON TYPE minhash IS
    'MinHash signature of a set: [family:][bitsN:]seed:[v1,...,vk]; minhash(k) fixes num_perm k, minhash(k, bits) also the bits kept of each value';

-- The length coercion behind minhash(k) and minhash(k, bits): assignment
-- checks k and the width, an explicit cast may shorten (a prefix of a
-- signature is a valid signature) and narrow (the low bits of each value).
CREATE FUNCTION minhash_enforce_typmod(minhash, integer, boolean) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_enforce_typmod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (minhash AS minhash)
    WITH FUNCTION minhash_enforce_typmod(minhash, integer, boolean) AS IMPLICIT;

COMMENT ON FUNCTION minhash_in(cstring, oid, integer) IS 'text input of type minhash';
COMMENT ON FUNCTION minhash_out(minhash) IS 'text output of type minhash';
COMMENT ON FUNCTION minhash_recv(internal, oid, integer) IS 'binary input of type minhash';
COMMENT ON FUNCTION minhash_send(minhash) IS 'binary output of type minhash';
COMMENT ON FUNCTION minhash_typmod_in(cstring[]) IS 'type modifier input: minhash(num_perm) or minhash(num_perm, bits)';
COMMENT ON FUNCTION minhash_typmod_out(integer) IS 'type modifier output: minhash(num_perm) or minhash(num_perm, bits)';
COMMENT ON FUNCTION minhash_enforce_typmod(minhash, integer, boolean) IS
    'cast to minhash(k[, bits]): error if num_perm or the width differs, except that an explicit cast shortens and narrows';
COMMENT ON CAST (minhash AS minhash) IS
    'enforces the typmod minhash(k[, bits]): assignment requires num_perm k and the width, an explicit cast may shorten and narrow';
