
-- ---------------------------------------------------------------------------
-- All similar pairs and duplicate clusters from one walk of an lsh index
-- (src/pg/pairs/, docs/pairs.md).
--
-- Each function comes twice: keys returned as bigint (integer key columns),
-- and with key_type anyelement (third argument) for keys of any type:
--     minhash_similar_pairs('docs_sig_idx', 'id')
--     minhash_similar_pairs('docs_sig_idx', 'name', NULL::text)
-- threshold NULL means minhash.similarity_threshold. exact => true verifies
-- candidates on the shingles of the text: text_column, or the text argument
-- of an index on minhash(text, ...); unit and k default to the index's.
-- minhash_clusters names each cluster after its first row: the smallest key,
-- or with keep => 'column' the row with the smallest (keep_desc => true:
-- largest) value of that column, NULLs last, ties by key.
-- STABLE: the result depends on the snapshot and the GUC.
-- An untyped NULL third, minhash_similar_pairs('idx', 'id', NULL), fits both
-- (double precision and anyelement are of different type categories and
-- neither is a string type) and is 42725, "not unique"; docs/pairs.md says
-- to write threshold => NULL. An overload taking unknown would not help:
-- PostgreSQL prefers a parameter of type unknown only when the call's types
-- equal the declared ones in every position, so it would have to be
-- (unknown, unknown, unknown), looking the index name up when the query
-- runs instead of when it is parsed (and it adds a category, making more
-- calls ambiguous, as tried).
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

-- ---------------------------------------------------------------------------
-- A batch of rows against an lsh index (src/pg/pairs/pairs_match.cpp,
-- docs/pairs.md "minhash_match"): every (batch row, indexed row) pair with
-- estimated similarity >= threshold, each once, as the per-row join
--     SELECT n.id, o.id FROM batch n JOIN docs o ON o.sig %>= ROW(n.sig, t)::minhash_query
-- through the index returns them, in one merge of the batch's band keys with
-- the index's leaves. The batch (table, view or materialized view) is read as
-- the caller; keys come back as bigint, or as key_type's type.
-- ---------------------------------------------------------------------------

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
