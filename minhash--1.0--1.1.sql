-- minhash 1.0 -> 1.1 (ALTER EXTENSION minhash UPDATE TO '1.1').
-- Every change to an SQL object in src/sql/ since 1.0 is repeated here, so that an
-- updated install equals a fresh 1.1 install (tests check this).

\echo Use "ALTER EXTENSION minhash UPDATE TO '1.1'" to load this file. \quit

-- Selectivity: % gets estimators fed by the lsh index's statistics
CREATE FUNCTION minhash_similar_sel(internal, oid, internal, integer) RETURNS float8
    AS 'MODULE_PATHNAME', 'minhash_similar_sel' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_similar_sel(internal, oid, internal, integer) IS
    'restriction selectivity of %';
CREATE FUNCTION minhash_similar_joinsel(internal, oid, internal, smallint, internal) RETURNS float8
    AS 'MODULE_PATHNAME', 'minhash_similar_joinsel' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_similar_joinsel(internal, oid, internal, smallint, internal) IS
    'join selectivity of %';
ALTER OPERATOR % (minhash, minhash) SET (RESTRICT = minhash_similar_sel, JOIN = minhash_similar_joinsel);
-- ---------------------------------------------------------------------------
-- Hash families, text search words, btree and hash operator classes.
-- ---------------------------------------------------------------------------

