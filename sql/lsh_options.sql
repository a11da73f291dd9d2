-- lsh index options, every invalid combination, mismatched signatures, and
-- the operator class validator. Every error is followed by its SQLSTATE.

CREATE TABLE lsh_opt (id int, sig minhash);
INSERT INTO lsh_opt SELECT i, minhash(ARRAY[i, i + 1, i + 2]) FROM generate_series(1, 20) i;

-- valid: a threshold (bands and rows from the optimiser, leaning to recall),
-- explicit bands and rows, a threshold with the optimiser's weights
CREATE INDEX lsh_opt_default ON lsh_opt USING lsh (sig);
CREATE INDEX lsh_opt_t8 ON lsh_opt USING lsh (sig) WITH (threshold = 0.8);
CREATE INDEX lsh_opt_br ON lsh_opt USING lsh (sig) WITH (bands = 16, rows = 8);
CREATE INDEX lsh_opt_w ON lsh_opt USING lsh (sig) WITH (threshold = 0.5, fp_weight = 0.5, fn_weight = 0.5);
SELECT c.relname, s.num_perm, s.bands, s.rows, round(s.threshold::numeric, 3) AS threshold
FROM pg_class c, minhash_lsh_stats(c.oid) s
WHERE c.relname IN ('lsh_opt_default', 'lsh_opt_t8', 'lsh_opt_br', 'lsh_opt_w') ORDER BY c.relname;
-- the chosen parameters are minhash_lsh_params' for the index's threshold and
-- weights: given ones, or the index's defaults (threshold 0.5, fp_weight 0.2,
-- fn_weight 0.8: LSH_DEFAULT_* in src/pg/lsh/lsh.h, not the function's 0.5/0.5)
SELECT o.idx, s.bands = p.bands AND s.rows = p.rows AS bands_rows_agree
FROM (VALUES ('lsh_opt_default', 0.5, 0.2, 0.8), ('lsh_opt_t8', 0.8, 0.2, 0.8),
             ('lsh_opt_w', 0.5, 0.5, 0.5)) o(idx, t, fp, fn),
     minhash_lsh_stats(o.idx::regclass) s, minhash_lsh_params(o.t, 128, o.fp, o.fn) p
ORDER BY o.idx;
-- the default weights matter here: with 0.5/0.5 the optimiser picks other
-- bands and rows at threshold 0.5, so the join above can tell them apart
SELECT (SELECT (bands, rows) FROM minhash_lsh_params(0.5, 128, 0.2, 0.8))
       IS DISTINCT FROM (SELECT (bands, rows) FROM minhash_lsh_params(0.5, 128, 0.5, 0.5)) AS weights_matter;
-- explicit bands and rows: the design threshold is (1/b)^(1/r)
SELECT abs(threshold - (1.0 / bands) ^ (1.0 / rows)) < 1e-9 AS threshold_from_bands_rows
FROM minhash_lsh_stats('lsh_opt_br');

-- invalid combinations: 22023
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (threshold = 0.5, bands = 10, rows = 5);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (bands = 10);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (rows = 5);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (bands = 0, rows = 5);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (bands = 10, rows = 0);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (threshold = 0);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (threshold = 1.5);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (threshold = -0.5);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (bands = 40, rows = 40);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (bands = 10, rows = 5, fp_weight = 0.3);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (fp_weight = 0, fn_weight = 0);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (fn_weight = -1);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (threshold = 'NaN');
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (threshold = 'high');
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (buckets = 8);
\echo :LAST_ERROR_SQLSTATE
-- bands * rows > k: known at build from the first row (k = 128 here) ...
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig) WITH (bands = 33, rows = 4);
\echo :LAST_ERROR_SQLSTATE
-- ... or from the typmod, even on an empty table ...
CREATE TABLE lsh_opt64 (id int, sig minhash(64));
CREATE INDEX lsh_bad ON lsh_opt64 USING lsh (sig) WITH (bands = 17, rows = 4);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_opt64_sig ON lsh_opt64 USING lsh (sig) WITH (bands = 16, rows = 4);
-- ... or at the first insert into an index built empty
CREATE TABLE lsh_opt_late (id int, sig minhash);
CREATE INDEX lsh_opt_late_sig ON lsh_opt_late USING lsh (sig) WITH (bands = 64, rows = 4);
INSERT INTO lsh_opt_late VALUES (1, minhash(ARRAY[1, 2, 3]));
\echo :LAST_ERROR_SQLSTATE
INSERT INTO lsh_opt_late VALUES (1, minhash(ARRAY[1, 2, 3], 256));
SELECT num_perm, bands, rows, live_rows FROM minhash_lsh_stats('lsh_opt_late_sig');
-- The first signature fixes the parameters even when its insert rolls back:
-- the error says where they came from, and REINDEX starts afresh
CREATE TABLE lsh_opt_undone (id int, sig minhash);
CREATE INDEX lsh_opt_undone_sig ON lsh_opt_undone USING lsh (sig);
BEGIN;
INSERT INTO lsh_opt_undone VALUES (1, minhash(ARRAY[1, 2, 3], 64));
ROLLBACK;
INSERT INTO lsh_opt_undone VALUES (2, minhash(ARRAY[1, 2, 3]));
\echo :LAST_ERROR_SQLSTATE
REINDEX INDEX lsh_opt_undone_sig;
INSERT INTO lsh_opt_undone VALUES (2, minhash(ARRAY[1, 2, 3]));
SELECT num_perm, live_rows FROM minhash_lsh_stats('lsh_opt_undone_sig');
SELECT id FROM lsh_opt_undone WHERE sig % minhash(ARRAY[1, 2, 3]);
-- so for any later mismatch, until a build from rows gives the plain message
INSERT INTO lsh_opt_undone VALUES (3, minhash(ARRAY[1, 2, 3], 64));
REINDEX INDEX lsh_opt_undone_sig;
INSERT INTO lsh_opt_undone VALUES (3, minhash(ARRAY[1, 2, 3], 64));
DROP TABLE lsh_opt_undone;

