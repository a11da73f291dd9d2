-- The lsh index over compact signatures (on-disk format 5). An index keeps
-- each value's low verify_bits bits in its data slots: by default 8 for
-- compact signatures, whose 16-bit values the executor then rechecks (the
-- index only rules rows out: a slot's count of equal values is never below
-- the signature's), and every bit of 32-bit ones. With all the bits it
-- verifies alone, as for 32-bit signatures. Either way an index scan
-- returns what the operators say of the stored signatures, never a row they
-- reject, and misses only what LSH misses.
SET extra_float_digits = 0;

-- 300 clusters of 1 to 6 near-duplicates (each row drops one of its
-- cluster's 60 elements, and the later ones a few more), 400 rows like no other
CREATE TABLE lc (id int PRIMARY KEY, body text, s16 minhash(128, 16), s8 minhash(128, 8), s32 minhash) WITH (autovacuum_enabled = off);
INSERT INTO lc (id, body)
SELECT c * 10 + m,
       (SELECT string_agg('w' || (c * 1000 + j), ' ' ORDER BY j) FROM generate_series(1, 60) j
        WHERE j <> m + 1 AND (j % 7 <> 0 OR j % 6 >= m))
FROM generate_series(1, 300) c, generate_series(0, 5) m
WHERE m <= c % 6;
INSERT INTO lc (id, body)
SELECT 100000 + i, (SELECT string_agg('u' || (i * 1000 + j), ' ') FROM generate_series(1, 50) j)
FROM generate_series(1, 400) i;
UPDATE lc SET s16 = minhash(body, bits => 16), s8 = minhash(body, bits => 8), s32 = minhash(body);
ANALYZE lc;

-- The operators' answers, once per change of the table: every pair of rows
-- (itself included) at estimated similarity 0.3 or more, by column
CREATE TABLE lc_j (col text, a int, b int, j float8);
CREATE FUNCTION lc_refresh(cols text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    c text;
BEGIN
    DELETE FROM lc_j WHERE col = ANY (cols);
    FOREACH c IN ARRAY cols LOOP
        EXECUTE format('INSERT INTO lc_j SELECT %1$L, a.id, b.id, jaccard(a.%1$I, b.%1$I)
                        FROM lc a JOIN lc b ON jaccard(a.%1$I, b.%1$I) >= 0.3', c);
    END LOOP;
END
$$;
SELECT lc_refresh('{s16,s8,s32}');

-- what the index returns against what the operator says, every other row a query:
-- rows returned, rows the operator rejects among them (must be 0), rows it
-- accepts that the index missed; by index scan and by bitmap scan, through
-- % (at minhash.similarity_threshold = t) or minhash_similar(a, b, t)
CREATE FUNCTION lc_answers(col text, t float8, form text DEFAULT '%')
RETURNS TABLE (scan text, returned bigint, wrong bigint, missed bigint)
LANGUAGE plpgsql AS $$
DECLARE
    cond text := CASE form WHEN '%' THEN format('b.%1$I %% a.%1$I', col)
                 ELSE format('minhash_similar(b.%1$I, a.%1$I, %2$s)', col, t) END;
BEGIN
    PERFORM set_config('minhash.similarity_threshold', t::text, true);
    FOREACH scan IN ARRAY ARRAY['index', 'bitmap'] LOOP
        PERFORM set_config('enable_seqscan', 'off', true);
        PERFORM set_config('enable_indexscan', (scan = 'index')::text, true);
        PERFORM set_config('enable_bitmapscan', (scan = 'bitmap')::text, true);
        EXECUTE format('CREATE TEMP TABLE lc_got AS SELECT a.id AS q, b.id AS o FROM lc a CROSS JOIN LATERAL (SELECT id FROM lc b WHERE %s) b WHERE a.id %% 2 = 0',
                       cond);
        returned := (SELECT count(*) FROM lc_got);
        wrong := (SELECT count(*) FROM lc_got g
                  WHERE NOT EXISTS (SELECT FROM lc_j WHERE lc_j.col = lc_answers.col AND a = g.q AND b = g.o AND j >= t));
        missed := (SELECT count(*) FROM lc_j
                   WHERE lc_j.col = lc_answers.col AND j >= t AND a % 2 = 0
                     AND NOT EXISTS (SELECT FROM lc_got g WHERE g.q = a AND g.o = b));
        DROP TABLE lc_got;
        RETURN NEXT;
    END LOOP;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
END
$$;

-- ORDER BY <%> LIMIT 6 through the index for 40 queries: how many rows come
-- back out of distance order, and how many distances differ from the
-- operator's (must both be 0); the nearest distances equal a sort's
CREATE FUNCTION lc_order(col text) RETURNS TABLE (rows bigint, out_of_order bigint, same_as_sort bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE format($q$
        CREATE TEMP TABLE lc_knn AS
        SELECT q.id AS q, x.n, x.d FROM lc q CROSS JOIN LATERAL (
            SELECT row_number() OVER () AS n, b.%1$I <%%> q.%1$I AS d
            FROM (SELECT %1$I FROM lc b ORDER BY b.%1$I <%%> q.%1$I LIMIT 6) b) x
        WHERE q.id %% 50 = 3 OR q.id IN (SELECT id FROM lc ORDER BY id LIMIT 20)$q$, col);
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    EXECUTE format($q$
        CREATE TEMP TABLE lc_sorted AS
        SELECT q.id AS q, x.n, x.d FROM lc q CROSS JOIN LATERAL (
            SELECT row_number() OVER (ORDER BY b.%1$I <%%> q.%1$I) AS n, b.%1$I <%%> q.%1$I AS d
            FROM lc b ORDER BY b.%1$I <%%> q.%1$I LIMIT 6) x
        WHERE q.id IN (SELECT q FROM lc_knn)$q$, col);
    PERFORM set_config('enable_indexscan', 'on', true);
    rows := (SELECT count(*) FROM lc_knn);
    out_of_order := (SELECT count(*) FROM lc_knn a JOIN lc_knn b ON a.q = b.q AND b.n = a.n + 1 WHERE b.d < a.d);
    same_as_sort := (SELECT count(*) FROM lc_knn a JOIN lc_sorted b USING (q, n) WHERE a.d = b.d);
    DROP TABLE lc_knn;
    DROP TABLE lc_sorted;
    RETURN NEXT;
END
$$;

-- pairs and clusters against the self-join: pairs found, found with a
-- similarity other than jaccard's or below the threshold (must be 0), missed
CREATE FUNCTION lc_pairs(idx regclass, col text, t float8) RETURNS TABLE (pairs bigint, wrong bigint, missed bigint, clustered_rows bigint)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        SELECT count(*),
               count(*) FILTER (WHERE p.similarity <> jaccard(a.%1$I, b.%1$I) OR p.similarity < %2$s),
               (SELECT count(*) FROM lc_j WHERE col = %1$L AND a < b AND j >= %2$s)
                 - count(*) FILTER (WHERE jaccard(a.%1$I, b.%1$I) >= %2$s)
        FROM minhash_similar_pairs(%3$L, 'id', %2$s) p JOIN lc a ON a.id = p.key_a JOIN lc b ON b.id = p.key_b
        WHERE p.key_a < p.key_b$q$, col, t, idx)
        INTO pairs, wrong, missed;
    clustered_rows := (SELECT count(*) FROM minhash_clusters(idx, 'id', t));
    RETURN NEXT;
END
$$;

-- minhash_similar_pairs and minhash_match (the table as its own batch)
-- against the per-row join through the index: the pairs the join finds
-- (each way, and each row with itself), then the pairs each function finds
-- that the join does not or misses (all 0: one probe rule, whatever the
-- slots keep), and the results whose similarity is not jaccard's (0)
CREATE FUNCTION lc_agree(idx regclass, tab text, col text, t float8)
RETURNS TABLE (joined bigint, pairs_differ bigint, match_differ bigint, wrong_similarity bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('minhash.similarity_threshold', t::text, true);
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    EXECUTE format('CREATE TEMP TABLE lc_join AS SELECT a.id AS a, b.id AS b FROM %1$I a JOIN %1$I b ON b.%2$I %% a.%2$I',
                   tab, col);
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    EXECUTE format('CREATE TEMP TABLE lc_p AS SELECT key_a AS a, key_b AS b, similarity FROM minhash_similar_pairs(%L, %L, %s)',
                   idx, 'id', t);
    EXECUTE format('CREATE TEMP TABLE lc_m AS SELECT batch_key AS a, key AS b, similarity FROM minhash_match(%L, %L, %L, %L, %L, %s)',
                   idx, 'id', tab, 'id', col, t);
    joined := (SELECT count(*) FROM lc_join);
    pairs_differ := (SELECT count(*) FROM ((SELECT a, b FROM lc_p EXCEPT SELECT a, b FROM lc_join WHERE a < b)
                                           UNION ALL (SELECT a, b FROM lc_join WHERE a < b EXCEPT SELECT a, b FROM lc_p)) x);
    match_differ := (SELECT count(*) FROM ((SELECT a, b FROM lc_m EXCEPT SELECT a, b FROM lc_join)
                                           UNION ALL (SELECT a, b FROM lc_join EXCEPT SELECT a, b FROM lc_m)) x);
    EXECUTE format('SELECT count(*) FROM (SELECT * FROM lc_p UNION ALL SELECT * FROM lc_m) r
                    JOIN %1$I x ON x.id = r.a JOIN %1$I y ON y.id = r.b WHERE r.similarity <> jaccard(x.%2$I, y.%2$I)',
                   tab, col) INTO wrong_similarity;
    DROP TABLE lc_join;
    DROP TABLE lc_p;
    DROP TABLE lc_m;
    RETURN NEXT;
END
$$;

-- 1. a minhash(128, 16) column: 8-bit slots by default, rechecked
CREATE INDEX lc_idx ON lc USING lsh (s16);
SELECT num_perm, bands, rows, data_pages, live_rows FROM minhash_lsh_stats('lc_idx');
SELECT * FROM lc_answers('s16', 0.5);
SELECT * FROM lc_answers('s16', 0.3, 'minhash_similar');
SELECT * FROM lc_order('s16');
SELECT * FROM lc_pairs('lc_idx', 's16', 0.5);
SELECT * FROM lc_pairs('lc_idx', 's16', 0.3);
SELECT * FROM lc_agree('lc_idx', 'lc', 's16', 0.5);
SELECT * FROM lc_agree('lc_idx', 'lc', 's16', 0.3);
SELECT * FROM minhash_lsh_check('lc_idx', true);
-- build options are fixed: verify_bits too
ALTER INDEX lc_idx SET (verify_bits = 16);
\echo :LAST_ERROR_SQLSTATE
DROP INDEX lc_idx;

-- 2. the same column, every bit kept: the index verifies alone, in slots twice the size
CREATE INDEX lc_idx ON lc USING lsh (s16) WITH (verify_bits = 16);
SELECT num_perm, bands, rows, data_pages, live_rows FROM minhash_lsh_stats('lc_idx');
SELECT * FROM lc_answers('s16', 0.5);
SELECT * FROM lc_order('s16');
SELECT * FROM lc_pairs('lc_idx', 's16', 0.5);
SELECT * FROM lc_agree('lc_idx', 'lc', 's16', 0.5);
SELECT * FROM lc_agree('lc_idx', 'lc', 's16', 0.3);
SELECT * FROM minhash_lsh_check('lc_idx', true);
DROP INDEX lc_idx;

-- 3. 8-bit signatures: 8-bit slots keep every bit
CREATE INDEX lc_idx ON lc USING lsh (s8);
SELECT num_perm, bands, rows, data_pages, live_rows FROM minhash_lsh_stats('lc_idx');
SELECT * FROM lc_answers('s8', 0.5);
SELECT * FROM lc_order('s8');
SELECT * FROM lc_pairs('lc_idx', 's8', 0.5);
SELECT * FROM lc_agree('lc_idx', 'lc', 's8', 0.5);
SELECT * FROM minhash_lsh_check('lc_idx', true);
DROP INDEX lc_idx;

-- 4. 32-bit signatures keep every bit by default (format 5 lays them out
-- as format 4 did), or 8 bits of each when asked, rechecked
CREATE INDEX lc_idx ON lc USING lsh (s32);
SELECT num_perm, bands, rows, data_pages, live_rows FROM minhash_lsh_stats('lc_idx');
SELECT * FROM lc_agree('lc_idx', 'lc', 's32', 0.5);
DROP INDEX lc_idx;
CREATE INDEX lc_idx ON lc USING lsh (s32) WITH (verify_bits = 8);
SELECT num_perm, bands, rows, data_pages, live_rows FROM minhash_lsh_stats('lc_idx');
SELECT * FROM lc_answers('s32', 0.5);
SELECT * FROM lc_order('s32');
SELECT * FROM lc_pairs('lc_idx', 's32', 0.5);
SELECT * FROM lc_agree('lc_idx', 'lc', 's32', 0.5);
SELECT * FROM lc_agree('lc_idx', 'lc', 's32', 0.3);
SELECT * FROM minhash_lsh_check('lc_idx', true);
DROP INDEX lc_idx;

-- 5. an expression index: the recheck computes the expression again; pairs
-- read the rows' signatures through it, exact pairs shingle its text
CREATE INDEX lc_expr ON lc USING lsh (minhash(body, bits => 16));
SET enable_seqscan = off;
SELECT array_agg(id ORDER BY id) FROM lc WHERE minhash(body, bits => 16) % (SELECT s16 FROM lc WHERE id = 50);
SELECT array_agg(id ORDER BY id) FROM lc WHERE minhash_similar(minhash(body, bits => 16), (SELECT s16 FROM lc WHERE id = 50), 0.3);
RESET enable_seqscan;
SELECT array_agg(id ORDER BY id) FROM lc WHERE jaccard(s16, (SELECT s16 FROM lc WHERE id = 50)) >= 0.3;
SELECT (SELECT count(*) FROM minhash_similar_pairs('lc_expr', 'id', 0.5)) AS expr_pairs,
       (SELECT pairs FROM lc_pairs('lc_expr', 's16', 0.5)) AS same_as_column,
       (SELECT count(*) FROM minhash_similar_pairs('lc_expr', 'id', 0.5, exact => true) p
        JOIN lc a ON a.id = p.key_a JOIN lc b ON b.id = p.key_b
        WHERE jaccard(minhash_shingles(a.body), minhash_shingles(b.body)) >= 0.5) AS exact_pairs,
       -- rows of different clusters share no word
       (SELECT count(*) FROM lc a JOIN lc b ON a.id < b.id AND a.id / 10 = b.id / 10
        AND jaccard(minhash_shingles(a.body), minhash_shingles(b.body)) >= 0.5) AS exact_truth;
SELECT * FROM minhash_lsh_check('lc_expr', true);
DROP INDEX lc_expr;

-- 6. the pending list, VACUUM and a parallel build, on the default index
CREATE INDEX lc_idx ON lc USING lsh (s16) WITH (fastupdate = on);
INSERT INTO lc (id, body, s16)
SELECT id + 5000, body || ' more', minhash(body || ' more', bits => 16) FROM lc WHERE id < 1000;
SELECT pending_rows > 0 AS pending FROM minhash_lsh_stats('lc_idx');
SELECT lc_refresh('{s16}');
SELECT * FROM lc_answers('s16', 0.5);
SELECT * FROM lc_pairs('lc_idx', 's16', 0.5);
SELECT * FROM lc_agree('lc_idx', 'lc', 's16', 0.5);
SELECT * FROM minhash_lsh_check('lc_idx', true);
SELECT minhash_lsh_clean_pending_list('lc_idx') > 0 AS merged;
SELECT * FROM lc_answers('s16', 0.5);
SELECT * FROM minhash_lsh_check('lc_idx', true);
DELETE FROM lc WHERE id % 4 = 1;
VACUUM lc;
SELECT lc_refresh('{s16}');
SELECT live_rows, dead_rows FROM minhash_lsh_stats('lc_idx');
SELECT * FROM lc_answers('s16', 0.5);
SELECT * FROM lc_pairs('lc_idx', 's16', 0.5);
SELECT * FROM minhash_lsh_check('lc_idx', true);
SELECT (SELECT pairs FROM lc_pairs('lc_idx', 's16', 0.5)) AS serial_pairs \gset
DROP INDEX lc_idx;
SET max_parallel_maintenance_workers = 2;
SET min_parallel_table_scan_size = 0;
ALTER TABLE lc SET (parallel_workers = 2);
CREATE INDEX lc_idx ON lc USING lsh (s16);
ALTER TABLE lc RESET (parallel_workers);
RESET max_parallel_maintenance_workers;
RESET min_parallel_table_scan_size;
SELECT * FROM minhash_lsh_check('lc_idx', true);
SET minhash.pairs_min_parallel_index_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT pairs = :serial_pairs AS parallel_pairs_agree, wrong, missed FROM lc_pairs('lc_idx', 's16', 0.5);
SELECT * FROM lc_agree('lc_idx', 'lc', 's16', 0.5);
RESET minhash.pairs_min_parallel_index_size;
RESET max_parallel_workers_per_gather;

-- 7. a partitioned table: each partition's index, pairs across partitions
CREATE TABLE lcp (id int, s16 minhash(128, 16)) PARTITION BY HASH (id);
CREATE TABLE lcp0 PARTITION OF lcp FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE lcp1 PARTITION OF lcp FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO lcp SELECT id, s16 FROM lc;
CREATE INDEX lcp_idx ON lcp USING lsh (s16);
SET enable_seqscan = off;
SELECT array_agg(id ORDER BY id) FROM lcp WHERE s16 % (SELECT s16 FROM lc WHERE id = 50);
SELECT array_agg(id ORDER BY id) FROM lc WHERE s16 % (SELECT s16 FROM lc WHERE id = 50);
RESET enable_seqscan;
SELECT (SELECT count(*) FROM minhash_similar_pairs('lcp_idx', 'id', 0.5)) =
       (SELECT pairs FROM lc_pairs('lc_idx', 's16', 0.5)) AS partitioned_pairs_agree;
SELECT * FROM lc_agree('lcp_idx', 'lcp', 's16', 0.5);
-- partitions whose indexes keep different widths do not merge
ALTER TABLE lcp DETACH PARTITION lcp1;
DROP INDEX lcp1_s16_idx;
CREATE INDEX lcp1_other ON lcp1 USING lsh (s16) WITH (verify_bits = 16);
ALTER TABLE lcp ATTACH PARTITION lcp1 FOR VALUES WITH (MODULUS 2, REMAINDER 1);
SELECT count(*) FROM minhash_similar_pairs('lcp_idx', 'id', 0.5);
\echo :LAST_ERROR_SQLSTATE
DROP TABLE lcp;

-- 8. errors: 22023 for a width that does not fit, never a misread
CREATE INDEX ON lc USING lsh (s16) WITH (verify_bits = 12);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX ON lc USING lsh (s8) WITH (verify_bits = 16);
\echo :LAST_ERROR_SQLSTATE
SELECT id FROM lc WHERE s16 % minhash('w1 w2 w3', bits => 8);
\echo :LAST_ERROR_SQLSTATE
SET enable_seqscan = off;
SELECT id FROM lc WHERE s16 % (SELECT s32 FROM lc WHERE id = 50);
\echo :LAST_ERROR_SQLSTATE
RESET enable_seqscan;
-- a batch of another width than the index's (lc_idx, on s16) signatures
SELECT count(*) FROM minhash_match('lc_idx', 'id', 'lc', 'id', 's32', 0.5);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM minhash_match('lc_idx', 'id', 'lc', 'id', 's8', 0.5);
\echo :LAST_ERROR_SQLSTATE
-- an untyped column takes whatever width its first signature has, then only that
CREATE TABLE lcu (id int, sig minhash);
CREATE INDEX lcu_idx ON lcu USING lsh (sig);
INSERT INTO lcu VALUES (1, minhash('a b c d e f', bits => 8));
INSERT INTO lcu VALUES (2, minhash('a b c d e f'));
\echo :LAST_ERROR_SQLSTATE
INSERT INTO lcu VALUES (3, minhash('a b c d e f', bits => 16));
\echo :LAST_ERROR_SQLSTATE
INSERT INTO lcu VALUES (4, minhash('a b c d e g', bits => 8));
SET enable_seqscan = off;
SELECT id FROM lcu WHERE sig % minhash('a b c d e f', bits => 8) ORDER BY id;
RESET enable_seqscan;
SELECT * FROM minhash_lsh_check('lcu_idx', true);
DROP TABLE lcu;
