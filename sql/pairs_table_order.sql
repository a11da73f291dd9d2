-- Tables larger than the cache: when table and index exceed
-- effective_cache_size, minhash_similar_pairs and minhash_clusters resolve
-- the rows of the pairs they find in table order (two sorts and one pass
-- through the table) instead of fetching each as it comes. The answer must
-- not change: compared here with effective_cache_size = 1 (8 kB, so every
-- table is "larger than the cache") against the default, serial and with
-- parallel workers, with rows deleted, updated and inserted since the build,
-- long (TOASTed) text keys and a partitioned table.

SET client_min_messages = warning;

-- 300 clusters of 1 to 6 near-duplicates and 500 rows like no other
CREATE TABLE ptord (id int PRIMARY KEY, body text, sig minhash);
INSERT INTO ptord (id, body, sig)
SELECT c * 10 + m, 'cluster ' || md5(c::text),
       minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(1, 60) j WHERE j <> m + 1) || ARRAY[-(c * 10 + m)])
FROM generate_series(1, 300) c, generate_series(0, 5) m
WHERE m <= c % 6;
INSERT INTO ptord (id, body, sig)
SELECT 100000 + i, 'single ' || md5(i::text), minhash(ARRAY(SELECT 10000000 + i * 1000 + j FROM generate_series(1, 50) j))
FROM generate_series(1, 500) i;
-- some keys long enough to be stored out of line (TOAST)
UPDATE ptord SET body = body || (SELECT string_agg(md5(id::text || g::text), '') FROM generate_series(1, 100) g)
WHERE id % 7 = 0;
CREATE INDEX ptord_idx ON ptord USING lsh (sig);

CREATE FUNCTION ptord_pairs(idx regclass, threshold float8 DEFAULT NULL) RETURNS text
LANGUAGE sql AS $$
  SELECT count(*) || ' pairs, ' || count(DISTINCT (key_a, key_b)) || ' distinct, checksum '
         || coalesce(sum(hashtext(key_a || ',' || key_b || ',' || similarity)::bigint), 0)
  FROM minhash_similar_pairs(idx, 'id', threshold) WHERE key_a < key_b
$$;
CREATE FUNCTION ptord_text_pairs(idx regclass) RETURNS text
LANGUAGE sql AS $$
  SELECT count(*) || ' pairs, ' || sum(length(key_a) + length(key_b)) || ' characters, checksum '
         || coalesce(sum(hashtext(key_a || ',' || key_b)::bigint), 0)
  FROM minhash_similar_pairs(idx, 'body', key_type => NULL::text) WHERE key_a < key_b
$$;
CREATE FUNCTION ptord_clusters(idx regclass, mode text) RETURNS text
LANGUAGE sql AS $$
  SELECT count(*) || ' rows in ' || count(DISTINCT cluster_id) || ' clusters, checksum '
         || coalesce(sum(hashtext(key || ',' || cluster_id)::bigint), 0)
  FROM minhash_clusters(idx, 'id', mode => mode)
$$;

-- each query with the default effective_cache_size (rows fetched as pairs
-- come) and with 1 (rows resolved in table order), serial and parallel
CREATE TABLE ptord_results (what text, cache text, workers int, result text);
CREATE PROCEDURE ptord_run(what text, query text) LANGUAGE plpgsql AS $$
DECLARE
    c text[];
    r text;
BEGIN
    FOREACH c SLICE 1 IN ARRAY ARRAY[['4GB', '0'], ['1', '0'], ['1', '2']] LOOP
        PERFORM set_config('effective_cache_size', c[1], true);
        PERFORM set_config('max_parallel_workers_per_gather', c[2], true);
        EXECUTE query INTO r;
        INSERT INTO ptord_results VALUES (what, c[1], c[2]::int, r);
    END LOOP;
END $$;

SET minhash.pairs_min_parallel_index_size = 0;
BEGIN;
CALL ptord_run('pairs', $q$SELECT ptord_pairs('ptord_idx')$q$);
CALL ptord_run('pairs at 0.3', $q$SELECT ptord_pairs('ptord_idx', 0.3)$q$);
CALL ptord_run('text keys', $q$SELECT ptord_text_pairs('ptord_idx')$q$);
CALL ptord_run('clusters', $q$SELECT ptord_clusters('ptord_idx', 'connected')$q$);
CALL ptord_run('clusters representative', $q$SELECT ptord_clusters('ptord_idx', 'representative')$q$);
COMMIT;

-- rows deleted, updated and inserted after the build: the snapshot decides
DELETE FROM ptord WHERE id % 10 = 1;
UPDATE ptord SET sig = minhash(ARRAY(SELECT (id / 10) * 1000 + j FROM generate_series(1, 60) j)) WHERE id % 10 = 2;
INSERT INTO ptord (id, body, sig)
SELECT 200000 + c, 'late ' || c, minhash(ARRAY(SELECT c * 1000 + j FROM generate_series(1, 60) j))
FROM generate_series(1, 300) c;
BEGIN;
CALL ptord_run('pairs after changes', $q$SELECT ptord_pairs('ptord_idx')$q$);
CALL ptord_run('clusters after changes', $q$SELECT ptord_clusters('ptord_idx', 'connected')$q$);
COMMIT;

-- a partitioned table: rows of every partition, pairs across partitions
CREATE TABLE ptord_parts (id int, sig minhash) PARTITION BY RANGE (id);
CREATE TABLE ptord_p1 PARTITION OF ptord_parts FOR VALUES FROM (0) TO (1500);
CREATE TABLE ptord_p2 PARTITION OF ptord_parts FOR VALUES FROM (1500) TO (MAXVALUE);
INSERT INTO ptord_parts SELECT id, sig FROM ptord;
CREATE INDEX ptord_parts_idx ON ptord_parts USING lsh (sig);
BEGIN;
CALL ptord_run('partitioned', $q$SELECT ptord_pairs('ptord_parts_idx')$q$);
COMMIT;

-- one answer per query: every configuration agrees
SELECT what, count(DISTINCT result) AS answers, min(result) AS result
FROM ptord_results GROUP BY what ORDER BY what;

-- the deferred path is taken (its DEBUG1 lines), and only below the table's size
SET client_min_messages = debug1;
SET max_parallel_workers_per_gather = 0;
SET effective_cache_size = 1;
SELECT count(*) FROM minhash_similar_pairs('ptord_idx', 'id');
RESET effective_cache_size;
SELECT count(*) FROM minhash_similar_pairs('ptord_idx', 'id');
RESET client_min_messages;