-- ALTER INDEX SET is validated the same way, and a change of the build
-- options is refused (0A000): the definition pg_dump writes must stay the
-- one the index was built with. Setting an option to its current value,
-- and REINDEX, keep the index as it is.
ALTER INDEX lsh_opt_t8 SET (bands = 4, rows = 4);
\echo :LAST_ERROR_SQLSTATE
ALTER INDEX lsh_opt_t8 SET (threshold = 0.9);
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE lsh_opt_t8 SET (fp_weight = 0.5);
\echo :LAST_ERROR_SQLSTATE
ALTER INDEX lsh_opt_t8 RESET (threshold);
\echo :LAST_ERROR_SQLSTATE
ALTER INDEX lsh_opt_br SET (bands = 5, rows = 4);
\echo :LAST_ERROR_SQLSTATE
ALTER INDEX lsh_opt_br RESET (bands, rows);
\echo :LAST_ERROR_SQLSTATE
ALTER INDEX lsh_opt_t8 SET (threshold = 0.8);
ALTER INDEX lsh_opt_t8 RENAME TO lsh_opt_t8_renamed;
ALTER INDEX lsh_opt_t8_renamed RENAME TO lsh_opt_t8;
SELECT relname, reloptions FROM pg_class WHERE relname IN ('lsh_opt_t8', 'lsh_opt_br') ORDER BY 1;
REINDEX INDEX lsh_opt_t8;
SELECT bands, rows, round(threshold::numeric, 2) AS threshold FROM minhash_lsh_stats('lsh_opt_t8');

DROP INDEX lsh_opt_t8, lsh_opt_br, lsh_opt_w;

-- a row whose signature has another k or seed than the index's: 22023
INSERT INTO lsh_opt VALUES (100, minhash(ARRAY[1, 2, 3], 64));
\echo :LAST_ERROR_SQLSTATE
INSERT INTO lsh_opt VALUES (100, minhash(ARRAY[1, 2, 3], 128, 7));
\echo :LAST_ERROR_SQLSTATE
-- and so is a query with another k or seed, as the operators themselves do
SET enable_seqscan = off;
SELECT id FROM lsh_opt WHERE sig % minhash(ARRAY[1, 2, 3], 64);
\echo :LAST_ERROR_SQLSTATE
SELECT id FROM lsh_opt ORDER BY sig <%> minhash(ARRAY[1, 2, 3], 128, 7) LIMIT 1;
\echo :LAST_ERROR_SQLSTATE
RESET enable_seqscan;
SELECT id FROM lsh_opt WHERE sig % minhash(ARRAY[1, 2, 3], 64);
\echo :LAST_ERROR_SQLSTATE

-- not an lsh index
SELECT * FROM minhash_lsh_check('lsh_opt');
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX lsh_opt_btree ON lsh_opt (id);
SELECT * FROM minhash_lsh_check('lsh_opt_btree');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_stats('lsh_opt_btree');
\echo :LAST_ERROR_SQLSTATE
-- lsh indexes one column
CREATE INDEX lsh_bad ON lsh_opt USING lsh (sig, sig);
\echo :LAST_ERROR_SQLSTATE
-- an approximate index cannot enforce an exclusion constraint
ALTER TABLE lsh_opt ADD EXCLUDE USING lsh (sig WITH %);
\echo :LAST_ERROR_SQLSTATE

-- the operator class validator
SELECT opcname, amvalidate(opc.oid)
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod WHERE am.amname = 'lsh';
CREATE OPERATOR CLASS lsh_incomplete_ops FOR TYPE minhash USING lsh AS OPERATOR 1 = (minhash, minhash);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'lsh_incomplete_ops';
DROP OPERATOR FAMILY lsh_incomplete_ops USING lsh;

-- fillfactor (as btree's): the share of each leaf a build fills, leaving room
-- for inserts; 10 to 100, default 95
CREATE TABLE lsh_ff (id int, sig minhash);
INSERT INTO lsh_ff SELECT g, minhash(ARRAY[g, g + 1, g + 2]) FROM generate_series(1, 20000) g;
CREATE INDEX lsh_ff_default ON lsh_ff USING lsh (sig);
CREATE INDEX lsh_ff_50 ON lsh_ff USING lsh (sig) WITH (fillfactor = 50);
SELECT round(b.leaf_pages::numeric / a.leaf_pages, 1) AS leaves_at_50_over_default
FROM minhash_lsh_stats('lsh_ff_default') a, minhash_lsh_stats('lsh_ff_50') b;
SELECT count(*) AS problems FROM minhash_lsh_check('lsh_ff_50', true);
SET enable_seqscan = off;
SELECT count(*) AS found_by_own_signature FROM lsh_ff t
WHERE EXISTS (SELECT 1 FROM lsh_ff u WHERE u.sig % t.sig AND u.id = t.id);
RESET enable_seqscan;
CREATE INDEX lsh_ff_bad ON lsh_ff USING lsh (sig) WITH (fillfactor = 5);
\echo :LAST_ERROR_SQLSTATE
DROP TABLE lsh_ff;

DROP TABLE lsh_opt, lsh_opt64, lsh_opt_late;