-- ---------------------------------------------------------------------------
-- Hash families (docs/sql.md, "Hash families"). Every signature records its
-- family; signatures of different families are never compared.
--   native      XXH3-64 + multiply-add-shift (the default, 1.0's only family)
--   datasketch  datasketch.MinHash(num_perm, seed) bit for bit
-- ---------------------------------------------------------------------------

CREATE TYPE minhash_family AS ENUM ('native', 'datasketch');
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

-- = becomes hashable and mergeable (CREATE OPERATOR ... HASHES, MERGES in a
-- fresh install). PostgreSQL 15 has no ALTER OPERATOR ... SET (HASHES), so
-- the flags are set in the catalog, for this extension's operator only.
UPDATE pg_catalog.pg_operator SET oprcanhash = true, oprcanmerge = true
    WHERE oid OPERATOR(pg_catalog.=) '=(minhash, minhash)'::pg_catalog.regoperator;

COMMENT ON FUNCTION minhash_eq(minhash, minhash) IS 'signatures are equal (same family, seed, num_perm and values)';
COMMENT ON TYPE minhash IS
    'MinHash signature of a set: [family:]seed:[v1,...,vk]; minhash(k) fixes num_perm k';
COMMENT ON CAST (bigint[] AS minhash) IS 'import native-family values computed with seed 1 (minhash_from_array names family and seed)';

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

-- The shippable, indexable threshold form (src/sql/30_operators.sql, 50_lsh.sql)
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

ALTER OPERATOR FAMILY minhash_ops USING lsh ADD OPERATOR 3 %>= (minhash, minhash_query);

-- minhash(anyarray) no longer hashes setting-dependent text forms:
-- the function is the same C symbol, only its description changes.
COMMENT ON FUNCTION minhash(anyarray, integer, bigint) IS
    'MinHash signature of the set of non-NULL array elements, identified by a form no setting changes (text for integers, text types and other types whose output reads no setting; binary for the rest)';

-- Fast inserts: minhash_lsh_stats reports the pending list
-- (two more OUT columns: the function is re-created, same C symbol), and the
-- pending list can be merged on demand (src/sql/50_lsh.sql).
DROP FUNCTION minhash_lsh_stats(regclass);
CREATE FUNCTION minhash_lsh_stats(index regclass,
    OUT num_perm int, OUT seed int8, OUT bands int, OUT rows int, OUT threshold float8,
    OUT height int, OUT pages int8, OUT data_pages int8, OUT leaf_pages int8,
    OUT internal_pages int8, OUT unused_pages int8, OUT live_rows int8, OUT dead_rows int8,
    OUT free_slots int8, OUT entries int8, OUT leaf_fill float8,
    OUT pending_pages int8, OUT pending_rows int8)
    AS 'MODULE_PATHNAME', 'minhash_lsh_stats' LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION minhash_lsh_stats(regclass) IS
    'parameters and page, row and entry counts of an lsh index';

CREATE FUNCTION minhash_lsh_clean_pending_list(index regclass) RETURNS int8
    AS 'MODULE_PATHNAME', 'minhash_lsh_clean_pending_list' LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION minhash_lsh_clean_pending_list(regclass) IS
    'merge the pending list of an lsh index (fastupdate) into its tree; returns the rows merged';

-- src/sql/20_functions.sql: band keys of a prefix of each band, and the first
-- band two signatures share (all pairs of a table outside one index: Citus).
CREATE FUNCTION minhash_bands(sig minhash, bands integer, "rows" integer, depth integer) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'minhash_bands_depth' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_bands(minhash, integer, integer, integer) IS
    'one 64-bit hash per LSH band of its first depth values';

CREATE FUNCTION minhash_first_band(a minhash, b minhash, bands integer, "rows" integer, depth integer)
    RETURNS integer
    AS 'MODULE_PATHNAME', 'minhash_first_band' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_first_band(minhash, minhash, integer, integer, integer) IS
    'first LSH band (1-based) in which a and b agree on the first depth values, or NULL';

-- Citus distributed tables (docs/scale-out.md, "Citus").
-- src/sql/30_operators.sql: the planner support of %'s function refuses a %
-- on a distributed table that would reach the workers without the session's
-- threshold.
CREATE FUNCTION minhash_threshold_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'minhash_threshold_support' LANGUAGE C STRICT;
ALTER FUNCTION minhash_similar(minhash, minhash) SUPPORT minhash_threshold_support;

-- corpus scale: the oph family, compact signatures (src/sql/10_type.sql,
-- 20_functions.sql, 22_families.sql). ADD VALUE appends 'oph' after
-- 'datasketch', the order of a fresh install.
ALTER TYPE minhash_family ADD VALUE 'oph';

COMMENT ON TYPE minhash IS
    'MinHash signature of a set: [family:][bitsN:]seed:[v1,...,vk]; minhash(k) fixes num_perm k, minhash(k, bits) also the bits kept of each value';
COMMENT ON FUNCTION minhash_typmod_in(cstring[]) IS 'type modifier input: minhash(num_perm) or minhash(num_perm, bits)';
COMMENT ON FUNCTION minhash_typmod_out(integer) IS 'type modifier output: minhash(num_perm) or minhash(num_perm, bits)';
COMMENT ON FUNCTION minhash_enforce_typmod(minhash, integer, boolean) IS
    'cast to minhash(k[, bits]): error if num_perm or the width differs, except that an explicit cast shortens and narrows';
COMMENT ON CAST (minhash AS minhash) IS
    'enforces the typmod minhash(k[, bits]): assignment requires num_perm k and the width, an explicit cast may shorten and narrow';

CREATE FUNCTION minhash_bits(sig minhash) RETURNS integer
    AS 'MODULE_PATHNAME', 'minhash_sig_bits' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_bits(minhash) IS 'bits kept of each value of a signature: 32, or 16 or 8 (compact)';

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

-- src/sql/60_pairs.sql: minhash_clusters keeps the row chosen by a column
-- (keep, keep_desc appended to both signatures: the functions are
-- re-created, same C symbols, which still serve 1.0's shorter signatures).
DROP FUNCTION minhash_clusters(regclass, name, double precision, text, boolean, name, text, integer);
DROP FUNCTION minhash_clusters(regclass, name, anyelement, double precision, text, boolean, name, text, integer);
CREATE FUNCTION minhash_clusters(index regclass, key_column name,
                                 threshold double precision DEFAULT NULL,
                                 mode text DEFAULT 'connected',
                                 exact boolean DEFAULT false,
                                 text_column name DEFAULT NULL,
                                 unit text DEFAULT NULL, k integer DEFAULT NULL,
                                 keep name DEFAULT NULL, keep_desc boolean DEFAULT false)
    RETURNS TABLE (key bigint, cluster_id bigint)
    AS 'MODULE_PATHNAME', 'minhash_clusters'
    LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_clusters(regclass, name, double precision, text, boolean, name, text, integer, name, boolean) IS
    'clusters of similar rows as (key, key of the row to keep: the smallest, or first by the keep column); mode connected or representative';
CREATE FUNCTION minhash_clusters(index regclass, key_column name, key_type anyelement,
                                 threshold double precision DEFAULT NULL,
                                 mode text DEFAULT 'connected',
                                 exact boolean DEFAULT false,
                                 text_column name DEFAULT NULL,
                                 unit text DEFAULT NULL, k integer DEFAULT NULL,
                                 keep name DEFAULT NULL, keep_desc boolean DEFAULT false)
    RETURNS TABLE (key anyelement, cluster_id anyelement)
    AS 'MODULE_PATHNAME', 'minhash_clusters_any'
    LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_clusters(regclass, name, anyelement, double precision, text, boolean, name, text, integer, name, boolean) IS
    'minhash_clusters with keys of the type of key_type (e.g. NULL::text)';

-- Ignoring accents and punctuation (src/sql/24_ignore.sql): minhash(doc,
-- ignore => 'accents, punctuation') and minhash_shingles(doc, k, ignore).
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

CREATE FUNCTION minhash_shingles(doc text, k integer, ignore minhash_ignore, unit text DEFAULT 'word')
    RETURNS text[]
    AS 'MODULE_PATHNAME', 'minhash_shingles_ignore' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash_shingles(text, integer, minhash_ignore, text) IS
    'distinct shingles of a document with accents or punctuation left out, in order of first appearance (k = 0: 5 words or 9 characters)';
-- One probe rule for every reader of an lsh index, and its recall
-- (src/sql/50_lsh.sql); a batch of rows against an index (src/sql/60_pairs.sql).
CREATE FUNCTION minhash_lsh_recall(index regclass, threshold double precision DEFAULT NULL)
    RETURNS TABLE (similarity double precision, recall double precision, depth integer)
    AS 'MODULE_PATHNAME', 'minhash_lsh_recall' LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 3;
COMMENT ON FUNCTION minhash_lsh_recall(regclass, double precision) IS
    'probability that the index finds a pair of similarity t, t + 0.05, t + 0.1 at threshold t, and the probe depth';

CREATE FUNCTION minhash_match(index regclass, key_column name,
                              batch regclass, batch_key_column name, batch_sig_column name,
                              threshold double precision DEFAULT NULL)
    RETURNS TABLE (batch_key bigint, key bigint, similarity double precision)
    AS 'MODULE_PATHNAME', 'minhash_match'
    LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_match(regclass, name, regclass, name, name, double precision) IS
    'every pair of a batch row and an indexed row with similarity >= threshold, once, as (batch_key, key, similarity)';

CREATE FUNCTION minhash_match(index regclass, key_column name, key_type anyelement,
                              batch regclass, batch_key_column name, batch_sig_column name,
                              threshold double precision DEFAULT NULL)
    RETURNS TABLE (batch_key anyelement, key anyelement, similarity double precision)
    AS 'MODULE_PATHNAME', 'minhash_match_any'
    LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_match(regclass, name, anyelement, regclass, name, name, double precision) IS
    'minhash_match with keys of the type of key_type (e.g. NULL::text)';

-- src/sql/20_functions.sql: minhash_bands(sig, bands, rows, depth) and
-- minhash_first_band follow the lsh index's probe rule (its 32-bit band keys
-- under the probe mask), so that band keys computed outside an index (Citus,
-- sharded tables) find the pairs the index finds. Same C symbols.
COMMENT ON FUNCTION minhash_bands(minhash, integer, integer, integer) IS
    'the band keys an lsh index with these bands and rows stores, on the bits a probe of that depth compares';
COMMENT ON FUNCTION minhash_first_band(minhash, minhash, integer, integer, integer) IS
    'first LSH band (1-based) whose keys a probe of that depth matches for a and b, or NULL';
