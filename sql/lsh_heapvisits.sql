-- False candidates never cost a heap visit: the index stores each row's
-- signature and verifies a candidate (a row sharing a band with the query)
-- against it, so the heap is read only for rows that satisfy %.
--
-- Construction (signatures given directly, k = 128, index with 32 bands of 4):
-- 3 rows equal to the query q = [1..128], inserted first (heap block 0), then
-- 2000 rows that agree with q on the first band only (values 1..4) and on
-- nothing else: each is a candidate, with an estimated similarity of
-- 4/128 = 0.03, far below the threshold 0.5.
CREATE TABLE lsh_hv (id int, sig minhash);
INSERT INTO lsh_hv SELECT i, minhash_from_array(ARRAY(SELECT generate_series(1, 128)::int8))
FROM generate_series(1, 3) i;
INSERT INTO lsh_hv SELECT i, minhash_from_array(
    ARRAY(SELECT generate_series(1, 4)::int8)
    || ARRAY(SELECT 1000000 + i * 1000 + j FROM generate_series(5, 128) j)::int8[])
FROM generate_series(4, 2003) i;
CREATE INDEX lsh_hv_sig ON lsh_hv USING lsh (sig) WITH (bands = 32, rows = 4);
ANALYZE lsh_hv;
-- the query signature (STABLE: not folded into a long literal in the plans)
CREATE FUNCTION hv_q() RETURNS minhash LANGUAGE sql STABLE
  AS $$ SELECT minhash_from_array(ARRAY(SELECT generate_series(1, 128)::int8)) $$;

-- the construction: 2003 candidates share band 1 with q, 3 of them satisfy %
SELECT count(*) AS candidates,
       count(*) FILTER (WHERE sig % hv_q()) AS matching,
       max(1 - (sig <%> hv_q())) FILTER (WHERE NOT sig % hv_q()) AS best_false_estimate
FROM lsh_hv WHERE (minhash_bands(sig, 32, 4))[1] = (minhash_bands(hv_q(), 32, 4))[1];
SELECT bands, rows, live_rows, data_pages FROM minhash_lsh_stats('lsh_hv_sig');
-- the heap blocks the matching rows are on, and the heap's size
SELECT count(DISTINCT (ctid::text::point)[0]) AS match_blocks FROM lsh_hv WHERE id <= 3 \gset
SELECT pg_relation_size('lsh_hv') / current_setting('block_size')::int >= 100 AS heap_has_100_blocks;

-- Index Scan: heap and index blocks read within one transaction (the
-- per-transaction counters pg_stat_get_xact_blocks_fetched count every
-- buffer read request, hits included)
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM lsh_hv WHERE sig % hv_q();
SELECT pg_stat_get_xact_blocks_fetched('lsh_hv'::regclass) AS heap0,
       pg_stat_get_xact_blocks_fetched('lsh_hv_sig'::regclass) AS idx0 \gset
SELECT id FROM lsh_hv WHERE sig % hv_q() ORDER BY id;
-- the heap: only the blocks of the 3 rows returned; the index: every data
-- page holding a candidate's signature (all of them), each candidate verified
SELECT pg_stat_get_xact_blocks_fetched('lsh_hv'::regclass) - :heap0 AS heap_blocks_read,
       :match_blocks AS blocks_of_returned_rows,
       pg_stat_get_xact_blocks_fetched('lsh_hv_sig'::regclass) - :idx0
         >= (SELECT data_pages FROM minhash_lsh_stats('lsh_hv_sig')) AS index_read_every_data_page;
COMMIT;

-- (a bitmap scan: the bitmap holds only the 3 verified rows, one heap block,
-- as its EXPLAIN ANALYZE in lsh_explain shows)

-- the same rows as a sequential scan
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT id FROM lsh_hv WHERE sig % hv_q() ORDER BY id;
RESET enable_bitmapscan;
RESET enable_indexscan;

DROP TABLE lsh_hv;
DROP FUNCTION hv_q();
