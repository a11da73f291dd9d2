-- Aggregates minhash_agg and minhash_merge_agg, serial and parallel.
-- Every error is followed by its SQLSTATE.

CREATE TABLE minhash_agg_items AS
SELECT g AS id, g % 7 AS grp, g % 2000 AS item, 'w' || (g % 313) AS word,
       CASE WHEN g % 10 = 0 THEN NULL ELSE g % 500 END AS sparse
FROM generate_series(1, 60000) g;
ANALYZE minhash_agg_items;

-- minhash_agg(x) = minhash(array_agg(x)): the signature of the set of values
SELECT minhash_agg(item) = minhash(array_agg(item)) AS ints,
       minhash_agg(word) = minhash(array_agg(word)) AS texts,
       minhash_agg(sparse) = minhash(array_agg(sparse)) AS nulls_skipped,
       minhash_agg(word, 64, 7) = minhash(array_agg(word), 64, 7) AS with_params,
       minhash_num_perm(minhash_agg(word, 64, 7)) AS k, minhash_seed(minhash_agg(word, 64, 7)) AS seed
FROM minhash_agg_items;
-- order and repeats do not matter; ints and their text agree
SELECT (SELECT minhash_agg(x ORDER BY x) FROM generate_series(1, 100) x)
     = (SELECT minhash_agg(x ORDER BY -x) FROM (SELECT x FROM generate_series(1, 100) x, generate_series(1, 3)) r)
       AS order_and_repeats,
       (SELECT minhash_agg(x) FROM generate_series(1, 100) x)
     = (SELECT minhash_agg(x::text) FROM generate_series(1, 100) x) AS int_equals_text;
-- aggregating a document's shingles gives the document's signature
SELECT minhash_agg(sh) = minhash('The quick brown fox jumps over the lazy dog near the bank'::text, k => 3) AS doc_signature
FROM unnest(minhash_shingles('The quick brown fox jumps over the lazy dog near the bank', 3)) sh;
-- grouped, against the per-group array form
SELECT grp, minhash_agg(word, 32, 1) = minhash(array_agg(word), 32, 1) AS same,
       abs(minhash_cardinality(minhash_agg(item, 1024, 1)) / count(DISTINCT item) - 1) < 0.15 AS cardinality_close
FROM minhash_agg_items GROUP BY grp ORDER BY grp;

-- zero rows: NULL (like array_agg); only NULL values: the empty set
SELECT minhash_agg(x) IS NULL AS no_rows FROM generate_series(1, 0) x;
SELECT minhash_agg(NULL::int, 3, 1) AS only_nulls FROM generate_series(1, 5);

-- minhash_merge_agg: the union of the signatures
SELECT minhash_merge_agg(minhash(ARRAY[item], 64, 3)) = minhash_agg(item, 64, 3) AS union_of_singletons
FROM minhash_agg_items;
SELECT minhash_merge_agg(s) FROM (VALUES ('1:[5,2,8]'::minhash), (NULL), ('1:[3,4,9]'), ('1:[6,1,7]')) v(s);
SELECT minhash_merge_agg(s) IS NULL AS no_rows FROM (SELECT '1:[1]'::minhash WHERE false) v(s);

-- as window aggregates: running signatures of growing prefixes
SELECT x, minhash_agg(x, 8, 1) OVER w = minhash(ARRAY(SELECT generate_series(1, x)), 8, 1) AS running_agg,
       minhash_merge_agg(minhash(ARRAY[x], 8, 1)) OVER w = minhash(ARRAY(SELECT generate_series(1, x)), 8, 1) AS running_merge
FROM generate_series(1, 5) x WINDOW w AS (ORDER BY x) ORDER BY x;
-- a moving frame restarts the aggregate for every row
SELECT x, minhash_agg(x, 8, 1) OVER w = minhash(ARRAY[greatest(x - 1, 1), x], 8, 1) AS moving_agg,
       minhash_merge_agg(minhash(ARRAY[x], 8, 1)) OVER w = minhash(ARRAY[greatest(x - 1, 1), x], 8, 1) AS moving_merge
FROM generate_series(1, 4) x WINDOW w AS (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) ORDER BY x;

-- Parallel aggregation: workers build partial signatures, the leader
-- combines them (serialized as bytea); the result equals the serial one.
SELECT minhash_agg(item)::text AS serial_items, minhash_agg(word, 256, 42)::text AS serial_words,
       minhash_merge_agg(minhash(ARRAY[word], 16, 1))::text AS serial_merge
FROM minhash_agg_items \gset
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
-- force_parallel_mode is called debug_parallel_query from PostgreSQL 16 on
SELECT current_setting('server_version_num')::int >= 160000 AS pg16 \gset
\if :pg16
SET debug_parallel_query = on;
\else
SET force_parallel_mode = on;
\endif
EXPLAIN (COSTS OFF)
SELECT minhash_agg(item), minhash_agg(word, 256, 42), minhash_merge_agg(minhash(ARRAY[word], 16, 1))
FROM minhash_agg_items;
SELECT minhash_agg(item)::text = :'serial_items' AS items_equal,
       minhash_agg(word, 256, 42)::text = :'serial_words' AS words_equal,
       minhash_merge_agg(minhash(ARRAY[word], 16, 1))::text = :'serial_merge' AS merge_equal
