-- minhash 1.0 extension script: the released 1.0, frozen. Do not edit; change src/sql/ and minhash--1.0--1.1.sql.

\echo Use "CREATE EXTENSION minhash" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Type minhash: a MinHash signature, seed:[v1,...,vk] in text form.
-- Typmod minhash(k) fixes num_perm; an explicit cast to a smaller k truncates.
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
    'MinHash signature of a set: seed:[v1,...,vk]; minhash(k) fixes num_perm k';

-- The length coercion behind minhash(k): assignment checks k, an explicit
-- cast may shorten (a prefix of a signature is a valid signature).
CREATE FUNCTION minhash_enforce_typmod(minhash, integer, boolean) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_enforce_typmod' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (minhash AS minhash)
    WITH FUNCTION minhash_enforce_typmod(minhash, integer, boolean) AS IMPLICIT;

COMMENT ON FUNCTION minhash_in(cstring, oid, integer) IS 'text input of type minhash';
COMMENT ON FUNCTION minhash_out(minhash) IS 'text output of type minhash';
COMMENT ON FUNCTION minhash_recv(internal, oid, integer) IS 'binary input of type minhash';
COMMENT ON FUNCTION minhash_send(minhash) IS 'binary output of type minhash';
COMMENT ON FUNCTION minhash_typmod_in(cstring[]) IS 'type modifier input: minhash(num_perm)';
COMMENT ON FUNCTION minhash_typmod_out(integer) IS 'type modifier output: minhash(num_perm)';
COMMENT ON FUNCTION minhash_enforce_typmod(minhash, integer, boolean) IS
    'cast to minhash(k): error if num_perm differs, except that an explicit cast shortens';
COMMENT ON CAST (minhash AS minhash) IS
    'enforces the typmod minhash(k): assignment requires num_perm k, an explicit cast may shorten';

-- ---------------------------------------------------------------------------
-- Shingles, signatures, similarity, export, LSH parameters.
-- ---------------------------------------------------------------------------

CREATE FUNCTION minhash_shingles(doc text, k integer DEFAULT 0, unit text DEFAULT 'word')
    RETURNS text[]
    AS 'MODULE_PATHNAME', 'minhash_shingles' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash_shingles(text, integer, text) IS
    'distinct shingles of a document, in order of first appearance (unit word, char or char_nospace; k = 0: 5 words or 9 characters)';

