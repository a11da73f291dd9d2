-- The upgrade path: CREATE EXTENSION minhash VERSION '1.0' followed by
-- ALTER EXTENSION minhash UPDATE must give exactly what a fresh install of the
-- current version gives. upd.describe() lists every object of the extension
-- (the members in pg_depend with deptype 'e', plus what they own: the array
-- type of a type, the operators and functions of an operator family, the
-- pg_aggregate row of an aggregate) as (catalog, object, attribute, value)
-- rows: every column of the object's catalog row, OIDs replaced by names, plus
-- its comment, initial privileges and dependencies. The two lists must be
-- equal, so an object added to src/sql/ but not to minhash--1.0--1.1.sql (or
-- added with another cost, volatility, comment, ACL...) shows up below as a
-- difference. See DEVELOPERS.md, "Changing SQL objects".
--
-- It runs in a database of its own (the regression database has the
-- extension loaded), in schema mh, which is not on the search_path, so that
-- every name below is printed schema-qualified and a script that hard-codes
-- "public." shows up too.

SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS regression_minhash_update;
CREATE DATABASE regression_minhash_update TEMPLATE template0;
\c regression_minhash_update
SET client_min_messages = warning;
CREATE SCHEMA upd;
CREATE SCHEMA mh;

-- A member whose catalog is not one of those listed here (a table, a text
-- search configuration...) would only be compared by name: the coverage check
-- at the end fails for it, so whoever adds one extends this function.
CREATE FUNCTION upd.describe(ext name)
RETURNS TABLE (catalog text, object text, attribute text, value text)
LANGUAGE sql STABLE AS $$
WITH members AS (
    SELECT d.classid, d.objid, d.objsubid
    FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
    WHERE d.refclassid = 'pg_extension'::regclass AND e.extname = ext AND d.deptype = 'e'
),
-- members and the objects they own
objects AS (
    SELECT classid, objid, objsubid FROM members
    UNION
    SELECT 'pg_type'::regclass, t.typarray, 0
    FROM members m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
    WHERE t.typarray <> 0
    UNION
    SELECT 'pg_amop'::regclass, o.oid, 0
    FROM members m JOIN pg_amop o ON m.classid = 'pg_opfamily'::regclass AND o.amopfamily = m.objid
    UNION
    SELECT 'pg_amproc'::regclass, p.oid, 0
    FROM members m JOIN pg_amproc p ON m.classid = 'pg_opfamily'::regclass AND p.amprocfamily = m.objid
),
-- one jsonb per object: the catalog row with OIDs replaced by names
rows AS (
    SELECT 'pg_proc' AS catalog, o.classid, o.objid, o.objsubid,
        to_jsonb(p) - '{oid,pronamespace,proowner,prolang,provariadic,prosupport,prorettype,proargtypes,proallargtypes,protrftypes,proargdefaults,prosqlbody}'::text[]
        || jsonb_build_object(
            'pronamespace', p.pronamespace::regnamespace,
            'proowner', p.proowner::regrole,
            'prolang', (SELECT lanname FROM pg_language WHERE oid = p.prolang),
            'provariadic', p.provariadic::regtype,
            'prosupport', p.prosupport::oid::regprocedure,
            'prorettype', p.prorettype::regtype,
            'proargtypes', p.proargtypes::regtype[],
            'proallargtypes', p.proallargtypes::regtype[],
            'protrftypes', p.protrftypes::regtype[],
            'proargdefaults', pg_get_expr(p.proargdefaults, 0),
            'prosqlbody', pg_get_function_sqlbody(p.oid),
            'arguments', pg_get_function_arguments(p.oid),
            'result', pg_get_function_result(p.oid))
        AS attrs
    FROM objects o JOIN pg_proc p ON o.classid = 'pg_proc'::regclass AND p.oid = o.objid
    UNION ALL
    SELECT 'pg_aggregate', o.classid, o.objid, o.objsubid,
        to_jsonb(a) - '{aggfnoid,aggtransfn,aggfinalfn,aggcombinefn,aggserialfn,aggdeserialfn,aggmtransfn,aggminvtransfn,aggmfinalfn,aggsortop,aggtranstype,aggmtranstype}'::text[]
        || jsonb_build_object(
            'aggtransfn', a.aggtransfn::oid::regprocedure,
            'aggfinalfn', a.aggfinalfn::oid::regprocedure,
            'aggcombinefn', a.aggcombinefn::oid::regprocedure,
            'aggserialfn', a.aggserialfn::oid::regprocedure,
            'aggdeserialfn', a.aggdeserialfn::oid::regprocedure,
            'aggmtransfn', a.aggmtransfn::oid::regprocedure,
            'aggminvtransfn', a.aggminvtransfn::oid::regprocedure,
            'aggmfinalfn', a.aggmfinalfn::oid::regprocedure,
            'aggsortop', a.aggsortop::regoperator,
            'aggtranstype', a.aggtranstype::regtype,
            'aggmtranstype', a.aggmtranstype::regtype)
    FROM objects o JOIN pg_aggregate a ON o.classid = 'pg_proc'::regclass AND a.aggfnoid = o.objid
    UNION ALL
    SELECT 'pg_type', o.classid, o.objid, o.objsubid,
        to_jsonb(t) - '{oid,typnamespace,typowner,typrelid,typsubscript,typelem,typarray,typinput,typoutput,typreceive,typsend,typmodin,typmodout,typanalyze,typbasetype,typcollation,typdefaultbin}'::text[]
        || jsonb_build_object(
            'typnamespace', t.typnamespace::regnamespace,
            'typowner', t.typowner::regrole,
            'typrelid', t.typrelid::regclass,
            'typsubscript', t.typsubscript::oid::regprocedure,
            'typelem', t.typelem::regtype,
            'typarray', t.typarray::regtype,
            'typinput', t.typinput::oid::regprocedure,
            'typoutput', t.typoutput::oid::regprocedure,
            'typreceive', t.typreceive::oid::regprocedure,
            'typsend', t.typsend::oid::regprocedure,
            'typmodin', t.typmodin::oid::regprocedure,
            'typmodout', t.typmodout::oid::regprocedure,
            'typanalyze', t.typanalyze::oid::regprocedure,
            'typbasetype', t.typbasetype::regtype,
            'typcollation', t.typcollation::regcollation,
            'typdefaultbin', pg_get_expr(t.typdefaultbin, 0),
            -- an enum's labels in their order (ALTER TYPE ... ADD VALUE appends)
            'enumlabels', (SELECT jsonb_agg(e.enumlabel ORDER BY e.enumsortorder)
                           FROM pg_enum e WHERE e.enumtypid = t.oid))
    FROM objects o JOIN pg_type t ON o.classid = 'pg_type'::regclass AND t.oid = o.objid
    UNION ALL
    SELECT 'pg_operator', o.classid, o.objid, o.objsubid,
        to_jsonb(op) - '{oid,oprnamespace,oprowner,oprleft,oprright,oprresult,oprcom,oprnegate,oprcode,oprrest,oprjoin}'::text[]
        || jsonb_build_object(
            'oprnamespace', op.oprnamespace::regnamespace,
            'oprowner', op.oprowner::regrole,
            'oprleft', op.oprleft::regtype,
            'oprright', op.oprright::regtype,
            'oprresult', op.oprresult::regtype,
            'oprcom', op.oprcom::regoperator,
            'oprnegate', op.oprnegate::regoperator,
            'oprcode', op.oprcode::oid::regprocedure,
            'oprrest', op.oprrest::oid::regprocedure,
            'oprjoin', op.oprjoin::oid::regprocedure)
    FROM objects o JOIN pg_operator op ON o.classid = 'pg_operator'::regclass AND op.oid = o.objid
    UNION ALL
    SELECT 'pg_opclass', o.classid, o.objid, o.objsubid,
        to_jsonb(c) - '{oid,opcmethod,opcnamespace,opcowner,opcfamily,opcintype,opckeytype}'::text[]
        || jsonb_build_object(
            'opcmethod', (SELECT amname FROM pg_am WHERE oid = c.opcmethod),
            'opcnamespace', c.opcnamespace::regnamespace,
            'opcowner', c.opcowner::regrole,
            'opcfamily', pg_describe_object('pg_opfamily'::regclass, c.opcfamily, 0),
            'opcintype', c.opcintype::regtype,
            'opckeytype', c.opckeytype::regtype)
    FROM objects o JOIN pg_opclass c ON o.classid = 'pg_opclass'::regclass AND c.oid = o.objid
    UNION ALL
    SELECT 'pg_opfamily', o.classid, o.objid, o.objsubid,
        to_jsonb(f) - '{oid,opfmethod,opfnamespace,opfowner}'::text[]
        || jsonb_build_object(
            'opfmethod', (SELECT amname FROM pg_am WHERE oid = f.opfmethod),
            'opfnamespace', f.opfnamespace::regnamespace,
            'opfowner', f.opfowner::regrole)
    FROM objects o JOIN pg_opfamily f ON o.classid = 'pg_opfamily'::regclass AND f.oid = o.objid
    UNION ALL
    SELECT 'pg_amop', o.classid, o.objid, o.objsubid,
        to_jsonb(ao) - '{oid,amopfamily,amoplefttype,amoprighttype,amopopr,amopmethod,amopsortfamily}'::text[]
        || jsonb_build_object(
            'amopfamily', pg_describe_object('pg_opfamily'::regclass, ao.amopfamily, 0),
            'amoplefttype', ao.amoplefttype::regtype,
            'amoprighttype', ao.amoprighttype::regtype,
            'amopopr', ao.amopopr::regoperator,
            'amopmethod', (SELECT amname FROM pg_am WHERE oid = ao.amopmethod),
            'amopsortfamily', CASE WHEN ao.amopsortfamily <> 0
                THEN pg_describe_object('pg_opfamily'::regclass, ao.amopsortfamily, 0) END)
    FROM objects o JOIN pg_amop ao ON o.classid = 'pg_amop'::regclass AND ao.oid = o.objid
    UNION ALL
    SELECT 'pg_amproc', o.classid, o.objid, o.objsubid,
        to_jsonb(ap) - '{oid,amprocfamily,amproclefttype,amprocrighttype,amproc}'::text[]
        || jsonb_build_object(
            'amprocfamily', pg_describe_object('pg_opfamily'::regclass, ap.amprocfamily, 0),
            'amproclefttype', ap.amproclefttype::regtype,
            'amprocrighttype', ap.amprocrighttype::regtype,
            'amproc', ap.amproc::oid::regprocedure)
    FROM objects o JOIN pg_amproc ap ON o.classid = 'pg_amproc'::regclass AND ap.oid = o.objid
    UNION ALL
    SELECT 'pg_cast', o.classid, o.objid, o.objsubid,
        to_jsonb(c) - '{oid,castsource,casttarget,castfunc}'::text[]
        || jsonb_build_object(
            'castsource', c.castsource::regtype,
            'casttarget', c.casttarget::regtype,
            'castfunc', c.castfunc::regprocedure)
    FROM objects o JOIN pg_cast c ON o.classid = 'pg_cast'::regclass AND c.oid = o.objid
    UNION ALL
    SELECT 'pg_am', o.classid, o.objid, o.objsubid,
        to_jsonb(a) - '{oid,amhandler}'::text[]
        || jsonb_build_object('amhandler', a.amhandler::oid::regprocedure)
    FROM objects o JOIN pg_am a ON o.classid = 'pg_am'::regclass AND a.oid = o.objid
    UNION ALL
    -- the extension itself: version, relocatable, configuration tables
    SELECT 'pg_extension', 'pg_extension'::regclass, e.oid, 0,
        to_jsonb(e) - '{oid,extowner,extnamespace,extconfig}'::text[]
        || jsonb_build_object(
            'extowner', e.extowner::regrole,
            'extnamespace', e.extnamespace::regnamespace,
            'extconfig', e.extconfig::regclass[])
    FROM pg_extension e WHERE e.extname = ext
    UNION ALL
    -- every object, whatever its catalog: its comment, its initial privileges
    -- (what pg_dump treats as the extension's own ACL), and what it depends on
    SELECT 'pg_description', o.classid, o.objid, d.objsubid,
        jsonb_build_object('comment', d.description)
    FROM objects o JOIN pg_description d ON d.classoid = o.classid AND d.objoid = o.objid
    UNION ALL
    SELECT 'pg_init_privs', o.classid, o.objid, i.objsubid,
        jsonb_build_object('privtype', i.privtype, 'initprivs', i.initprivs)
    FROM objects o JOIN pg_init_privs i ON i.classoid = o.classid AND i.objoid = o.objid
    UNION ALL
    SELECT 'pg_depend', o.classid, o.objid, o.objsubid,
        jsonb_object_agg(pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid),
                         d.deptype::text)
    FROM objects o JOIN pg_depend d ON d.classid = o.classid AND d.objid = o.objid
                                    AND d.objsubid = o.objsubid
    GROUP BY o.classid, o.objid, o.objsubid
    UNION ALL
    -- every object by its name, so that a member of a catalog not handled
    -- above is still compared by name (and listed by the coverage check)
    SELECT 'object', o.classid, o.objid, o.objsubid,
        jsonb_build_object('catalog', o.classid::regclass::text)
    FROM objects o
)
SELECT r.catalog, pg_describe_object(r.classid, r.objid, r.objsubid), kv.key, kv.value
FROM rows r, jsonb_each_text(r.attrs) AS kv
$$;

