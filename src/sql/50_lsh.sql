
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

-- Placeholders, so that CREATE INDEX ... USING lsh (body) on a text or array
-- column reaches the access method, whose build explains that the index takes
-- minhash(body); without a default operator class PostgreSQL would stop at
-- "data type text has no default operator class for access method lsh". They
-- have no operators: no query can use them and no index is ever built with
-- them (lsh_require_signatures in src/pg/lsh/lsh_validate.cpp).
CREATE OPERATOR CLASS text_needs_minhash_ops DEFAULT FOR TYPE text USING lsh AS
    STORAGE text;
COMMENT ON OPERATOR CLASS text_needs_minhash_ops USING lsh IS
    'placeholder: an lsh index on text fails with a hint to index minhash(column)';
CREATE OPERATOR CLASS array_needs_minhash_ops DEFAULT FOR TYPE anyarray USING lsh AS
    STORAGE anyarray;
COMMENT ON OPERATOR CLASS array_needs_minhash_ops USING lsh IS
    'placeholder: an lsh index on an array fails with a hint to index minhash(column)';

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
    OUT free_slots int8, OUT entries int8, OUT leaf_fill float8,
    OUT pending_pages int8, OUT pending_rows int8)
    AS 'MODULE_PATHNAME', 'minhash_lsh_stats' LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
-- Left executable by PUBLIC: it takes AccessShareLock (a SELECT's lock,
-- which conflicts only with DDL) for one read of the index, and only after
-- checking that the caller owns the table.
COMMENT ON FUNCTION minhash_lsh_stats(regclass) IS
    'parameters and page, row and entry counts of an lsh index';

-- The recall of the probe rule every reader of the index follows (%,
-- minhash_similar_pairs, minhash_clusters, minhash_match): the probability
-- that a pair of similarity J is found at the threshold (NULL:
-- minhash.similarity_threshold), for J = t, t + 0.05, t + 0.1, with the probe
-- depth. Reads the metapage only; SELECT on the table required.
CREATE FUNCTION minhash_lsh_recall(index regclass, threshold double precision DEFAULT NULL)
    RETURNS TABLE (similarity double precision, recall double precision, depth integer)
    AS 'MODULE_PATHNAME', 'minhash_lsh_recall' LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 3;
COMMENT ON FUNCTION minhash_lsh_recall(regclass, double precision) IS
    'probability that the index finds a pair of similarity t, t + 0.05, t + 0.1 at threshold t, and the probe depth';

-- Merges the pending list (fastupdate) into the tree now, as VACUUM does;
-- the index's owner only, as gin_clean_pending_list. Returns the rows merged.
CREATE FUNCTION minhash_lsh_clean_pending_list(index regclass) RETURNS int8
    AS 'MODULE_PATHNAME', 'minhash_lsh_clean_pending_list' LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION minhash_lsh_clean_pending_list(regclass) IS
    'merge the pending list of an lsh index (fastupdate) into its tree; returns the rows merged';

-- minhash_similar(sig, q, t) becomes this index condition (lsh_support.cpp).
ALTER OPERATOR FAMILY minhash_ops USING lsh ADD OPERATOR 3 %>= (minhash, minhash_query);
