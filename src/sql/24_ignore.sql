
-- ---------------------------------------------------------------------------
-- Accents and punctuation (docs/sql.md, "Ignoring accents and punctuation"):
-- minhash(body, ignore => 'accents, punctuation') shingles the document as
-- if those characters had been taken out first. IMMUTABLE like the rest of
-- the normalization: what is a nonspacing mark, a punctuation character or a
-- symbol, and how a character decomposes, is the Unicode data compiled into
-- libunistring, as case folding is.
--
-- ignore is a domain over text, not text itself: at the second position an
-- untyped argument (minhash(body, 'char'), or a parameter whose type the
-- client leaves open) still resolves to minhash(doc, unit, ...), because text
-- is the preferred string type and the domain is not; ignore => '...' names
-- a parameter that only these functions have, so no older call changes.
-- ---------------------------------------------------------------------------

CREATE DOMAIN minhash_ignore AS pg_catalog.text;
COMMENT ON DOMAIN minhash_ignore IS
    'characters minhash() leaves out before shingling: accents, punctuation, or both separated by a comma';

CREATE FUNCTION minhash(doc text, ignore minhash_ignore, bits bigint DEFAULT 32,
                        family minhash_family DEFAULT 'native', unit text DEFAULT 'word',
                        k integer DEFAULT 0, num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text_ignore' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(text, minhash_ignore, bigint, minhash_family, text, integer, integer, bigint) IS
    'MinHash signature of the shingles of a document with accents or punctuation left out';

-- k comes before ignore and has no default, as in minhash_shingles(doc, k,
-- config): with ignore second, minhash_shingles(doc, '3') and an untyped
-- second parameter would resolve here (the 1.0 function's k is not a string
-- type) instead of to minhash_shingles(doc, k, unit).
CREATE FUNCTION minhash_shingles(doc text, k integer, ignore minhash_ignore, unit text DEFAULT 'word')
    RETURNS text[]
    AS 'MODULE_PATHNAME', 'minhash_shingles_ignore' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash_shingles(text, integer, minhash_ignore, text) IS
    'distinct shingles of a document with accents or punctuation left out, in order of first appearance (k = 0: 5 words or 9 characters)';