-- The released 1.0, as it is installed (1.0 is frozen: these counts never change).
-- Array types are left out: PostgreSQL 17 records them as members, 15 does not.
CREATE EXTENSION minhash SCHEMA mh VERSION '1.0';
SELECT classid::regclass AS catalog, count(*) AS members_in_1_0
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'minhash')
  AND NOT (classid = 'pg_type'::regclass
           AND (SELECT typcategory FROM pg_type WHERE oid = objid) = 'A')
GROUP BY 1 ORDER BY classid::regclass::text COLLATE "C";

-- 1.0 updated to the current version...
ALTER EXTENSION minhash UPDATE;
SELECT extversion = default_version AS updated_to_default_version
FROM pg_extension JOIN pg_available_extensions ON name = extname
WHERE extname = 'minhash';
CREATE TABLE upd.updated AS SELECT * FROM upd.describe('minhash');

-- ... and a fresh install of the current version
DROP EXTENSION minhash;
CREATE EXTENSION minhash SCHEMA mh;
CREATE TABLE upd.fresh AS SELECT * FROM upd.describe('minhash');

-- The differences: none. A row here names an object that only one of the two
-- has, or the attribute of an object that minhash--1.0--1.1.sql leaves
-- different from src/sql/.
CREATE VIEW upd.differences AS
SELECT object, '(whole object)' AS attribute, 'missing' AS after_update, 'present' AS fresh_install
FROM (SELECT object FROM upd.fresh EXCEPT SELECT object FROM upd.updated) only_fresh
UNION ALL
SELECT object, '(whole object)', 'present', 'missing'
FROM (SELECT object FROM upd.updated EXCEPT SELECT object FROM upd.fresh) only_updated
UNION ALL
SELECT object, attribute, u.value, f.value
FROM upd.updated u FULL JOIN upd.fresh f USING (catalog, object, attribute)
WHERE (u.value IS DISTINCT FROM f.value OR u.object IS NULL OR f.object IS NULL)
  AND object IN (SELECT object FROM upd.updated INTERSECT SELECT object FROM upd.fresh);
