-- minhash_similar_pairs and minhash_clusters walked by parallel workers
-- (minhash.pairs_min_parallel_index_size = 0 forces them on a small index),
-- with the leader walking too or not (parallel_leader_participation), give
-- the same answer as the serial walk (max_parallel_workers_per_gather = 0):
-- each pair once, the same similarity. Compared as counts and an
-- order-independent checksum of the set, since the order of the rows differs.
-- Whether workers started is not shown (it depends on free worker slots);
-- tests/t/170_parallel_pairs.pl checks that they do.

-- A walk longer than 10 s reports progress in NOTICEs: not in expected output
SET client_min_messages = warning;

-- 400 clusters of 1 to 6 near-duplicates (each row drops one of its
-- cluster's 60 elements and adds its own), and 1000 rows like no other
CREATE TABLE ppar (id int PRIMARY KEY, body text, sig minhash);
INSERT INTO ppar (id, body, sig)
SELECT c * 10 + m, 'cluster ' || md5(c::text),
       minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(1, 60) j WHERE j <> m + 1) || ARRAY[-(c * 10 + m)])
FROM generate_series(1, 400) c, generate_series(0, 5) m
WHERE m <= c % 6;
INSERT INTO ppar (id, body, sig)
SELECT 100000 + i, 'single ' || md5(i::text), minhash(ARRAY(SELECT 10000000 + i * 1000 + j FROM generate_series(1, 50) j))
FROM generate_series(1, 1000) i;
CREATE INDEX ppar_idx ON ppar USING lsh (sig);
CREATE INDEX ppar_expr_idx ON ppar USING lsh (minhash(body, 'char', 3));

-- the pairs and clusters, serial and parallel, as (count, checksum)
CREATE FUNCTION ppar_pairs(idx regclass, threshold float8 DEFAULT NULL) RETURNS text
LANGUAGE sql AS $$
  SELECT count(*) || ' pairs, ' || count(DISTINCT (key_a, key_b)) || ' distinct, checksum '
         || coalesce(sum(hashtext(key_a || ',' || key_b || ',' || similarity)::bigint), 0)
  FROM minhash_similar_pairs(idx, 'id', threshold) WHERE key_a < key_b
$$;
CREATE FUNCTION ppar_clusters(idx regclass, mode text) RETURNS text
LANGUAGE sql AS $$
  SELECT count(*) || ' rows in ' || count(DISTINCT cluster_id) || ' clusters, checksum '
         || coalesce(sum(hashtext(key || ',' || cluster_id)::bigint), 0)
  FROM minhash_clusters(idx, 'id', mode => mode)
$$;

CREATE TABLE ppar_results (what text, workers int, leader bool, result text);
CREATE PROCEDURE ppar_run(what text, query text) LANGUAGE plpgsql AS $$
DECLARE
    c text[];
    r text;
BEGIN
    FOREACH c SLICE 1 IN ARRAY ARRAY[['0', 'on'], ['2', 'on'], ['2', 'off']] LOOP
        PERFORM set_config('max_parallel_workers_per_gather', c[1], true);
        PERFORM set_config('parallel_leader_participation', c[2], true);
        EXECUTE query INTO r;
        INSERT INTO ppar_results VALUES (what, c[1]::int, c[2]::bool, r);
    END LOOP;
END $$;

SET minhash.pairs_min_parallel_index_size = 0;
BEGIN;
CALL ppar_run('pairs', $q$SELECT ppar_pairs('ppar_idx')$q$);
-- below the design threshold the groups are key prefixes (lsh_forest)
CALL ppar_run('pairs at 0.3', $q$SELECT ppar_pairs('ppar_idx', 0.3)$q$);
CALL ppar_run('clusters', $q$SELECT ppar_clusters('ppar_idx', 'connected')$q$);
CALL ppar_run('clusters representative', $q$SELECT ppar_clusters('ppar_idx', 'representative')$q$);
CALL ppar_run('exact', $q$SELECT count(*) || ' pairs, checksum ' || sum(hashtext(key_a || ',' || key_b)::bigint)
                          FROM minhash_similar_pairs('ppar_idx', 'id', 0.5, exact => true, text_column => 'body', unit => 'char', k => 3)$q$);
