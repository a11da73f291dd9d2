-- An lsh scan counts as an index scan in the statistics
-- (pg_stat_user_indexes.idx_scan), once per search, through either the
-- amgettuple or the amgetbitmap path. Read here through the current
-- transaction's counters, which need no statistics flush.
CREATE TABLE lsh_st (id int, sig minhash);
INSERT INTO lsh_st SELECT i, minhash(ARRAY[i, i + 1, i + 2, i + 3]) FROM generate_series(1, 200) i;
CREATE INDEX lsh_st_sig ON lsh_st USING lsh (sig);
CREATE FUNCTION st_q() RETURNS minhash LANGUAGE sql STABLE
  AS $$ SELECT minhash(ARRAY[1, 2, 3, 4]) $$;
BEGIN;
SELECT pg_stat_get_xact_numscans('lsh_st_sig'::regclass) AS before;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT id FROM lsh_st WHERE sig % st_q();
SELECT id FROM lsh_st ORDER BY sig <%> st_q() LIMIT 1;
SELECT pg_stat_get_xact_numscans('lsh_st_sig'::regclass) AS after_two_index_scans;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = on;
SELECT id FROM lsh_st WHERE sig % st_q();
SELECT pg_stat_get_xact_numscans('lsh_st_sig'::regclass) AS after_a_bitmap_scan;
COMMIT;
DROP TABLE lsh_st;
DROP FUNCTION st_q();