SELECT * FROM upd.differences ORDER BY object COLLATE "C", attribute COLLATE "C";

-- Coverage: the comparison saw objects of every kind the extension has, and
-- nothing of a kind describe() does not look into (a new kind must be added
-- to describe(), or it would be compared by name only).
SELECT c AS catalog, EXISTS (SELECT FROM upd.fresh WHERE catalog = c) AS compared
FROM unnest(ARRAY['pg_proc', 'pg_aggregate', 'pg_type', 'pg_operator', 'pg_opclass',
                  'pg_opfamily', 'pg_amop', 'pg_cast', 'pg_am', 'pg_extension',
                  'pg_description', 'pg_init_privs', 'pg_depend', 'object']) c;
SELECT DISTINCT value AS unhandled_catalog
FROM upd.fresh
WHERE catalog = 'object'
  AND value NOT IN ('pg_proc', 'pg_type', 'pg_operator', 'pg_opclass', 'pg_opfamily',
                    'pg_amop', 'pg_amproc', 'pg_cast', 'pg_am');
-- ... and the number of attributes compared is not small
SELECT count(*) > 1000 AS many_attributes, count(DISTINCT object) > 60 AS many_objects
FROM upd.fresh;

-- The comparison can fail: change the fresh install the ways a forgotten or
-- wrong upgrade script would leave it, and describe() sees each change.
CREATE FUNCTION mh.forgotten(mh.minhash) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT 1';
ALTER EXTENSION minhash ADD FUNCTION mh.forgotten(mh.minhash);
ALTER FUNCTION mh.minhash_merge(mh.minhash, mh.minhash) COST 7;
ALTER FUNCTION mh.minhash_num_perm(mh.minhash) STABLE;
ALTER FUNCTION mh.minhash_seed(mh.minhash) PARALLEL RESTRICTED;
ALTER OPERATOR mh.= (mh.minhash, mh.minhash) SET (RESTRICT = scalarltsel);
ALTER OPERATOR FAMILY mh.minhash_ops USING lsh ADD OPERATOR 1 = (bigint, bigint);
COMMENT ON FUNCTION mh.minhash_cardinality(mh.minhash) IS 'changed';
GRANT EXECUTE ON FUNCTION mh.minhash_lsh_check(regclass, bool) TO PUBLIC;
ALTER TYPE mh.minhash SET (STORAGE = extended);
CREATE TABLE upd.changed AS SELECT * FROM upd.describe('minhash');
SELECT * FROM (
SELECT DISTINCT catalog, object,
       CASE WHEN c.object IS NULL THEN '(only before)'
            WHEN f.object IS NULL THEN '(only after)'
            ELSE attribute END AS change
FROM upd.changed c
FULL JOIN upd.fresh f USING (catalog, object, attribute)
WHERE c.value IS DISTINCT FROM f.value
   OR c.object IS NULL OR f.object IS NULL
) d ORDER BY catalog COLLATE "C", object COLLATE "C", change COLLATE "C";

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE regression_minhash_update;
RESET client_min_messages;
