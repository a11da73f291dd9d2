/*
 * minhash_similar_pairs and minhash_clusters on a Citus table: whether the
 * call can run on Citus, checked as one server checks it (pairs_setup.cpp),
 * and what its distributed statements (citus_pairs_run.cpp) need to know:
 * the table's distribution column, the key, keep and text columns as SQL
 * text, the index's band parameters as a reader of the shards sees them.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus_pairs.h"
#include "pg/compat.h"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_index.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_coerce.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
}

[[noreturn]] static void
unsupported(const CitusPairsPlan *plan, const char *what, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s on Citus table \"%s\" does not support %s", plan->funcname,
					get_rel_name(plan->relid), what),
			 errhint("%s", hint)));
}

static const char *
qualified_type(Oid typid, int32 typmod)
{
	return format_type_extended(typid, typmod, FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY);
}

/*
 * COLLATE's argument, schema-qualified: generate_collation_name leaves out
 * the schema of a collation visible on the caller's search_path, and the
 * statements run with another (pg_catalog, pg_temp), where it would name no
 * collation or another one.
 */
static const char *
qualified_collation(Oid collid)
{
	HeapTuple	tp = SearchSysCache1(COLLOID, ObjectIdGetDatum(collid));
	Form_pg_collation coll;
	const char *result;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for collation %u", collid);
	coll = (Form_pg_collation) GETSTRUCT(tp);
	result = quote_qualified_identifier(get_namespace_name(coll->collnamespace), NameStr(coll->collname));
	ReleaseSysCache(tp);
	return result;
}

/* a type with its typmod and, if it has one, COLLATE and its collation */
static const char *
qualified_type_collate(Oid typid, int32 typmod, Oid collid)
{
	const char *type = qualified_type(typid, typmod);

	return OidIsValid(collid) ? psprintf("%s COLLATE %s", type, qualified_collation(collid)) : type;
}

/* the type a domain is defined over (itself a domain, maybe) */
static Oid
immediate_base_type(Oid domain)
{
	HeapTuple	tp = SearchSysCache1(TYPEOID, ObjectIdGetDatum(domain));
	Oid			result;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for type %u", domain);
	result = ((Form_pg_type) GETSTRUCT(tp))->typbasetype;
	ReleaseSysCache(tp);
	return result;
}

/* does the domain itself (not the type it is over) have a CHECK constraint? */
static bool
domain_own_check(Oid domain)
{
	Relation	rel = table_open(ConstraintRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found = false;

	ScanKeyInit(&key, Anum_pg_constraint_contypid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(domain));
	scan = systable_beginscan(rel, ConstraintTypidIndexId, true, NULL, 1, &key);
	while (!found && HeapTupleIsValid(tup = systable_getnext(scan)))
		found = ((Form_pg_constraint) GETSTRUCT(tup))->contype == CONSTRAINT_CHECK;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Does storing a value of typid check a domain's CHECK constraint -- of the
 * type, a domain, or of a domain it holds: its base type, array elements,
 * composite fields, range subtype? Such a constraint is code of some role,
 * and the scratch tables' shards read their values through the types' input
 * functions (text or binary), which check it, as the caller.
 */
static bool
type_checks_domain(Oid typid)
{
	char		typtype;

	check_stack_depth();
	typtype = get_typtype(typid);
	if (typtype == TYPTYPE_DOMAIN)
		return domain_own_check(typid) || type_checks_domain(immediate_base_type(typid));
	if (OidIsValid(get_element_type(typid)))
		return type_checks_domain(get_element_type(typid));
	if (typtype == TYPTYPE_RANGE)
		return type_checks_domain(get_range_subtype(typid));
	if (typtype == TYPTYPE_MULTIRANGE)
		return type_checks_domain(get_multirange_range(typid));
	if (typtype == TYPTYPE_COMPOSITE)
	{
		TupleDesc	desc = lookup_rowtype_tupdesc(typid, -1);
		bool		found = false;

		for (int i = 0; i < desc->natts && !found; i++)
			if (!TupleDescAttr(desc, i)->attisdropped)
				found = type_checks_domain(TupleDescAttr(desc, i)->atttypid);
		ReleaseTupleDesc(desc);
		return found;
	}
	return false;
}

/* OPERATOR(schema.name) of an operator, for statements run with a restricted search_path */
static const char *
qualified_operator(Oid opno)
{
	HeapTuple	tp = SearchSysCache1(OPEROID, ObjectIdGetDatum(opno));
	Form_pg_operator op;
	const char *result;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for operator %u", opno);
	op = (Form_pg_operator) GETSTRUCT(tp);
	result = psprintf("OPERATOR(%s.%s)", quote_identifier(get_namespace_name(op->oprnamespace)),
					  NameStr(op->oprname));
	ReleaseSysCache(tp);
	return result;
}

/*
 * The shards' index parameters for a caller who may read the table but not
 * call minhash_lsh_stats on its shards (their owner's): Citus creates each
 * shard's index with the options of the coordinator's index (an empty shell,
 * whose metapage keeps them), an lsh index's band options cannot change
 * after it is built (lsh_alter.cpp), and an lsh index resolves its bands and
 * rows from those options and the k of its first signature
 * (lsh_choose_bands). So: the shell's options, the k of one
 * signature of the table (read as the caller, through Citus), and the number
 * of shards from Citus's catalog. No signature: num_perm 0, no pairs.
 */
static void
params_as_reader(const CitusPairsPlan *plan, Relation index, MhCitusIndexStats *st)
{
	LshMetaPage meta;
	Buffer		metabuf;
	LshMetaPageData opts;
	int			save_nestlevel;
	bool		isnull;

	memset(st, 0, sizeof(*st));
	st->nshards = list_length(mh_citus_shards(plan->relid, RelationGetRelid(index)));
	metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	opts = *meta;
	UnlockReleaseBuffer(metabuf);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (SPI_execute(psprintf("SELECT %s.minhash_num_perm(t.%s) FROM %s t WHERE t.%s IS NOT NULL LIMIT 1",
							 plan->ext, plan->sig, plan->table, plan->sig), true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read a signature of \"%s\"", get_rel_name(plan->relid));
	if (SPI_processed == 1)
		st->num_perm = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	AtEOXact_GUC(true, save_nestlevel);
	SPI_finish();

	if (st->num_perm > 0 &&
		!lsh_choose_bands(&opts, st->num_perm, &st->bands, &st->rows, &st->threshold))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lsh index \"%s\" has %d bands of %d rows, more values than the %d of its signatures",
						RelationGetRelationName(index), opts.opt_bands, opts.opt_rows, st->num_perm)));
}

