-- A session whose scans read the same pending list again and again keeps a
-- copy of its band keys (built once its scans have filtered 16 lists' worth
-- of rows): it finds the same rows as filtering the list, rows
-- appended since are found too, and a merge drops the copy.

CREATE TABLE lsh_copy (id int PRIMARY KEY, sig minhash) WITH (autovacuum_enabled = off);
-- 300 rows in 100 groups of three near-duplicates, indexed; then 400 more of the same groups, pending
INSERT INTO lsh_copy SELECT i, minhash(ARRAY[(i / 3 % 100) * 100, (i / 3 % 100) * 100 + 1,
    (i / 3 % 100) * 100 + 2, (i / 3 % 100) * 100 + 3, (i / 3 % 100) * 100 + 4,
    (i / 3 % 100) * 100 + 5, (i / 3 % 100) * 100 + 6, 1000000 + i])
FROM generate_series(0, 299) i;
CREATE INDEX lsh_copy_sig ON lsh_copy USING lsh (sig);
INSERT INTO lsh_copy SELECT i, minhash(ARRAY[(i / 3 % 100) * 100, (i / 3 % 100) * 100 + 1,
    (i / 3 % 100) * 100 + 2, (i / 3 % 100) * 100 + 3, (i / 3 % 100) * 100 + 4,
    (i / 3 % 100) * 100 + 5, (i / 3 % 100) * 100 + 6, 1000000 + i])
FROM generate_series(300, 699) i;
SELECT pending_rows FROM minhash_lsh_stats('lsh_copy_sig');

-- the lsh line of EXPLAIN ANALYZE of a query
CREATE FUNCTION lsh_copy_line(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l LIKE 'lsh scan%' THEN
            RETURN NEXT l;
        END IF;
    END LOOP;
END $$;

-- every row's matches through the index (a scan a row) against those of a
-- sequential scan, computed first into lsh_copy_truth
CREATE TABLE lsh_copy_truth (q int, d int);
CREATE FUNCTION lsh_copy_differences() RETURNS TABLE (missed bigint, extra bigint) LANGUAGE sql AS $$
    WITH indexed AS (
        SELECT q.id AS q, x.id AS d FROM lsh_copy q
        CROSS JOIN LATERAL (SELECT d.id FROM lsh_copy d WHERE d.sig OPERATOR(public.%) q.sig) x)
    SELECT (SELECT count(*) FROM (SELECT * FROM lsh_copy_truth EXCEPT SELECT * FROM indexed) m),
           (SELECT count(*) FROM (SELECT * FROM indexed EXCEPT SELECT * FROM lsh_copy_truth) e)
$$;
CREATE FUNCTION lsh_copy_new_truth() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('enable_seqscan', 'on', true);
    DELETE FROM lsh_copy_truth;
    INSERT INTO lsh_copy_truth SELECT q.id, d.id FROM lsh_copy q, lsh_copy d WHERE d.sig OPERATOR(public.%) q.sig;
    RETURN (SELECT count(*) FROM lsh_copy_truth);
END $$;
-- one round: the lsh line of the 700 probes, then the pairs of a sequential
-- scan (in a transaction of its own), then what the index missed or added
CREATE PROCEDURE lsh_copy_round() LANGUAGE plpgsql AS $$
DECLARE
    l text;
    pairs bigint;
    missed bigint;
    extra bigint;
BEGIN
    FOR l IN SELECT lsh_copy_line('SELECT count(*) FROM lsh_copy q CROSS JOIN LATERAL
        (SELECT id FROM lsh_copy d WHERE d.sig % q.sig) x') LOOP
        RAISE NOTICE '%', l;
    END LOOP;
    COMMIT;
    pairs := lsh_copy_new_truth();
    COMMIT;
    SELECT * INTO missed, extra FROM lsh_copy_differences();
    RAISE NOTICE 'pairs %, missed %, extra %', pairs, missed, extra;
END $$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;

-- 700 scans in this session: the first 16 filter the list, the 17th builds
-- the copy; with it, the same rows as the sequential scan
CALL lsh_copy_round();

-- at a lower threshold the probe matches shorter prefixes of each band: wide
-- key ranges, many buckets of the copy each
SET minhash.similarity_threshold = 0.3;
CALL lsh_copy_round();
RESET minhash.similarity_threshold;

-- rows appended since the copy was made are found too (filtered from the list)
INSERT INTO lsh_copy SELECT i, minhash(ARRAY[(i / 3 % 100) * 100, (i / 3 % 100) * 100 + 1,
    (i / 3 % 100) * 100 + 2, (i / 3 % 100) * 100 + 3, (i / 3 % 100) * 100 + 4,
    (i / 3 % 100) * 100 + 5, (i / 3 % 100) * 100 + 6, 1000000 + i])
FROM generate_series(700, 759) i;
SELECT pending_rows FROM minhash_lsh_stats('lsh_copy_sig');
SELECT lsh_copy_line('SELECT count(*) FROM lsh_copy q CROSS JOIN LATERAL
    (SELECT id FROM lsh_copy d WHERE d.sig % q.sig) x WHERE q.id >= 700');
SELECT count(*) AS new_rows_found FROM lsh_copy q
CROSS JOIN LATERAL (SELECT id FROM lsh_copy d WHERE d.sig % q.sig) x WHERE q.id >= 700 AND x.id >= 700;
BEGIN;
SELECT lsh_copy_new_truth() AS pairs;
COMMIT;
SELECT * FROM lsh_copy_differences();

-- a merge drops the copy: the list is empty, then filtered again as it grows
SELECT minhash_lsh_clean_pending_list('lsh_copy_sig');
SELECT lsh_copy_line('SELECT count(*) FROM lsh_copy q CROSS JOIN LATERAL
    (SELECT id FROM lsh_copy d WHERE d.sig % q.sig) x');
DELETE FROM lsh_copy WHERE id >= 700;
INSERT INTO lsh_copy SELECT i, minhash(ARRAY[(i / 3 % 100) * 100, (i / 3 % 100) * 100 + 1,
    (i / 3 % 100) * 100 + 2, (i / 3 % 100) * 100 + 3, (i / 3 % 100) * 100 + 4,
    (i / 3 % 100) * 100 + 5, (i / 3 % 100) * 100 + 6, 2000000 + i])
FROM generate_series(700, 999) i;
SELECT pending_rows FROM minhash_lsh_stats('lsh_copy_sig');
BEGIN;
SELECT lsh_copy_new_truth() AS pairs;
COMMIT;
SELECT * FROM lsh_copy_differences();

RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
DROP TABLE lsh_copy;
DROP FUNCTION lsh_copy_line(text);
DROP FUNCTION lsh_copy_differences();
DROP FUNCTION lsh_copy_new_truth();
DROP PROCEDURE lsh_copy_round();
DROP TABLE lsh_copy_truth;