FROM minhash_agg_items;
-- ... and workers did run: EXPLAIN ANALYZE of the same query under the same
-- settings shows the Gather's workers launched and the partial states it
-- passed up (one per worker) to the Finalize Aggregate, which combined them
CREATE FUNCTION parallel_run(query text) RETURNS TABLE (workers_launched int, partial_states int)
LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query INTO plan;
    RETURN QUERY
    WITH RECURSIVE n(node) AS (SELECT plan -> 0 -> 'Plan'
                               UNION ALL SELECT json_array_elements(node -> 'Plans') FROM n)
    SELECT (node ->> 'Workers Launched')::int, (node ->> 'Actual Rows')::numeric::int
    FROM n WHERE node ->> 'Node Type' = 'Gather';
END $$;
SELECT workers_launched >= 1 AS workers_launched, partial_states = workers_launched AS one_state_per_worker
FROM parallel_run($q$SELECT minhash_agg(item), minhash_agg(word, 256, 42), minhash_merge_agg(minhash(ARRAY[word], 16, 1))
                    FROM minhash_agg_items$q$);
RESET parallel_leader_participation;
DROP FUNCTION parallel_run;
SELECT minhash_agg(item)::text = :'serial_items' AS items_equal_with_leader
FROM minhash_agg_items;
\if :pg16
RESET debug_parallel_query;
\else
RESET force_parallel_mode;
\endif
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
SELECT proname, proparallel FROM pg_proc
WHERE proname IN ('minhash_agg', 'minhash_merge_agg', 'minhash_agg_trans', 'minhash_agg_combine',
                  'minhash_agg_serial', 'minhash_agg_deserial', 'minhash_agg_final', 'minhash_merge_trans')
ORDER BY proname, pronargs;
SELECT a.aggfnoid::regprocedure, a.aggcombinefn, a.aggserialfn, a.aggdeserialfn
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
WHERE p.proname IN ('minhash_agg', 'minhash_merge_agg') ORDER BY 1::text;

-- minhash_merge_agg over stored signatures, whose first value per group
-- arrives in stored form: short header (k = 8: 48 bytes) or out of line
-- (k = 1024: 4 kB, incompressible). Results equal the signature of the union,
-- grouped by hashing and in a window.
CREATE TABLE minhash_merge_forms AS
SELECT g, r, minhash(ARRAY[g * 10 + r], 8) AS short_sig,
       CASE WHEN g <= 50 THEN minhash(ARRAY[g * 10 + r], 1024) END AS toasted_sig
FROM generate_series(1, 20000) g, generate_series(1, 3) r;
ANALYZE minhash_merge_forms;
SET enable_sort = off;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';
SELECT count(*) AS groups,
       bool_and(short_union = minhash(elements, 8)) AS short_equal,
       bool_and(toasted_union IS NULL OR toasted_union = minhash(elements, 1024)) AS toasted_equal,
       count(toasted_union) AS toasted_groups
FROM (SELECT g, minhash_merge_agg(short_sig) AS short_union, minhash_merge_agg(toasted_sig) AS toasted_union,
             array_agg(g * 10 + r) AS elements
      FROM minhash_merge_forms GROUP BY g) t;
SELECT bool_and(running = minhash(ARRAY(SELECT g * 10 + i FROM generate_series(1, r) i), 8)) AS running_equal
FROM (SELECT g, r, minhash_merge_agg(short_sig) OVER (PARTITION BY g ORDER BY r) AS running
      FROM minhash_merge_forms WHERE g <= 100) t;

-- One state per group: a HashAggregate over short-header inputs needs no
-- more memory than over computed (full-header) ones. Copying the detoasted
-- state into the aggregate context kept a second copy per group alive.
CREATE FUNCTION pg_temp.hashagg_peak_kb(query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || query INTO plan;
    IF plan->0->'Plan'->>'Node Type' <> 'Aggregate' OR plan->0->'Plan'->>'Strategy' <> 'Hashed' THEN
        RAISE EXCEPTION 'expected a HashAggregate: %', plan;
    END IF;
    RETURN (plan->0->'Plan'->>'Peak Memory Usage')::bigint;
END $$;
SELECT pg_temp.hashagg_peak_kb('SELECT g, minhash_merge_agg(short_sig) FROM minhash_merge_forms GROUP BY g')
       <= pg_temp.hashagg_peak_kb('SELECT g, minhash_merge_agg(short_sig | short_sig) FROM minhash_merge_forms GROUP BY g')
       AS no_extra_memory;
RESET enable_sort;
RESET max_parallel_workers_per_gather;
RESET work_mem;
DROP TABLE minhash_merge_forms;

-- errors
SELECT minhash_agg(x, 0, 1) FROM generate_series(1, 3) x;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_agg(x, 2000, 1) FROM generate_series(1, 3) x;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_agg(x, CASE WHEN x < 3 THEN 16 ELSE 32 END, 1) FROM generate_series(1, 3) x;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_agg(x, 16, NULL) FROM generate_series(1, 3) x;
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_merge_agg(s) FROM (VALUES ('1:[1,2]'::minhash), ('1:[1,2,3]')) v(s);
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_merge_agg(s) FROM (VALUES ('1:[1,2]'::minhash), ('2:[1,2]')) v(s);
\echo :LAST_ERROR_SQLSTATE

DROP TABLE minhash_agg_items;