CREATE FUNCTION minhash(doc text, unit text DEFAULT 'word', k integer DEFAULT 0,
                        num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(text, text, integer, integer, bigint) IS
    'MinHash signature of the shingles of a document';

-- COST: shingling and hashing a document costs about a thousand operators;
-- saying so lets the planner see that a scan re-computing minhash(body) per
-- row is dear next to an lsh index over that expression.

-- minhash(x) with one argument is also the function-style cast x::minhash,
-- which the parser prefers unless a function matches x's type exactly: these
-- overloads keep minhash(varchar_column) and minhash('a literal') signatures,
-- not parse errors of the minhash literal syntax.
CREATE FUNCTION minhash(doc unknown) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_unknown' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(unknown) IS
    'MinHash signature of a document given as a bare literal (all defaults)';

CREATE FUNCTION minhash(doc varchar, unit text DEFAULT 'word', k integer DEFAULT 0,
                        num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(varchar, text, integer, integer, bigint) IS
    'MinHash signature of the shingles of a document';

-- bpchar's padding is whitespace, which shingling normalizes away.
CREATE FUNCTION minhash(doc bpchar, unit text DEFAULT 'word', k integer DEFAULT 0,
                        num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash(bpchar, text, integer, integer, bigint) IS
    'MinHash signature of the shingles of a document';

CREATE FUNCTION minhash(elements anyarray, num_perm integer DEFAULT 128, seed bigint DEFAULT 1)
    RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 200;
COMMENT ON FUNCTION minhash(anyarray, integer, bigint) IS
    'MinHash signature of the set of non-NULL array elements, identified by their text form (for dates, timestamps, floats it follows DateStyle, TimeZone, extra_float_digits)';

CREATE FUNCTION jaccard(a minhash, b minhash) RETURNS double precision
    AS 'MODULE_PATHNAME', 'minhash_jaccard' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 5;
COMMENT ON FUNCTION jaccard(minhash, minhash) IS
    'estimated Jaccard similarity: the share of equal signature values';

CREATE FUNCTION jaccard(a anyarray, b anyarray) RETURNS double precision
    AS 'MODULE_PATHNAME', 'minhash_jaccard_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION jaccard(anyarray, anyarray) IS
    'exact Jaccard similarity of the sets of non-NULL array elements (two empty sets: 1)';

CREATE FUNCTION minhash_merge(a minhash, b minhash) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_merge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_merge(minhash, minhash) IS
    'signature of the union of two sets (element-wise minimum)';

CREATE FUNCTION minhash_cardinality(sig minhash) RETURNS double precision
    AS 'MODULE_PATHNAME', 'minhash_cardinality' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_cardinality(minhash) IS
    'estimated number of distinct elements of the set behind a signature';

CREATE FUNCTION minhash_num_perm(sig minhash) RETURNS integer
    AS 'MODULE_PATHNAME', 'minhash_num_perm' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_num_perm(minhash) IS 'number of hash functions (values) of a signature';

CREATE FUNCTION minhash_seed(sig minhash) RETURNS bigint
    AS 'MODULE_PATHNAME', 'minhash_seed' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_seed(minhash) IS 'seed of the hash family of a signature';

CREATE FUNCTION minhash_to_array(sig minhash) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'minhash_to_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_to_array(minhash) IS 'the values of a signature, for export';

CREATE FUNCTION minhash_from_array("values" bigint[], seed bigint DEFAULT 1) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_from_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_from_array(bigint[], bigint) IS
    'signature from exported values (each 0..4294967295) and the seed they were computed with';

-- One argument, as a cast function must have: the seed is the default, 1.
CREATE FUNCTION minhash_from_int8_array(bigint[]) RETURNS minhash
    AS 'MODULE_PATHNAME', 'minhash_from_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_from_int8_array(bigint[]) IS
    'cast bigint[] to minhash with seed 1; use minhash_from_array for another seed';

CREATE CAST (minhash AS bigint[]) WITH FUNCTION minhash_to_array(minhash);
CREATE CAST (bigint[] AS minhash) WITH FUNCTION minhash_from_int8_array(bigint[]);

CREATE FUNCTION minhash_lsh_params(threshold double precision, num_perm integer DEFAULT 128,
                                   fp_weight double precision DEFAULT 0.5,
                                   fn_weight double precision DEFAULT 0.5)
    RETURNS TABLE (bands integer, rows integer,
                   false_positive double precision, false_negative double precision)
    AS 'MODULE_PATHNAME', 'minhash_lsh_params' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
    ROWS 1;
COMMENT ON FUNCTION minhash_lsh_params(double precision, integer, double precision, double precision) IS
    'LSH bands and rows minimising the weighted false-positive and false-negative areas for a threshold';

CREATE FUNCTION minhash_bands(sig minhash, bands integer, "rows" integer) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'minhash_bands' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_bands(minhash, integer, integer) IS
    'one 64-bit hash per LSH band of rows consecutive values';
COMMENT ON CAST (minhash AS bigint[]) IS 'export the values of a signature';
COMMENT ON CAST (bigint[] AS minhash) IS 'import values computed with seed 1 (minhash_from_array takes any seed)';

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
COMMENT ON FUNCTION minhash_eq(minhash, minhash) IS 'signatures are equal';

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
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel
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

-- ---------------------------------------------------------------------------
-- The lsh index access method (src/pg/lsh/, docs/lsh.md).
-- ---------------------------------------------------------------------------

CREATE FUNCTION lsh_handler(internal) RETURNS index_am_handler
    AS 'MODULE_PATHNAME', 'lsh_handler' LANGUAGE C;

CREATE ACCESS METHOD lsh TYPE INDEX HANDLER lsh_handler;
COMMENT ON ACCESS METHOD lsh IS 'LSH bands over MinHash signatures: % and ORDER BY <%>';

CREATE OPERATOR CLASS minhash_ops DEFAULT FOR TYPE minhash USING lsh AS
    OPERATOR 1 % (minhash, minhash),
    OPERATOR 2 <%> (minhash, minhash) FOR ORDER BY float_ops;

-- Walks the whole index under ShareLock (writers wait); no rows = consistent.
-- heapallindexed also compares it with the table (index expressions run as
-- the table's owner). Holding off writers for the length of a check is an
-- administrator's decision, so, as with amcheck, only superusers may call it
-- unless they GRANT EXECUTE; the caller must also own the table.
CREATE FUNCTION minhash_lsh_check(index regclass, heapallindexed bool DEFAULT false)
    RETURNS TABLE(problem text)
    AS 'MODULE_PATHNAME', 'minhash_lsh_check' LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION minhash_lsh_check(regclass, bool) IS
    'inconsistencies found in an lsh index (no rows: consistent); heapallindexed: also against its table';
REVOKE ALL ON FUNCTION minhash_lsh_check(regclass, bool) FROM PUBLIC;

CREATE FUNCTION minhash_lsh_stats(index regclass,
    OUT num_perm int, OUT seed int8, OUT bands int, OUT rows int, OUT threshold float8,
    OUT height int, OUT pages int8, OUT data_pages int8, OUT leaf_pages int8,
    OUT internal_pages int8, OUT unused_pages int8, OUT live_rows int8, OUT dead_rows int8,
    OUT free_slots int8, OUT entries int8, OUT leaf_fill float8)
    AS 'MODULE_PATHNAME', 'minhash_lsh_stats' LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
-- Left executable by PUBLIC: it takes AccessShareLock (a SELECT's lock,
-- which conflicts only with DDL) for one read of the index, and only after
-- checking that the caller owns the table.
COMMENT ON FUNCTION minhash_lsh_stats(regclass) IS
    'parameters and page, row and entry counts of an lsh index';

-- ---------------------------------------------------------------------------
-- All similar pairs and duplicate clusters from one walk of an lsh index
-- (src/pg/lsh/pairs*.cpp, docs/pairs.md).
--
-- Each function comes twice: keys returned as bigint (integer key columns),
-- and with key_type anyelement (third argument) for keys of any type:
--     minhash_similar_pairs('docs_sig_idx', 'id')
--     minhash_similar_pairs('docs_sig_idx', 'name', NULL::text)
-- threshold NULL means minhash.similarity_threshold. exact => true verifies
-- candidates on the shingles of the text: text_column, or the text argument
-- of an index on minhash(text, ...); unit and k default to the index's.
-- STABLE: the result depends on the snapshot and the GUC.
-- ---------------------------------------------------------------------------

CREATE FUNCTION minhash_similar_pairs(index regclass, key_column name,
                                      threshold double precision DEFAULT NULL,
                                      exact boolean DEFAULT false,
                                      text_column name DEFAULT NULL,
                                      unit text DEFAULT NULL, k integer DEFAULT NULL)
    RETURNS TABLE (key_a bigint, key_b bigint, similarity double precision)
    AS 'MODULE_PATHNAME', 'minhash_similar_pairs'
    LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_similar_pairs(regclass, name, double precision, boolean, name, text, integer) IS
    'every pair of rows sharing an LSH band with similarity >= threshold, once, as (key_a < key_b, similarity)';

CREATE FUNCTION minhash_similar_pairs(index regclass, key_column name, key_type anyelement,
                                      threshold double precision DEFAULT NULL,
                                      exact boolean DEFAULT false,
                                      text_column name DEFAULT NULL,
                                      unit text DEFAULT NULL, k integer DEFAULT NULL)
    RETURNS TABLE (key_a anyelement, key_b anyelement, similarity double precision)
    AS 'MODULE_PATHNAME', 'minhash_similar_pairs_any'
    LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_similar_pairs(regclass, name, anyelement, double precision, boolean, name, text, integer) IS
    'minhash_similar_pairs with keys of the type of key_type (e.g. NULL::text)';

CREATE FUNCTION minhash_clusters(index regclass, key_column name,
                                 threshold double precision DEFAULT NULL,
                                 mode text DEFAULT 'connected',
                                 exact boolean DEFAULT false,
                                 text_column name DEFAULT NULL,
                                 unit text DEFAULT NULL, k integer DEFAULT NULL)
    RETURNS TABLE (key bigint, cluster_id bigint)
    AS 'MODULE_PATHNAME', 'minhash_clusters'
    LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_clusters(regclass, name, double precision, text, boolean, name, text, integer) IS
    'clusters of similar rows as (key, smallest key of the cluster); mode connected or representative';

CREATE FUNCTION minhash_clusters(index regclass, key_column name, key_type anyelement,
                                 threshold double precision DEFAULT NULL,
                                 mode text DEFAULT 'connected',
                                 exact boolean DEFAULT false,
                                 text_column name DEFAULT NULL,
                                 unit text DEFAULT NULL, k integer DEFAULT NULL)
    RETURNS TABLE (key anyelement, cluster_id anyelement)
    AS 'MODULE_PATHNAME', 'minhash_clusters_any'
    LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_clusters(regclass, name, anyelement, double precision, text, boolean, name, text, integer) IS
    'minhash_clusters with keys of the type of key_type (e.g. NULL::text)';