/*
 * minhash_clusters' keep column, checked as on one server (pairs_setup.cpp):
 * SELECT on it (42501), then a type with a btree order (42883); it is read
 * as it is stored, so no code of any role runs to read it. Its values travel
 * through step C's scratch table in the base type (with the typmod) of the
 * column's type and in the column's collation: copying a domain's value
 * there checks none of its constraints, which are code of some role.
 */
static void
plan_keep(CitusPairsPlan *plan, Relation heap, const char *name)
{
	AttrNumber	attno = pairs_column_attnum(heap, name, "keep column");
	Form_pg_attribute att;
	int32		typmod;

	if (attno < 0)
		unsupported(plan, "system columns for keep", "Keep by a column of the table.");
	att = TupleDescAttr(RelationGetDescr(heap), attno - 1);
	if (pg_class_aclcheck(plan->relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck(plan->relid, attno, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(heap->rd_rel->relkind),
					   RelationGetRelationName(heap));
	pairs_check_keep_order(name, att->atttypid);
	typmod = att->atttypmod;
	plan->keep_typid = getBaseTypeAndTypmod(att->atttypid, &typmod);
	if (type_checks_domain(plan->keep_typid))
		unsupported(plan, "keep columns of types with a domain's CHECK constraint in their elements or fields",
					"Keep by a column of a type without one.");
	plan->keep_collation = att->attcollation;
	plan->keep = quote_identifier(name);
	plan->keep_type = qualified_type_collate(plan->keep_typid, typmod, plan->keep_collation);
}

/*
 * The key's conversion to key_type runs in the statements, as the caller.
 * One server runs a conversion that calls code of some role (a cast's
 * function, I/O functions, a domain's constraints; not PostgreSQL's own) as
 * the table owner, or refuses it (check_key_code); the shards cannot run it
 * as the owner, so it is refused.
 */
static void
plan_key_code(const CitusPairsPlan *plan, Relation heap, AttrNumber keyattno, Node *keyexpr)
{
	Oid			func;
	Oid			domain;

	if (minhash_runs_user_code(keyexpr, heap, &func, &domain))
		unsupported(plan, "key conversions that call user code",
					psprintf("Pass key_type => NULL::%s to get keys of the column's own type, and convert them in the query.",
							 format_type_be(get_atttype(plan->relid, keyattno))));
}

/*
 * exact => true with text_column, checked as on one server (pairs_setup.cpp):
 * a string-type column, SELECT on it, its conversion to text free of code
 * of other roles. The conversion runs in the statements, as the caller: one
 * that calls the owner's code (which one server runs as the owner) is
 * refused. Shingled with unit and k as given (an index on a column has no
 * expression to take them from, nor a configuration or ignore option).
 */
static void
plan_exact(CitusPairsPlan *plan, const PairsArgs *args, Relation heap)
{
	Var		   *var;
	Node	   *textexpr;
	const char *unit = args->unit != NULL ? text_to_cstring(args->unit) : "word";

	if (args->text_column == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("exact verification needs the text of the rows"),
				 errdetail("Index \"%s\" is not an expression index on minhash(text, ...).",
						   get_rel_name(args->indexoid)),
				 errhint("Pass text_column => 'name of the text column', and unit and k as the signatures were computed with.")));
	var = pairs_text_column(args, heap);
	if (var->varattno < 0)
		unsupported(plan, "system columns as text", "Use a column of the table as the text.");
	if (pg_class_aclcheck(plan->relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck(plan->relid, var->varattno, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(heap->rd_rel->relkind),
					   RelationGetRelationName(heap));
	textexpr = coerce_to_target_type(NULL, (Node *) var, var->vartype, TEXTOID, -1,
									 COERCION_ASSIGNMENT, COERCE_IMPLICIT_CAST, -1);
	if (textexpr == NULL)
		elog(ERROR, "could not convert the text to shingle to type text");
	if (pairs_text_as_owner(args, heap, textexpr))
		unsupported(plan, "text columns converted to text by the table owner's code",
					"Store the text in a column of type text.");
	plan->exact = true;
	plan->text = quote_identifier(args->text_column);
	plan->shingles = psprintf("%d, %s::pg_catalog.text", args->k < 0 ? 0 : args->k, quote_literal_cstr(unit));
	plan->shingle_limit = (int64) pairs_shingle_limit();
}

/* citus_pairs.h */
bool
citus_pairs_plan(const PairsArgs *args, const char *funcname, CitusPairsPlan *plan)
{
	Oid			relid = IndexGetRelation(args->indexoid, true);
	char		method;
	Relation	heap;
	Relation	index;
	AttrNumber	distattno;
	AttrNumber	keyattno;
	Node	   *keyexpr;
	Oid			nsp;
	MhCitusIndexStats st;
	LshIndexParams params;
	Form_pg_attribute dist;
	TypeCacheEntry *tce;
	int32		typmod;
	Oid			basetype;

	if (!OidIsValid(relid) || (method = mh_citus_table_method(relid)) == 0)
		return false;
	memset(plan, 0, sizeof(*plan));
	plan->funcname = funcname;
	plan->relid = relid;
	if (get_rel_relkind(relid) != RELKIND_RELATION)
		unsupported(plan, "partitioned tables",
					"Call it on the index of each partition (pairs across partitions are not found), or distribute an unpartitioned table.");
	if (method != 'h')
		unsupported(plan, method == 'n' ? "reference or local tables" : "range- or append-distributed tables",
					"Distribute the table by hash: SELECT create_distributed_table(table, column).");

	heap = table_open(relid, AccessShareLock);
	index = index_open(args->indexoid, AccessShareLock);
	pairs_check_index(index);
	if (!args->exact && (args->text_column != NULL || args->unit != NULL || args->k >= 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("text_column, unit and k are used only with exact => true")));
	if (index->rd_index->indnatts != 1 || index->rd_index->indkey.values[0] == 0 ||
		!heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL))
		unsupported(plan, "expression or partial indexes",
					"Store the signature in a column (ALTER TABLE ... ADD COLUMN sig minhash GENERATED ALWAYS AS (minhash(body)) STORED) and index that column.");
	if (check_enable_rls(relid, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support tables with row-level security", funcname),
				 errdetail("Row-level security is enabled for table \"%s\".",
						   RelationGetRelationName(heap))));

	nsp = RelationGetNamespace(heap);
	plan->table = quote_qualified_identifier(get_namespace_name(nsp), RelationGetRelationName(heap));
	plan->sig = quote_identifier(get_attname(relid, index->rd_index->indkey.values[0], false));
	distattno = mh_citus_distribution_column(relid);
	if (distattno <= 0)
		elog(ERROR, "could not find the distribution column of \"%s\"", RelationGetRelationName(heap));
	dist = TupleDescAttr(RelationGetDescr(heap), distattno - 1);
	plan->dist = quote_identifier(NameStr(dist->attname));
	/*
	 * The scratch tables colocated with the table need its distribution
	 * column's type, domain included: its CHECK would run as the caller
	 */
	if (type_checks_domain(dist->atttypid))
		unsupported(plan, "distribution columns of types with a domain's CHECK constraint",
					"Distribute the table by a column of a type without one (the domain's base type), and check the values with a CHECK constraint of the table.");
	plan->dist_type = qualified_type_collate(dist->atttypid, dist->atttypmod, dist->attcollation);
	tce = lookup_type_cache(dist->atttypid, TYPECACHE_EQ_OPR | TYPECACHE_LT_OPR);
	if (!OidIsValid(tce->eq_opr) || !OidIsValid(tce->lt_opr))
		unsupported(plan, "distribution columns without a btree order",
					"Distribute the table by a column of a type with a btree operator class.");
	plan->dist_eq = qualified_operator(tce->eq_opr);

	/* the key, coerced as on one server */
	keyattno = pairs_column_attnum(heap, args->key_column, "key column");
	if (keyattno < 0)
		unsupported(plan, "system columns as keys", "Use a column of the table as the key.");
	keyexpr = pairs_key_coercion(args, heap, keyattno);
	plan_key_code(plan, heap, keyattno, keyexpr);
	plan->key_collation = exprCollation(keyexpr);
	plan->key = quote_identifier(args->key_column);
	plan->key_typid = args->key_type;
	plan->key_type = qualified_type(args->key_type, -1);
	/*
	 * The scratch table's keys compare (LEAST, GREATEST) in the key's
	 * collation, and are stored in key_type's base type: storing a domain's
	 * value would check its constraints, code of some role, as the caller
	 */
	typmod = -1;
	basetype = getBaseTypeAndTypmod(args->key_type, &typmod);
	if (type_checks_domain(basetype))
		unsupported(plan, "keys of types with a domain's CHECK constraint in their elements or fields",
					"Pass key_type => NULL::bigint, or another type without one, and convert the keys in the query.");
	plan->key_column = qualified_type_collate(basetype, typmod, plan->key_collation);
	tce = lookup_type_cache(args->key_type, TYPECACHE_LT_OPR);
	plan->key_ordered = OidIsValid(tce->lt_opr);
	if (args->keep_column != NULL)
		plan_keep(plan, heap, args->keep_column);
	if (args->exact)
		plan_exact(plan, args, heap);
	plan->ext = quote_identifier(get_namespace_name(args->ext_namespace));
	plan->threshold = args->threshold;

	/*
	 * The scratch tables are written: not in a read-only transaction, nor
	 * on a standby (whose transactions are all read-only), where creating
	 * the first would fail with an error about a statement the caller did
	 * not write
	 */
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s on Citus table \"%s\" cannot run during recovery", funcname,
						RelationGetRelationName(heap)),
				 errdetail("It computes the pairs in scratch tables distributed over the workers, created in the table's schema and dropped before it returns."),
				 errhint("Call it on the primary coordinator.")));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s on Citus table \"%s\" cannot run in a read-only transaction", funcname,
						RelationGetRelationName(heap)),
				 errdetail("It computes the pairs in scratch tables distributed over the workers, created in the table's schema and dropped before it returns."),
				 errhint("Call it in a read-write transaction (BEGIN READ WRITE, or default_transaction_read_only = off).")));

	/* the scratch tables go beside the table: the caller must be able to create there */
	if (mh_namespace_aclcheck(nsp, GetUserId(), ACL_CREATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s on Citus table \"%s\" needs CREATE on schema \"%s\"", funcname,
						RelationGetRelationName(heap), get_namespace_name(nsp)),
				 errdetail("It computes the pairs in scratch tables distributed over the workers, created in the table's schema and dropped before it returns.")));
	plan->scratch_nsp = nsp;

	/*
	 * The shards' index parameters, and the probe depth at the threshold.
	 * The owner reads them off the shards' indexes (minhash_lsh_stats, which
	 * also checks that they agree); a caller with SELECT only, as one
	 * server's pairs need, gets them as the shards' indexes chose them (below).
	 */
	if (mh_class_ownercheck(relid, GetUserId()))
		mh_citus_index_stats(relid, args->indexoid, args->ext_namespace, &st);
	else
		params_as_reader(plan, index, &st);
	plan->nshards = st.nshards;
	plan->bands = st.bands;
	plan->rows = st.rows;
	if (st.num_perm > 0)
	{
		memset(&params, 0, sizeof(params));
		params.num_perm = st.num_perm;
		params.bands = st.bands;
		params.rows = st.rows;
		params.version = LSH_VERSION;
		plan->depth = lsh_probe_depth(&params, plan->threshold);
	}

	index_close(index, NoLock);
	table_close(heap, NoLock);
	return true;
}
