-- Sorted leaves (on-disk version 4): a leaf written whole (build, split,
-- VACUUM) is in key order and a probe binary-searches it; entries inserted
-- since are appended after the sorted ones and read one by one. Either way
-- the index answers % as a sequential scan does.
SET minhash.similarity_threshold = 0.5;
CREATE TABLE sl (id int, sig minhash);
-- families of four rows: 40 shared elements and one of their own (J about 0.93)
CREATE FUNCTION sl_sig(id int) RETURNS minhash LANGUAGE sql IMMUTABLE AS $$
  SELECT minhash(ARRAY(SELECT (id / 4) * 1000 + g FROM generate_series(1, 40) g
                       UNION ALL SELECT (id / 4) * 1000 + 500 + id % 4))
$$;
INSERT INTO sl SELECT g, sl_sig(g) FROM generate_series(0, 1999) g WHERE g % 4 <> 3;
CREATE INDEX sl_idx ON sl USING lsh (sig) WITH (fillfactor = 70);
-- the rows inserted now go after the sorted entries of the leaves they reach
INSERT INTO sl SELECT g, sl_sig(g) FROM generate_series(0, 1999) g WHERE g % 4 = 3;
SELECT live_rows FROM minhash_lsh_stats('sl_idx');

-- How many rows each row finds, by a sequential scan and through the index
CREATE VIEW sl_found AS SELECT a.id, (SELECT count(*) FROM sl b WHERE b.sig % a.sig) AS n FROM sl a;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
CREATE TEMP TABLE by_scan AS SELECT * FROM sl_found;
RESET enable_indexscan;
SET enable_seqscan = off;
-- the plan's lines; PostgreSQL 18 adds "Disabled: true" to the outer scan, which has no other way
CREATE FUNCTION sl_plan() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXPLAIN (COSTS OFF) SELECT * FROM sl_found LOOP
    IF l NOT LIKE '%Disabled: true%' THEN RETURN NEXT l; END IF;
  END LOOP;
END $$;
SELECT * FROM sl_plan();
CREATE TEMP TABLE by_index AS SELECT * FROM sl_found;
RESET enable_seqscan;
-- every row finds its family of four, both ways
SELECT n, count(*) FROM by_scan GROUP BY n ORDER BY n;
SELECT count(*) AS differ FROM by_scan s JOIN by_index i USING (id) WHERE s.n <> i.n;
SELECT count(*) FROM minhash_lsh_check('sl_idx', true);

-- VACUUM rewrites the leaves it prunes in key order: the same answers
DELETE FROM sl WHERE id % 8 = 1;
VACUUM sl;
INSERT INTO sl SELECT g, sl_sig(g) FROM generate_series(2000, 2399) g;
DROP TABLE by_scan, by_index;
SET enable_indexscan = off;
CREATE TEMP TABLE by_scan AS SELECT * FROM sl_found;
RESET enable_indexscan;
SET enable_seqscan = off;
CREATE TEMP TABLE by_index AS SELECT * FROM sl_found;
RESET enable_seqscan;
SELECT n, count(*) FROM by_scan GROUP BY n ORDER BY n;
SELECT count(*) AS differ FROM by_scan s JOIN by_index i USING (id) WHERE s.n <> i.n;
SELECT count(*) FROM minhash_lsh_check('sl_idx', true);

RESET enable_bitmapscan;
DROP FUNCTION sl_plan();
DROP VIEW sl_found;
DROP TABLE sl;
DROP FUNCTION sl_sig(int);
