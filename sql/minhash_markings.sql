-- The markings of the functions a user calls, as docs/sql.md states them
-- ("Conventions"): every function is IMMUTABLE STRICT PARALLEL SAFE except
-- those listed here. Functions of internal arguments (support functions,
-- estimators, the access method handler, aggregate steps) are the planner's
-- and the executor's, not called from SQL, and left out.
CREATE TEMP VIEW ext_functions AS
SELECT p.*
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'minhash')
  AND p.prokind = 'f'
  AND NOT ('internal'::regtype = ANY (p.proargtypes) OR p.prorettype = 'internal'::regtype);

-- the exceptions: the % function reads a setting; the index and table
-- readers; the hint overloads of minhash(doc, integer, ...), which raise
-- their error for a NULL document too
SELECT oid::regprocedure AS function, provolatile, proisstrict, proparallel
FROM ext_functions
WHERE (provolatile, proisstrict, proparallel) IS DISTINCT FROM ('i', true, 's')
ORDER BY proname, oid::regprocedure::text;

-- A function reading a minhash.* setting is not IMMUTABLE: those whose
-- results depend on minhash.similarity_threshold (% and the NULL threshold
-- of the others) change with it.
SET minhash.similarity_threshold = 0.5;
SELECT '1:[1,2,3,4]'::minhash % '1:[1,2,9,9]' AS at_half;
SET minhash.similarity_threshold = 0.6;
SELECT '1:[1,2,3,4]'::minhash % '1:[1,2,9,9]' AS at_six_tenths;
RESET minhash.similarity_threshold;

-- the set-returning functions and the planner's row estimate (ROWS):
-- minhash_lsh_params returns one row, minhash_lsh_recall at most three;
-- the pairs functions and minhash_lsh_check return any number, for which
-- PostgreSQL's default of 1000 stands
SELECT oid::regprocedure AS function, prorows, prosupport
FROM ext_functions
WHERE proretset
ORDER BY proname, oid::regprocedure::text;
SELECT count(*) FROM minhash_lsh_params(0.8, 128);

