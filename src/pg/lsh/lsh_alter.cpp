/*
 * ALTER INDEX ... SET / RESET of an lsh index's build options.
 *
 * bands, rows, threshold, fp_weight and fn_weight fix the index's band
 * layout when it is built, verify_bits its data slots (the metapage keeps
 * what was built). Changing them
 * afterwards would leave pg_class.reloptions describing another index than
 * the one on disk -- and pg_dump writes reloptions, so a restore would
 * silently build that other index. PostgreSQL gives an access method no
 * say in ALTER (amoptions validates the new list exactly as for CREATE
 * INDEX, without the relation), so the change is refused here, from the
 * post-alter hook PostgreSQL runs right after it writes the new reloptions
 * (ATExecSetRelOptions). The hook is always in place by then: opening the
 * index to alter it loads this library, through the access method's handler.
 *
 * A change that leaves every option as it was (SET to the same value) goes
 * through. To rebuild with other options: CREATE INDEX CONCURRENTLY ... WITH
 * (...), then DROP INDEX the old one.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
}

static object_access_hook_type prev_object_access_hook = NULL;

/* the options as parsed (NULL: none given) or their "not given" values */
static LshOptions
options_or_defaults(const LshOptions *o)
{
	LshOptions	d;

	memset(&d, 0, sizeof(d));
	d.threshold = o ? o->threshold : -1;
	d.bands = o ? o->bands : 0;
	d.rows = o ? o->rows : 0;
	d.fp_weight = o ? o->fp_weight : -1;
	d.fn_weight = o ? o->fn_weight : -1;
	d.verify_bits = o ? o->verify_bits : 0;
	return d;
}

/* reloptions of relid as this command just wrote them (SnapshotSelf: not yet visible to others) */
static LshOptions
new_options(Oid relid)
{
	Relation	pgclass = table_open(RelationRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	LshOptions	result;
	LshOptions *parsed = NULL;

	ScanKeyInit(&key, Anum_pg_class_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(pgclass, ClassOidIndexId, true, SnapshotSelf, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, Anum_pg_class_reloptions, RelationGetDescr(pgclass),
									 &isnull);

		if (!isnull)
			parsed = (LshOptions *) lshoptions(d, false);
	}
	result = options_or_defaults(parsed);
	systable_endscan(scan);
	table_close(pgclass, AccessShareLock);
	return result;
}

static void
lsh_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	Relation	index;
	LshOptions	before;
	LshOptions	after;
	char		relkind;

	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_POST_ALTER || classId != RelationRelationId || subId != 0)
		return;
	relkind = get_rel_relkind(objectId);
	if (relkind != RELKIND_INDEX && relkind != RELKIND_PARTITIONED_INDEX)
		return;
	index = RelationIdGetRelation(objectId);
	if (!RelationIsValid(index))
		return;
	if (!lsh_is_lsh_index(index))
	{
		RelationClose(index);
		return;
	}
	/* the relcache entry still holds the options from before this command */
	before = options_or_defaults((const LshOptions *) index->rd_options);
	after = new_options(objectId);
	if (before.threshold != after.threshold || before.bands != after.bands ||
		before.rows != after.rows || before.fp_weight != after.fp_weight ||
		before.fn_weight != after.fn_weight || before.verify_bits != after.verify_bits)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the options of lsh index \"%s\"",
						RelationGetRelationName(index)),
				 errdetail("bands, rows, threshold, fp_weight and fn_weight fix the index's bands when it "
						   "is built, verify_bits its signature store; the index would keep them while its "
						   "definition, and so pg_dump, described another index."),
				 errhint("Build a new index with the new options (CREATE INDEX CONCURRENTLY ... WITH (...)), "
						 "then drop this one.")));
	RelationClose(index);
}

void
lsh_alter_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = lsh_object_access;
}
