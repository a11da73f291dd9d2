-- minhash_clusters on large groups of identical signatures: the walk reduces
-- such a group to its classes of identical signatures (linear in the group's
-- rows, pairs_walk.cpp) and minhash_clusters expands the classes into what
-- their pairs would give (pairs_clusters.cpp). The clusters must be exactly
-- those computed from every pair (minhash_similar_pairs), in both modes,
-- serial, with parallel workers, with rows resolved in table order and
-- under the smallest work_mem, also when the first row of a class is
-- deleted or updated, and when keys do not follow the rows' order in the
-- index.

SET client_min_messages = warning;

-- Physical order and key order differ (keys are a permutation of the rows).
--   a: 120 rows of one text, b: 40 of a text similar to a's (J = 0.82),
--   c: 25 near-copies of a, each with a word of its own (J = 0.9 with a),
--   d: 60 rows of a third text, e: one row like a's text with an extra word,
--   f: 80 rows in pairs of identical short texts (small groups), and 200
--   rows like no other.
CREATE TABLE pci (id int PRIMARY KEY, body text, sig minhash);
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
INSERT INTO pci (id, body)
SELECT (g * 7919) % 1000003, pci_text(kind, g)
FROM (SELECT g, CASE WHEN g <= 120 THEN 'a' WHEN g <= 160 THEN 'b' WHEN g <= 185 THEN 'c'
                     WHEN g <= 245 THEN 'd' WHEN g = 246 THEN 'e' WHEN g <= 326 THEN 'f' ELSE 'z' END AS kind
      FROM generate_series(1, 526) g) s
ORDER BY g;
UPDATE pci SET sig = minhash(body);
CREATE INDEX pci_idx ON pci USING lsh (sig);
SELECT count(DISTINCT sig) AS signatures FROM pci;

-- The reference: clusters computed from every similar pair, as the
-- documented algorithms do (docs/pairs.md).
CREATE FUNCTION pci_reference(idx regclass, mode text) RETURNS TABLE (key bigint, cluster_id bigint)
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
    CREATE TEMP TABLE ref_out (key bigint, cluster_id bigint) ON COMMIT DROP;
    IF mode = 'connected' THEN
        -- each row's component, named by its smallest key: labels propagate
        -- along the edges until none changes
        INSERT INTO ref_out SELECT DISTINCT a, a FROM ref_edges;
        LOOP
            UPDATE ref_out SET cluster_id = m.l
              FROM (SELECT e.a, min(o.cluster_id) AS l FROM ref_edges e JOIN ref_out o ON o.key = e.b
                    GROUP BY e.a) m
             WHERE ref_out.key = m.a AND m.l < ref_out.cluster_id;
            EXIT WHEN NOT FOUND;
        END LOOP;
    ELSE
        -- rows in key order: one not yet taken takes its neighbours not yet taken
        CREATE TEMP TABLE ref_taken (k bigint PRIMARY KEY) ON COMMIT DROP;
        FOR x IN SELECT DISTINCT a FROM ref_edges ORDER BY a LOOP
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
    END IF;
    RETURN QUERY SELECT * FROM ref_out;
END $$;

-- the reference of the table as it is now, for both modes
CREATE TABLE pci_want (mode text, key bigint, cluster_id bigint);
CREATE PROCEDURE pci_reference_now() LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE pci_want;
    INSERT INTO pci_want SELECT 'connected', * FROM pci_reference('pci_idx', 'connected');
    DROP TABLE ref_edges, ref_out;
    INSERT INTO pci_want SELECT 'representative', * FROM pci_reference('pci_idx', 'representative');
    DROP TABLE ref_edges, ref_out, ref_taken;
END $$;

-- rows in clusters, clusters, and rows that differ from the reference
CREATE FUNCTION pci_compare(idx regclass, m text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r text;
BEGIN
    CREATE TEMP TABLE got ON COMMIT DROP AS SELECT * FROM minhash_clusters(idx, 'id', mode => m);
    CREATE TEMP TABLE want ON COMMIT DROP AS SELECT key, cluster_id FROM pci_want WHERE mode = m;
    SELECT (SELECT count(*) FROM got) || ' rows in ' || (SELECT count(DISTINCT cluster_id) FROM got)
           || ' clusters, ' || (SELECT count(*) FROM ((TABLE got EXCEPT TABLE want) UNION ALL
                                                     (TABLE want EXCEPT TABLE got)) d)
           || ' differences from the pairs'
      INTO r;
    DROP TABLE got, want;
    RETURN r;
END $$;

CREATE TABLE pci_results (setting text, mode text, result text);
CREATE PROCEDURE pci_run(setting text) LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pci_results VALUES (setting, 'connected', pci_compare('pci_idx', 'connected'));
    INSERT INTO pci_results VALUES (setting, 'representative', pci_compare('pci_idx', 'representative'));
END $$;

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

-- the first rows of the classes (by row id and by key) gone or changed
DELETE FROM pci WHERE id = (SELECT min(id) FROM pci WHERE body = pci_text('a', 0))
                   OR id = (SELECT id FROM pci WHERE body = pci_text('a', 0) ORDER BY ctid LIMIT 1)
                   OR id = (SELECT id FROM pci WHERE body = pci_text('d', 0) ORDER BY ctid LIMIT 1);
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

SELECT setting, mode, result FROM pci_results ORDER BY mode, setting;
-- every setting gives the same clusters
SELECT mode, count(DISTINCT result) AS distinct_results FROM pci_results
WHERE setting NOT LIKE 'after%' GROUP BY mode ORDER BY mode;

DROP PROCEDURE pci_run, pci_reference_now;
DROP FUNCTION pci_compare, pci_reference, pci_text;
DROP TABLE pci, pci_results, pci_want;
