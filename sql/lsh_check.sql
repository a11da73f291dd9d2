-- minhash_lsh_check: who may call it, and the heapallindexed option, which
-- compares the index with its table (every LIVE slot of a visible row holds
-- the row's indexed value; every visible row the index covers is in it).

CREATE TABLE lsh_chk (id int PRIMARY KEY, body text, note text, sig minhash)
  WITH (autovacuum_enabled = off, fillfactor = 70);
INSERT INTO lsh_chk
SELECT i, 'item ' || i % 50 || ' of the ledger, line ' || i % 7 || ' in book ' || i % 3, NULL,
       minhash(ARRAY[i % 50, i % 50 + 1, i % 50 + 2, i])
FROM generate_series(1, 1200) i;
UPDATE lsh_chk SET sig = NULL WHERE id % 100 = 0;   -- NULL signatures are not indexed
CREATE INDEX lsh_chk_sig ON lsh_chk USING lsh (sig);
CREATE INDEX lsh_chk_body ON lsh_chk USING lsh (minhash(body, 'word', 2, 64, 7));
CREATE INDEX lsh_chk_even ON lsh_chk USING lsh (sig) WHERE id % 2 = 0;

-- a plain column, an expression and a partial index: consistent, also with the table
SELECT * FROM minhash_lsh_check('lsh_chk_sig', heapallindexed => true);
SELECT * FROM minhash_lsh_check('lsh_chk_body', heapallindexed => true);
SELECT * FROM minhash_lsh_check('lsh_chk_even', heapallindexed => true);

-- updates that change the indexed value (new index entries), HOT updates
-- that do not (the index keeps naming the chain's root), deletes, inserts,
-- VACUUM: still consistent
UPDATE lsh_chk SET body = body || ' (revised)', sig = minhash(ARRAY[id, -id]) WHERE id % 7 = 0;
BEGIN;
UPDATE lsh_chk SET note = 'checked' WHERE id % 5 = 1;
SELECT pg_stat_get_xact_tuples_hot_updated('lsh_chk'::regclass) > 0 AS some_hot_updates;
COMMIT;
DELETE FROM lsh_chk WHERE id % 11 = 0;
INSERT INTO lsh_chk SELECT i, 'new item ' || i, NULL, minhash(ARRAY[i, i + 1]) FROM generate_series(2001, 2100) i;
SELECT 'sig' AS idx, * FROM minhash_lsh_check('lsh_chk_sig', true)
UNION ALL SELECT 'body', * FROM minhash_lsh_check('lsh_chk_body', true)
UNION ALL SELECT 'even', * FROM minhash_lsh_check('lsh_chk_even', true);
VACUUM lsh_chk;
SELECT 'sig' AS idx, * FROM minhash_lsh_check('lsh_chk_sig', true)
UNION ALL SELECT 'body', * FROM minhash_lsh_check('lsh_chk_body', true)
UNION ALL SELECT 'even', * FROM minhash_lsh_check('lsh_chk_even', true);
-- rows of an aborted transaction stay in the index until VACUUM: not a problem
BEGIN;
INSERT INTO lsh_chk SELECT i, 'aborted ' || i, NULL, minhash(ARRAY[i]) FROM generate_series(3001, 3050) i;
ROLLBACK;
SELECT live_rows FROM minhash_lsh_stats('lsh_chk_sig');
SELECT count(*) FROM lsh_chk WHERE sig IS NOT NULL;
SELECT * FROM minhash_lsh_check('lsh_chk_sig', true);

-- What the option catches, shown with a function that claims to be
-- IMMUTABLE and is not: once its definition changes, the index holds values
-- the table no longer produces. The plain check sees a sound index; the
-- heap comparison sees every row. (The functions pin their search_path:
-- from PostgreSQL 17 on, CREATE INDEX and the check run index expressions
-- with search_path = pg_catalog, pg_temp.)
CREATE FUNCTION lsh_chk_sig_of(t text) RETURNS minhash LANGUAGE plpgsql IMMUTABLE
  SET search_path FROM CURRENT AS $$ BEGIN RETURN minhash(t, 'word', 2, 64); END $$;
CREATE FUNCTION lsh_chk_covered(id int) RETURNS bool LANGUAGE plpgsql IMMUTABLE
  AS $$ BEGIN RETURN id % 2 = 0; END $$;
CREATE TABLE lsh_lie (id int, body text) WITH (autovacuum_enabled = off);
INSERT INTO lsh_lie SELECT i, 'entry ' || i || ' of the register' FROM generate_series(1, 40) i;
CREATE INDEX lsh_lie_expr ON lsh_lie USING lsh (lsh_chk_sig_of(body));
CREATE INDEX lsh_lie_part ON lsh_lie USING lsh (minhash(body)) WHERE lsh_chk_covered(id);
SELECT * FROM minhash_lsh_check('lsh_lie_expr', true);
SELECT * FROM minhash_lsh_check('lsh_lie_part', true);
CREATE OR REPLACE FUNCTION lsh_chk_sig_of(t text) RETURNS minhash LANGUAGE plpgsql IMMUTABLE
  SET search_path FROM CURRENT AS $$ BEGIN RETURN minhash(t, 'word', 3, 64); END $$;
CREATE OR REPLACE FUNCTION lsh_chk_covered(id int) RETURNS bool LANGUAGE plpgsql IMMUTABLE
  AS $$ BEGIN RETURN id % 4 <> 3; END $$;
SELECT count(*) AS problems FROM minhash_lsh_check('lsh_lie_expr');
SELECT count(*) AS problems, min(problem) AS example FROM minhash_lsh_check('lsh_lie_expr', true);
-- rows 1, 5, 9, ... are now covered but were never indexed
SELECT count(*) AS problems FROM minhash_lsh_check('lsh_lie_part');
SELECT count(*) AS problems, min(problem) AS example FROM minhash_lsh_check('lsh_lie_part', true);
SELECT min(id), max(id), count(*) FROM lsh_lie WHERE id % 4 = 1;

-- Privileges. EXECUTE on minhash_lsh_check is revoked from PUBLIC (holding
-- off writers for a whole check is an administrator's decision, as with
-- amcheck); minhash_lsh_stats is open but, like the check, requires owning
-- the table, verified before any lock is requested.
SELECT has_function_privilege('public', 'minhash_lsh_check(regclass, bool)', 'EXECUTE') AS check_public,
       has_function_privilege('public', 'minhash_lsh_stats(regclass)', 'EXECUTE') AS stats_public;
CREATE ROLE regress_lsh_other;
CREATE ROLE regress_lsh_owner;
SET ROLE regress_lsh_other;
SELECT * FROM minhash_lsh_check('lsh_chk_sig');
\echo :LAST_ERROR_SQLSTATE
SELECT live_rows FROM minhash_lsh_stats('lsh_chk_sig');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT EXECUTE ON FUNCTION minhash_lsh_check(regclass, bool) TO regress_lsh_other, regress_lsh_owner;
SET ROLE regress_lsh_other;
SELECT * FROM minhash_lsh_check('lsh_chk_sig');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- the table's owner, once granted EXECUTE, checks its own index; the heap
-- comparison runs the index expression as the owner
ALTER TABLE lsh_chk OWNER TO regress_lsh_owner;
SET ROLE regress_lsh_owner;
SELECT * FROM minhash_lsh_check('lsh_chk_body', true);
SELECT live_rows > 0 AS has_rows FROM minhash_lsh_stats('lsh_chk_body');
RESET ROLE;
-- a superuser checks anyone's index; the index expression then runs as the
-- table's owner, not as the superuser, with search_path = pg_catalog, pg_temp
-- (functions that need more say so: SET search_path FROM CURRENT)
CREATE FUNCTION lsh_chk_whoami(t text) RETURNS minhash LANGUAGE plpgsql IMMUTABLE
  SET search_path FROM CURRENT
  AS $$ BEGIN RAISE NOTICE 'evaluated as %', current_user; RETURN minhash(t); END $$;
CREATE TABLE lsh_who (body text);
INSERT INTO lsh_who VALUES ('one two three four five six');
ALTER TABLE lsh_who OWNER TO regress_lsh_owner;
SET client_min_messages = warning;
CREATE INDEX lsh_who_expr ON lsh_who USING lsh (lsh_chk_whoami(body));
RESET client_min_messages;
SELECT * FROM minhash_lsh_check('lsh_who_expr', true);

-- a build that failed under CREATE INDEX CONCURRENTLY leaves an index that
-- is not built (half a build, or no pages): the functions say so, not that
-- it is corrupted
CREATE FUNCTION lsh_chk_fails_on(t text) RETURNS minhash LANGUAGE plpgsql IMMUTABLE
  SET search_path FROM CURRENT
  AS $$ BEGIN IF t = 'two' THEN RAISE EXCEPTION 'refused'; END IF; RETURN minhash(t); END $$;
CREATE TABLE lsh_unbuilt (body text);
INSERT INTO lsh_unbuilt VALUES ('one'), ('two');
CREATE INDEX CONCURRENTLY lsh_unbuilt_idx ON lsh_unbuilt USING lsh (lsh_chk_fails_on(body));
SELECT indisready, indisvalid FROM pg_index WHERE indexrelid = 'lsh_unbuilt_idx'::regclass;
SELECT * FROM minhash_lsh_check('lsh_unbuilt_idx');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM minhash_lsh_stats('lsh_unbuilt_idx');
\echo :LAST_ERROR_SQLSTATE
SELECT minhash_lsh_clean_pending_list('lsh_unbuilt_idx');
\echo :LAST_ERROR_SQLSTATE
DELETE FROM lsh_unbuilt WHERE body = 'two';
REINDEX INDEX lsh_unbuilt_idx;
SELECT * FROM minhash_lsh_check('lsh_unbuilt_idx');
SELECT live_rows FROM minhash_lsh_stats('lsh_unbuilt_idx');

DROP TABLE lsh_chk, lsh_lie, lsh_who, lsh_unbuilt;
DROP FUNCTION lsh_chk_sig_of(text), lsh_chk_covered(int), lsh_chk_whoami(text), lsh_chk_fails_on(text);
REVOKE EXECUTE ON FUNCTION minhash_lsh_check(regclass, bool) FROM regress_lsh_other, regress_lsh_owner;
DROP ROLE regress_lsh_other;
DROP ROLE regress_lsh_owner;
