-- minhash_clusters on large groups of identical signatures: the walk reduces
-- such a group to its classes of identical signatures (linear in the group's
-- rows, pairs_walk.cpp) and minhash_clusters expands the classes into what
-- their pairs would give (pairs_clusters.cpp). The clusters must be exactly
-- those computed from every pair (minhash_similar_pairs), in both modes,
-- named by the smallest key and by a keep column in both directions (with
-- ties and NULLs), serial, with parallel workers, with rows resolved in
-- table order and under the smallest work_mem, also when the first row of a
-- class is deleted or updated, and when keys do not follow the rows' order
-- in the index.

SET client_min_messages = warning;

-- Physical order and key order differ (keys are a permutation of the rows).
--   a: 120 rows of one text, b: 40 of a text similar to a's (J = 0.82),
--   c: 25 near-copies of a, each with a word of its own (J = 0.9 with a),
--   d: 60 rows of a third text, e: one row like a's text with an extra word,
--   f: 80 rows in pairs of identical short texts (small groups), and 200
--   rows like no other.
-- pri, the keep column: 0 to 6 (many ties in every class), NULL for every
-- 11th row and for e.
CREATE TABLE pci (id int PRIMARY KEY, body text, sig minhash, pri int);
CREATE FUNCTION pci_text(kind text, i int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE kind
    WHEN 'a' THEN 'the quick brown fox jumps over the lazy dog near the river bank on a sunny morning in june'
    WHEN 'b' THEN 'the quick brown fox jumps over the lazy dog near the river bank on a sunny morning in july'
    WHEN 'c' THEN 'the quick brown fox jumps over the lazy dog near the river bank on a sunny morning in june word' || i
    WHEN 'd' THEN 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt'
    WHEN 'e' THEN 'the quick brown fox jumps over the lazy dog near the river bank on a sunny morning in june again'
    WHEN 'f' THEN 'pair number ' || (i / 2) || ' of short identical texts here'
    ELSE 'unrelated text number ' || i || ' with words of its own ' || md5(i::text)
  END $$;
INSERT INTO pci (id, body, pri)
SELECT (g * 7919) % 1000003, pci_text(kind, g),
       CASE WHEN g % 11 = 0 OR kind = 'e' THEN NULL ELSE (g * 37) % 7 END
FROM (SELECT g, CASE WHEN g <= 120 THEN 'a' WHEN g <= 160 THEN 'b' WHEN g <= 185 THEN 'c'
                     WHEN g <= 245 THEN 'd' WHEN g = 246 THEN 'e' WHEN g <= 326 THEN 'f' ELSE 'z' END AS kind
      FROM generate_series(1, 526) g) s
ORDER BY g;
UPDATE pci SET sig = minhash(body);
CREATE INDEX pci_idx ON pci USING lsh (sig);
SELECT count(DISTINCT sig) AS signatures FROM pci;

-- The reference: clusters computed from every similar pair, as the
-- documented algorithms do (docs/pairs.md), with rows in the order keep
-- names: 'none' by key, 'asc' by pri then key, 'desc' by pri descending
-- then key, NULLs last either way.
CREATE FUNCTION pci_order(keep text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE keep WHEN 'none' THEN 'id' WHEN 'asc' THEN 'pri ASC NULLS LAST, id'
                   WHEN 'desc' THEN 'pri DESC NULLS LAST, id' END $$;
CREATE FUNCTION pci_reference(idx regclass, mode text, keep text) RETURNS TABLE (key bigint, cluster_id bigint)
LANGUAGE plpgsql AS $$
DECLARE
    x bigint;
    n int;
BEGIN
    CREATE TEMP TABLE ref_edges ON COMMIT DROP AS
        SELECT key_a AS a, key_b AS b FROM minhash_similar_pairs(idx, 'id')
        UNION SELECT key_b, key_a FROM minhash_similar_pairs(idx, 'id');
    CREATE INDEX ON ref_edges (a);
    ANALYZE ref_edges;
    -- each row's place in the order
    EXECUTE format('CREATE TEMP TABLE ref_rank ON COMMIT DROP AS
                    SELECT id::bigint AS k, row_number() OVER (ORDER BY %s) AS r FROM pci', pci_order(keep));
    CREATE TEMP TABLE ref_out (key bigint, cluster_id bigint) ON COMMIT DROP;
    IF mode = 'connected' THEN
        -- each row's component, named by its first row: labels (ranks)
        -- propagate along the edges until none changes
        INSERT INTO ref_out SELECT DISTINCT e.a, r.r FROM ref_edges e JOIN ref_rank r ON r.k = e.a;
        LOOP
            UPDATE ref_out SET cluster_id = m.l
              FROM (SELECT e.a, min(o.cluster_id) AS l FROM ref_edges e JOIN ref_out o ON o.key = e.b
                    GROUP BY e.a) m
             WHERE ref_out.key = m.a AND m.l < ref_out.cluster_id;
            EXIT WHEN NOT FOUND;
        END LOOP;
        UPDATE ref_out SET cluster_id = r.k FROM ref_rank r WHERE r.r = ref_out.cluster_id;
    ELSE
        -- rows in order: one not yet taken takes its neighbours not yet taken
        CREATE TEMP TABLE ref_taken (k bigint PRIMARY KEY) ON COMMIT DROP;
        FOR x IN SELECT e.a FROM (SELECT DISTINCT a FROM ref_edges) e JOIN ref_rank r ON r.k = e.a
                 ORDER BY r.r LOOP
            CONTINUE WHEN EXISTS (SELECT FROM ref_taken WHERE k = x);
            INSERT INTO ref_taken VALUES (x);
            INSERT INTO ref_out SELECT e.b, x FROM ref_edges e
                WHERE e.a = x AND NOT EXISTS (SELECT FROM ref_taken t WHERE t.k = e.b);
            GET DIAGNOSTICS n = ROW_COUNT;
            INSERT INTO ref_taken SELECT o.key FROM ref_out o WHERE o.cluster_id = x ON CONFLICT DO NOTHING;
            IF n > 0 THEN
                INSERT INTO ref_out VALUES (x, x);
            END IF;
        END LOOP;
        DROP TABLE ref_taken;
    END IF;
    RETURN QUERY SELECT * FROM ref_out;
    DROP TABLE ref_edges, ref_rank, ref_out;
END $$;

-- the reference of the table as it is now, for both modes and each order
CREATE TABLE pci_want (mode text, keep text, key bigint, cluster_id bigint);
CREATE PROCEDURE pci_reference_now() LANGUAGE plpgsql AS $$
DECLARE
    m text;
    k text;
BEGIN
    TRUNCATE pci_want;
    FOREACH m IN ARRAY ARRAY['connected', 'representative'] LOOP
        FOREACH k IN ARRAY ARRAY['none', 'asc', 'desc'] LOOP
            INSERT INTO pci_want SELECT m, k, * FROM pci_reference('pci_idx', m, k);
        END LOOP;
    END LOOP;
END $$;

-- rows in clusters, clusters, and rows that differ from the reference
CREATE FUNCTION pci_compare(idx regclass, m text, k text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r text;
BEGIN
    CREATE TEMP TABLE got ON COMMIT DROP AS
        SELECT * FROM minhash_clusters(idx, 'id', mode => m,
                                       keep => CASE WHEN k = 'none' THEN NULL ELSE 'pri' END,
                                       keep_desc => k = 'desc');
    CREATE TEMP TABLE want ON COMMIT DROP AS
        SELECT key, cluster_id FROM pci_want WHERE mode = m AND keep = k;
    SELECT (SELECT count(*) FROM got) || ' rows in ' || (SELECT count(DISTINCT cluster_id) FROM got)
           || ' clusters, ' || (SELECT count(*) FROM ((TABLE got EXCEPT TABLE want) UNION ALL
                                                     (TABLE want EXCEPT TABLE got)) d)
           || ' differences from the pairs'
      INTO r;
    DROP TABLE got, want;
    RETURN r;
END $$;

CREATE TABLE pci_results (setting text, mode text, keep text, result text);
CREATE PROCEDURE pci_run(setting text) LANGUAGE plpgsql AS $$
DECLARE
    m text;
    k text;
BEGIN
    FOREACH m IN ARRAY ARRAY['connected', 'representative'] LOOP
        FOREACH k IN ARRAY ARRAY['none', 'asc', 'desc'] LOOP
            INSERT INTO pci_results VALUES (setting, m, k, pci_compare('pci_idx', m, k));
        END LOOP;
    END LOOP;
END $$;

-- the keep column decides: the first rows of the large classes differ
-- between the three orders
SELECT pci_text('a', 0) = body AS class_a, pci_order(o) AS order_by,
       (SELECT id FROM pci p WHERE p.body = pci_text('a', 0)
        ORDER BY CASE o WHEN 'asc' THEN pri END ASC NULLS LAST,
                 CASE o WHEN 'desc' THEN pri END DESC NULLS LAST, id LIMIT 1) AS first_row
FROM (SELECT DISTINCT body FROM pci WHERE body = pci_text('a', 0)) b, unnest(ARRAY['none', 'asc', 'desc']) o;

-- serial; the smallest work_mem (the groups spill, few classes fit); parallel
-- workers; rows resolved in table order (effective_cache_size = 8 kB)
BEGIN;
CALL pci_reference_now();
CALL pci_run('serial');
SET LOCAL work_mem = '64kB';
CALL pci_run('work_mem 64kB');
COMMIT;
BEGIN;
SET LOCAL minhash.pairs_min_parallel_index_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
CALL pci_run('parallel');
SET LOCAL effective_cache_size = 1;
CALL pci_run('parallel, table order');
SET LOCAL max_parallel_workers_per_gather = 0;
CALL pci_run('table order');
COMMIT;

-- the first rows of the classes (by row id, by key, by pri either way) gone
-- or changed
DELETE FROM pci WHERE id = (SELECT min(id) FROM pci WHERE body = pci_text('a', 0))
                   OR id = (SELECT id FROM pci WHERE body = pci_text('a', 0) ORDER BY ctid LIMIT 1)
                   OR id = (SELECT id FROM pci WHERE body = pci_text('a', 0) ORDER BY pri DESC NULLS LAST, id LIMIT 1)
                   OR id = (SELECT id FROM pci WHERE body = pci_text('d', 0) ORDER BY ctid LIMIT 1);
UPDATE pci SET pri = NULL
 WHERE id = (SELECT id FROM pci WHERE body = pci_text('a', 0) ORDER BY pri ASC NULLS LAST, id LIMIT 1);
UPDATE pci SET pri = 7
 WHERE id = (SELECT id FROM pci WHERE body = pci_text('d', 0) ORDER BY id DESC LIMIT 1);
UPDATE pci SET sig = minhash(pci_text('z', id))
 WHERE id IN (SELECT id FROM pci WHERE body = pci_text('b', 0) ORDER BY ctid LIMIT 2);
-- every row of d but one: a class with one visible row is no cluster
DELETE FROM pci WHERE body = pci_text('d', 0) AND id <> (SELECT max(id) FROM pci WHERE body = pci_text('d', 0));
BEGIN;
CALL pci_reference_now();
CALL pci_run('after changes');
SET LOCAL minhash.pairs_min_parallel_index_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
CALL pci_run('after changes, parallel');
SET LOCAL effective_cache_size = 1;
CALL pci_run('after changes, parallel, table order');
COMMIT;

SELECT setting, mode, keep, result FROM pci_results ORDER BY mode, keep DESC, setting;
-- every setting gives the same clusters
SELECT mode, keep, count(DISTINCT result) AS distinct_results FROM pci_results
WHERE setting NOT LIKE 'after%' GROUP BY mode, keep ORDER BY mode, keep DESC;

-- and the three orders keep other rows: members whose cluster is named
-- after another row than by key alone (the clusters of the last reference)
SELECT w.mode, w.keep, count(*) AS members, count(*) FILTER (WHERE w.cluster_id <> n.cluster_id) AS kept_otherwise
FROM pci_want w JOIN pci_want n ON n.mode = w.mode AND n.keep = 'none' AND n.key = w.key
GROUP BY w.mode, w.keep ORDER BY w.mode, w.keep DESC;

DROP PROCEDURE pci_run, pci_reference_now;
DROP FUNCTION pci_compare, pci_reference, pci_order, pci_text;
DROP TABLE pci, pci_results, pci_want;
