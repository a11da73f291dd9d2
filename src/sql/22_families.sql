
-- ---------------------------------------------------------------------------
-- Hash families (docs/sql.md, "Hash families"). Every signature records its
-- family; signatures of different families are never compared.
--   native      XXH3-64 + multiply-add-shift (the default, 1.0's only family)
--   datasketch  datasketch.MinHash(num_perm, seed) bit for bit
--   oph         one-permutation hashing with optimal densification
-- ---------------------------------------------------------------------------

CREATE TYPE minhash_family AS ENUM ('native', 'datasketch', 'oph');
COMMENT ON TYPE minhash_family IS 'hash family of a MinHash signature';

-- The family comes second and has no default, so minhash(doc) and
-- minhash(doc, 'char') keep meaning the native functions; name it:
-- minhash(body, family => 'datasketch').
CREATE FUNCTION minhash(doc text, family minhash_family, unit text DEFAULT 'word',
                        k integer DEFAULT 0, num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_family' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(text, minhash_family, text, integer, integer, bigint) IS
    'MinHash signature of the shingles of a document, with a hash family';

CREATE FUNCTION minhash(elements anyarray, family minhash_family, num_perm integer DEFAULT 128,
                        seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_array_family' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 200;
COMMENT ON FUNCTION minhash(anyarray, minhash_family, integer, bigint) IS
    'MinHash signature of the set of non-NULL array elements (their UTF-8 text forms), with a hash family';

CREATE FUNCTION minhash_from_array("values" bigint[], family minhash_family, seed bigint)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_from_array_family' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_from_array(bigint[], minhash_family, bigint) IS
    'signature from exported values (each 0..4294967295), the hash family and the seed they were computed with';

CREATE FUNCTION minhash_family(sig minhash) RETURNS minhash_family
    AS 'MODULE_PATHNAME', 'minhash_sig_family' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_family(minhash) IS 'hash family of a signature';

-- ---------------------------------------------------------------------------
-- Words from PostgreSQL's text search (docs/sql.md, "Stop words and
-- stemming"): the lexemes of to_tsvector(config, doc) in document order,
-- shingled k at a time. IMMUTABLE as to_tsvector(regconfig, text) is: the
-- configuration is explicit (a change to its dictionaries or stop-word
-- files calls for a REINDEX, as for a text search index).
-- ---------------------------------------------------------------------------

CREATE FUNCTION minhash(doc text, config regconfig, k integer DEFAULT 0,
                        num_perm integer DEFAULT 128, seed bigint DEFAULT 1,
                        family minhash_family DEFAULT 'native')
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_config' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(text, regconfig, integer, integer, bigint, minhash_family) IS
    'MinHash signature of the k-lexeme shingles of to_tsvector(config, doc), in document order';

-- k has no default here: minhash_shingles(doc, k) and minhash_shingles(doc,
-- NULL) must keep resolving to the 1.0 function.
-- An integer casts implicitly to regconfig, so for a varchar or char(n)
-- document minhash(doc, 3, 256) would match both minhash(text, regconfig,
-- ...) and the hint overload minhash(text, integer, "any", ...) equally well
-- (ambiguous). These overloads keep it the hint's error.
CREATE FUNCTION minhash(varchar, integer, "any" DEFAULT NULL, "any" DEFAULT NULL,
                        "any" DEFAULT NULL)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_int' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION minhash(varchar, integer, "any", "any", "any") IS
    'not a signature: an error explaining that the second argument of minhash(doc, ...) is the unit';
CREATE FUNCTION minhash(bpchar, integer, "any" DEFAULT NULL, "any" DEFAULT NULL,
                        "any" DEFAULT NULL)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_int' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION minhash(bpchar, integer, "any", "any", "any") IS
    'not a signature: an error explaining that the second argument of minhash(doc, ...) is the unit';

-- For a text document minhash(doc, 3, 256) matches the hint overload and
-- minhash(text, regconfig, k, ...) on two exact types each (ambiguous, 42725).
-- This overload matches it on three, and minhash(doc, 3, 256, 1) on four, so
-- numbers in the unit's place keep the hint's error; its bigint last
-- parameter wins minhash(doc, 3, 128, 1, 7::bigint) as well.
CREATE FUNCTION minhash(text, integer, integer, integer DEFAULT NULL, bigint DEFAULT NULL)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_int' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION minhash(text, integer, integer, integer, bigint) IS
    'not a signature: an error explaining that the second argument of minhash(doc, ...) is the unit';
-- ... and with it minhash(doc, 3, 'char') would match this one and the first
-- hint overload equally ("any" and integer are of different categories, so
-- the literal decides nothing). A text third parameter is preferred for a
-- literal, so that call keeps the hint's error too.
CREATE FUNCTION minhash(text, integer, text, "any" DEFAULT NULL, "any" DEFAULT NULL)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_int' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION minhash(text, integer, text, "any", "any") IS
    'not a signature: an error explaining that the second argument of minhash(doc, ...) is the unit';

CREATE FUNCTION minhash_shingles(doc text, k integer, config regconfig) RETURNS text[]
    AS 'MODULE_PATHNAME', 'minhash_shingles_config' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash_shingles(text, integer, regconfig) IS
    'distinct k-lexeme shingles of to_tsvector(config, doc), in order of first appearance (k = 0: 5)';

-- ---------------------------------------------------------------------------
-- Compact signatures (docs/sql.md, "Compact signatures"): bits => 16 or 8
-- keeps the low bits of each value. Named, never positional: bits has no
-- default, so calls without it resolve as before; it is bigint, so that a
-- positional integer still goes to the int4 parameter of the older
-- overloads (minhash(body, 16) to the hint overload minhash(text, integer,
-- ...), minhash(arr, 64, 5) to num_perm and seed) while bits => 16 matches
-- (int4 casts to int8 implicitly); and family comes right after it, so no
-- positional call of the older overloads matches these.
-- ---------------------------------------------------------------------------

CREATE FUNCTION minhash(doc text, bits bigint, family minhash_family DEFAULT 'native',
                        unit text DEFAULT 'word', k integer DEFAULT 0,
                        num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_bits' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(text, bigint, minhash_family, text, integer, integer, bigint) IS
    'MinHash signature of the shingles of a document keeping bits (8, 16 or 32) of each value';

CREATE FUNCTION minhash(doc text, config regconfig, bits bigint,
                        family minhash_family DEFAULT 'native', k integer DEFAULT 0,
                        num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_config_bits' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(text, regconfig, bigint, minhash_family, integer, integer, bigint) IS
    'MinHash signature of the k-lexeme shingles of to_tsvector(config, doc) keeping bits (8, 16 or 32) of each value';

CREATE FUNCTION minhash(elements anyarray, bits bigint, family minhash_family DEFAULT 'native',
                        num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_array_bits' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 200;
COMMENT ON FUNCTION minhash(anyarray, bigint, minhash_family, integer, bigint) IS
    'MinHash signature of the set of non-NULL array elements keeping bits (8, 16 or 32) of each value';

CREATE FUNCTION minhash_from_array("values" bigint[], family minhash_family, seed bigint,
                                   bits integer)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_from_array_bits' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_from_array(bigint[], minhash_family, bigint, integer) IS
    'signature from exported values (each 0..2^bits-1), the hash family, the seed and the bits kept of each value';
