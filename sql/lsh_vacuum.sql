-- VACUUM of an lsh index: dead rows leave the index, their slots are reused,
-- and the index stays bounded under delete/insert churn.

CREATE TABLE lsh_churn (id int PRIMARY KEY, sig minhash) WITH (autovacuum_enabled = off);
INSERT INTO lsh_churn SELECT i, minhash(ARRAY[i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7])
FROM generate_series(1, 3000) i;
CREATE INDEX lsh_churn_sig ON lsh_churn USING lsh (sig);
SELECT live_rows, dead_rows, free_slots, entries = live_rows * bands AS one_entry_per_band
FROM minhash_lsh_stats('lsh_churn_sig');

-- deleted rows stay in the index until VACUUM; queries do not return them
DELETE FROM lsh_churn WHERE id % 3 <> 0;
SET enable_seqscan = off;
SELECT id FROM lsh_churn WHERE sig % minhash(ARRAY[300, 301, 302, 303, 304, 305, 306, 307]) ORDER BY id;
RESET enable_seqscan;
VACUUM lsh_churn;
SELECT live_rows, dead_rows, free_slots >= 2000 AS slots_freed, entries = live_rows * bands AS one_entry_per_band
FROM minhash_lsh_stats('lsh_churn_sig');
SELECT * FROM minhash_lsh_check('lsh_churn_sig');
SELECT reltuples FROM pg_class WHERE relname = 'lsh_churn_sig';
SET enable_seqscan = off;
SELECT id FROM lsh_churn WHERE sig % minhash(ARRAY[300, 301, 302, 303, 304, 305, 306, 307]) ORDER BY id;
RESET enable_seqscan;

-- new rows take the freed slots: the data pages do not grow
CREATE TEMP TABLE sizes AS SELECT 0 AS round, data_pages, pages FROM minhash_lsh_stats('lsh_churn_sig');
INSERT INTO lsh_churn SELECT i, minhash(ARRAY[i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7])
FROM generate_series(1, 3000) i WHERE i % 3 <> 0;
SELECT s.data_pages = z.data_pages AS data_pages_reused, s.free_slots < 20 AS slots_taken
FROM minhash_lsh_stats('lsh_churn_sig') s, sizes z;
SELECT * FROM minhash_lsh_check('lsh_churn_sig');

-- churn: five rounds of deleting half the rows and inserting as many new ones
SELECT stmt FROM generate_series(1, 5) r, LATERAL (VALUES
  (1, format('DELETE FROM lsh_churn WHERE (id + %s) %% 2 = 0', r)),
  (2, 'VACUUM lsh_churn'),
  (3, format('INSERT INTO lsh_churn SELECT %1$s * 100000 + i, minhash(ARRAY[%1$s * 100000 + i, i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6]) FROM generate_series(1, 3000) i WHERE (i + %1$s) %% 2 = 0', r)),
  (4, format('INSERT INTO sizes SELECT %s, data_pages, pages FROM minhash_lsh_stats(''lsh_churn_sig'')', r))
) v(n, stmt) ORDER BY r, n
\gexec
SELECT count(*) AS rows FROM lsh_churn;
-- bounded: the data pages stay within one page of the first round's, the
-- whole index within 10% (leaves may split while keys redistribute)
SELECT max(data_pages) - min(data_pages) <= 1 AS data_pages_bounded,
       max(pages) <= 1.1 * min(pages) AS index_bounded
FROM sizes WHERE round >= 1;
SELECT * FROM minhash_lsh_check('lsh_churn_sig');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS found_own_row FROM lsh_churn q WHERE q.id IN (SELECT d.id FROM lsh_churn d WHERE d.sig % q.sig);
RESET enable_bitmapscan;
RESET enable_seqscan;

-- everything deleted: every slot is free, and the index answers nothing
DELETE FROM lsh_churn;
VACUUM lsh_churn;
SELECT live_rows, dead_rows, entries FROM minhash_lsh_stats('lsh_churn_sig');
SELECT * FROM minhash_lsh_check('lsh_churn_sig');
SET enable_seqscan = off;
SELECT id FROM lsh_churn WHERE sig % minhash(ARRAY[300, 301, 302, 303, 304, 305, 306, 307]);
RESET enable_seqscan;

-- VACUUM FULL rebuilds the index
INSERT INTO lsh_churn SELECT i, minhash(ARRAY[i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7])
FROM generate_series(1, 300) i;
VACUUM FULL lsh_churn;
SELECT live_rows, free_slots < 15 AS packed FROM minhash_lsh_stats('lsh_churn_sig');
SELECT * FROM minhash_lsh_check('lsh_churn_sig');

DROP TABLE lsh_churn;