-- exact mode on an expression index: the text expression runs (as the
-- table owner) in the leader, which resolves the rows
CALL ppar_run('exact, index expression', $q$SELECT count(*) || ' pairs, checksum ' || sum(hashtext(key_a || ',' || key_b)::bigint)
                                         FROM minhash_similar_pairs('ppar_expr_idx', 'id', 0.5, exact => true)$q$);
-- keys of another type
CALL ppar_run('text keys', $q$SELECT count(*) || ' pairs, checksum ' || sum(hashtext(key_a || ',' || key_b)::bigint)
                              FROM minhash_similar_pairs('ppar_idx', 'body', key_type => NULL::text)$q$);
COMMIT;

-- rows deleted, updated and inserted after the build: the leader's snapshot
-- decides (the workers send row ids, the leader fetches the rows)
DELETE FROM ppar WHERE id % 10 = 1;
UPDATE ppar SET sig = minhash(ARRAY(SELECT (id / 10) * 1000 + j FROM generate_series(1, 60) j)) WHERE id % 10 = 2;
INSERT INTO ppar (id, body, sig)
SELECT 200000 + c, 'late ' || c, minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(1, 60) j))
FROM generate_series(1, 400) c;
BEGIN;
CALL ppar_run('after changes', $q$SELECT ppar_pairs('ppar_idx')$q$);
COMMIT;

-- pending rows (fastupdate) are walked with the tree's entries
ALTER INDEX ppar_idx SET (fastupdate = on);
INSERT INTO ppar (id, body, sig)
SELECT 300000 + c, 'pending ' || c, minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(2, 61) j))
FROM generate_series(1, 400) c;
BEGIN;
CALL ppar_run('pending', $q$SELECT ppar_pairs('ppar_idx')$q$);
COMMIT;

-- groups too large for memory, in the workers as in the serial walk: at
-- work_mem = 64kB a group's row ids spill to a tuplesort beyond 512 and its
-- signatures are compared in chunks (pairs_memory); 700 identical rows make
-- one such group per band
CREATE TABLE ppar_same (id int PRIMARY KEY, sig minhash);
INSERT INTO ppar_same SELECT g, minhash('one text in every row'::text) FROM generate_series(1, 700) g;
CREATE INDEX ppar_same_idx ON ppar_same USING lsh (sig);
SET work_mem = '64kB';
BEGIN;
CALL ppar_run('spilled groups', $q$SELECT ppar_pairs('ppar_same_idx')$q$);
COMMIT;
RESET work_mem;

-- a partitioned index: every partition's leaves are merged in each key range
CREATE TABLE ppar_p (id int, body text, sig minhash) PARTITION BY HASH (id);
CREATE TABLE ppar_p0 PARTITION OF ppar_p FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE ppar_p1 PARTITION OF ppar_p FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE ppar_p2 PARTITION OF ppar_p FOR VALUES WITH (MODULUS 3, REMAINDER 2);
INSERT INTO ppar_p SELECT * FROM ppar;
CREATE INDEX ppar_p_idx ON ppar_p USING lsh (sig);
BEGIN;
CALL ppar_run('partitioned', $q$SELECT ppar_pairs('ppar_p_idx')$q$);
CALL ppar_run('partitioned clusters', $q$SELECT ppar_clusters('ppar_p_idx', 'connected')$q$);
COMMIT;
-- the same pairs as the plain index holding the same rows
SELECT (SELECT result FROM ppar_results WHERE what = 'partitioned' AND workers = 2 AND leader) =
       (SELECT result FROM ppar_results WHERE what = 'pending' AND workers = 0) AS partitioned_as_plain;

-- serial and parallel agree on every query
SELECT what, count(*) AS runs, count(DISTINCT result) AS answers, min(result) AS result
FROM ppar_results GROUP BY what ORDER BY what;

-- the GUC is in blocks, as min_parallel_index_scan_size
SET minhash.pairs_min_parallel_index_size = '8MB';
SHOW minhash.pairs_min_parallel_index_size;
RESET minhash.pairs_min_parallel_index_size;

RESET client_min_messages;
DROP TABLE ppar, ppar_p, ppar_same, ppar_results;
DROP FUNCTION ppar_pairs, ppar_clusters;
DROP PROCEDURE ppar_run;
