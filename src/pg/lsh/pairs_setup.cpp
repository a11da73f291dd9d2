/*
 * Setting up an all-pairs run: argument checks, the index and its table,
 * privileges, and the two expressions evaluated on each row -- the key
 * column (coerced to the type the keys are returned as) and, for exact
 * verification, the text to shingle.
 *
 * The text comes from text_column when given. Otherwise, for an expression
 * index on minhash(<text expression>, unit, k, ...), it is that text
 * expression, shingled with the index's own unit and k: exact => true then
 * needs nothing more from the user.
 */
#include "pg/lsh/pairs.h"

extern "C" {
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_index.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parse_collate.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
}

/* threshold argument: NULL means the GUC minhash.similarity_threshold */
static double
pairs_threshold_arg(FunctionCallInfo fcinfo, int argno)
{
	double		t;

	if (PG_ARGISNULL(argno))
		return minhash_threshold();
	t = PG_GETARG_FLOAT8(argno);
	if (!(t >= 0.0 && t <= 1.0))	/* also rejects NaN */
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("threshold must be between 0 and 1, not %g", t),
				 errhint("NULL (the default) uses minhash.similarity_threshold.")));
	return t;
}

static const char *
pairs_name_arg(FunctionCallInfo fcinfo, int argno, const char *what, bool required)
{
	if (PG_ARGISNULL(argno))
	{
		if (required)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be NULL", what)));
		return NULL;
	}
	return pstrdup(NameStr(*PG_GETARG_NAME(argno)));
}

/*
 * The arguments both functions share: (index, key_column[, key_type], ...,
 * threshold at threshold_arg, ..., exact, text_column, unit, k from exact_arg).
 * The polymorphic variants return keys of key_type's type, the others bigint.
 */
void
pairs_parse_args(FunctionCallInfo fcinfo, PairsArgs *args, const char *funcname,
				 bool polymorphic, int threshold_arg, int exact_arg)
{
	memset(args, 0, sizeof(PairsArgs));
	args->funcname = funcname;
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("index must not be NULL")));
	args->indexoid = PG_GETARG_OID(0);
	args->key_column = pairs_name_arg(fcinfo, 1, "key_column", true);
	if (polymorphic)
	{
		args->key_type = get_fn_expr_argtype(fcinfo->flinfo, 2);
		if (!OidIsValid(args->key_type))
			elog(ERROR, "could not determine the type of key_type");
	}
	else
		args->key_type = INT8OID;
	args->threshold = pairs_threshold_arg(fcinfo, threshold_arg);
	args->exact = !PG_ARGISNULL(exact_arg) && PG_GETARG_BOOL(exact_arg);
	args->text_column = pairs_name_arg(fcinfo, exact_arg + 1, "text_column", false);
	args->unit = PG_ARGISNULL(exact_arg + 2) ? NULL : PG_GETARG_TEXT_PP(exact_arg + 2);
	args->k = -1;
	if (!PG_ARGISNULL(exact_arg + 3))
	{
		args->k = PG_GETARG_INT32(exact_arg + 3);
		if (args->k < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("shingle size k must be between 1 and %d, not %d",
							minhash::kMaxShingleSize, args->k),
					 errhint("k = 0 selects the unit's default; NULL, that of the index expression.")));
	}
	args->ext_namespace = get_func_namespace(fcinfo->flinfo->fn_oid);
}

static AttrNumber
column_attnum(Relation heap, const char *name, const char *what)
{
	AttrNumber	attnum = get_attnum(RelationGetRelid(heap), name);

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("%s \"%s\" of relation \"%s\" does not exist",
						what, name, RelationGetRelationName(heap))));
	return attnum;
}

/* Var of the heap's column attnum (varno 1, as index expressions reference the heap) */
static Var *
column_var(Relation heap, AttrNumber attnum)
{
	Oid			typid;
	int32		typmod;
	Oid			collid;

	get_atttypetypmodcoll(RelationGetRelid(heap), attnum, &typid, &typmod, &collid);
	return makeVar(1, attnum, typid, typmod, collid, 0);
}

/*
 * The text argument of an index expression minhash(<text>, unit, k, num_perm,
 * seed) from this extension, or NULL if the index is not one. Defaults are
 * expanded and constants folded in stored index expressions, so unit and k
 * are Consts when they are constants at all.
 */
static FuncExpr *
minhash_text_call(Relation index, Oid ext_namespace)
{
	List	   *exprs;
	Node	   *expr;
	FuncExpr   *f;
	Oid			argtype;

	if (index->rd_index->indkey.values[0] != 0)
		return NULL;			/* a plain column */
	exprs = RelationGetIndexExpressions(index);
	if (exprs == NIL)
		return NULL;
	expr = (Node *) linitial(exprs);
	while (IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	if (!IsA(expr, FuncExpr))
		return NULL;
	f = (FuncExpr *) expr;
	if (list_length(f->args) != 5 || get_func_namespace(f->funcid) != ext_namespace)
		return NULL;
	{
		char	   *name = get_func_name(f->funcid);

		if (name == NULL || strcmp(name, "minhash") != 0)
			return NULL;
	}
	argtype = exprType((Node *) linitial(f->args));
	if (argtype != TEXTOID && argtype != VARCHAROID && argtype != BPCHAROID)
		return NULL;
	return f;
}

/*
 * The text expression and shingle spec of exact mode. Called as the table's
 * owner (minhash_owner_begin): the index expression is loaded, folded and
 * prepared here, and its functions may run while doing so.
 */
static void
setup_exact(PairsRun *run, Oid ext_namespace)
{
	const PairsArgs *args = &run->args;
	FuncExpr   *call = minhash_text_call(run->index, ext_namespace);
	Node	   *textexpr = NULL;
	text	   *unit = args->unit;
	int32		k = args->k;

	if (args->text_column != NULL)
	{
		AttrNumber	attnum = column_attnum(run->heap, args->text_column, "text column");
		Var		   *var = column_var(run->heap, attnum);

		if (TypeCategory(var->vartype) != TYPCATEGORY_STRING)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("text column \"%s\" is of type %s, not a string type",
							args->text_column, format_type_be(var->vartype)),
					 errhint("Index an expression such as minhash(%s::text): exact => true then shingles that expression.",
							 args->text_column)));
		textexpr = (Node *) var;
	}
	else if (call != NULL)
	{
		textexpr = (Node *) linitial(call->args);
		run->text_as_owner = true;
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("exact verification needs the text of the rows"),
				 errdetail("Index \"%s\" is not an expression index on minhash(text, ...).",
						   RelationGetRelationName(run->index)),
				 errhint("Pass text_column => 'name of the text column', and unit and k as the signatures were computed with.")));

	if (call != NULL)
	{
		Node	   *u = (Node *) lsecond(call->args);
		Node	   *kk = (Node *) lthird(call->args);

		if (unit == NULL && IsA(u, Const) && !((Const *) u)->constisnull)
			unit = DatumGetTextPP(((Const *) u)->constvalue);
		if (k < 0 && IsA(kk, Const) && !((Const *) kk)->constisnull)
			k = DatumGetInt32(((Const *) kk)->constvalue);
	}
	if (unit == NULL)
		unit = cstring_to_text("word");
	run->spec = minhash_shingle_spec(unit, k < 0 ? 0 : k);

	textexpr = coerce_to_target_type(NULL, textexpr, exprType(textexpr), TEXTOID, -1,
									 COERCION_ASSIGNMENT, COERCE_IMPLICIT_CAST, -1);
	if (textexpr == NULL)
		elog(ERROR, "could not convert the text to shingle to type text");
	assign_expr_collations(NULL, textexpr);
	run->text_expr = ExecPrepareExpr((Expr *) textexpr, run->estate);
}

/*
 * Every column of the table the index reads -- its key column or the
 * columns of its expression, and those of a partial index's predicate --
 * from pg_index itself (nodeToString form, before constant folding, so
 * nothing runs to learn them). 0 stands for a whole-row reference.
 */
static void
index_columns(Relation index, Bitmapset **used)
{
	static const AttrNumber fields[] = {Anum_pg_index_indexprs, Anum_pg_index_indpred};
	int2vector *indkey = &index->rd_index->indkey;

	for (int i = 0; i < indkey->dim1; i++)
		if (indkey->values[i] != 0)
			*used = bms_add_member(*used, indkey->values[i] - FirstLowInvalidHeapAttributeNumber);
	for (AttrNumber field : fields)
	{
		bool		isnull;
		Datum		d = SysCacheGetAttr(INDEXRELID, index->rd_indextuple, field, &isnull);

		if (!isnull)
			pull_varattnos((Node *) stringToNode(TextDatumGetCString(d)), 1, used);
	}
}

/*
 * Reading rows through this function must not bypass what a plain SELECT
 * would enforce: USAGE on the table's schema (a SELECT could not even name
 * the table), SELECT on every column it reads (key, text, every column the
 * index reads, its predicate's included: the result tells which rows satisfy
 * it), and no row-level security (the walk cannot apply policies). Checked
 * as the caller, before any user code runs.
 */
static void
check_privileges(PairsRun *run, Bitmapset *used)
{
	Oid			relid = RelationGetRelid(run->heap);
	Oid			nspid = RelationGetNamespace(run->heap);
	Oid			userid = GetUserId();
	int			i = -1;

	if (pg_namespace_aclcheck(nspid, userid, ACL_USAGE) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_SCHEMA, get_namespace_name(nspid));
	if (check_enable_rls(relid, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support tables with row-level security",
						run->args.funcname),
				 errdetail("Row-level security is enabled for table \"%s\".",
						   RelationGetRelationName(run->heap))));
	if (pg_class_aclcheck(relid, userid, ACL_SELECT) == ACLCHECK_OK)
		return;
	while ((i = bms_next_member(used, i)) >= 0)
	{
		AttrNumber	attnum = i + FirstLowInvalidHeapAttributeNumber;
		AclResult	result;

		if (attnum == InvalidAttrNumber)	/* the whole row: every column */
			result = pg_attribute_aclcheck_all(relid, userid, ACL_SELECT, ACLMASK_ALL);
		else
			result = pg_attribute_aclcheck(relid, attnum, userid, ACL_SELECT);
		if (result != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(run->heap->rd_rel->relkind),
						   RelationGetRelationName(run->heap));
	}
}

void
pairs_begin(PairsRun *run, const PairsArgs *args)
{
	MemoryContext oldcxt;
	char		relkind = get_rel_relkind(args->indexoid);
	Oid			heapoid;
	AttrNumber	keyattnum;
	Var		   *keyvar;
	Node	   *keyexpr;
	Bitmapset  *used = NULL;
	LshMetaPage meta;
	Buffer		metabuf;
	TypeCacheEntry *tce;

	memset((void *) run, 0, sizeof(PairsRun));
	run->args = *args;
	run->cxt = AllocSetContextCreate(CurrentMemoryContext, "minhash pairs", ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(run->cxt);

	if (relkind != RELKIND_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an lsh index",
						relkind ? get_rel_name(args->indexoid) : "(dropped relation)")));
	heapoid = IndexGetRelation(args->indexoid, false);
	/* the table first, as the executor locks them */
	run->heap = table_open(heapoid, AccessShareLock);
	run->index = index_open(args->indexoid, AccessShareLock);
	if (run->index->rd_indam->ambuild != lshbuild)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an lsh index", RelationGetRelationName(run->index))));
	if (!run->index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lsh index \"%s\" is not valid", RelationGetRelationName(run->index)),
				 errdetail("It may miss rows: its build failed or is in progress."),
				 errhint("REINDEX the index.")));

	/* what the call reads, checked before anything is evaluated */
	keyattnum = column_attnum(run->heap, args->key_column, "key column");
	used = bms_add_member(used, keyattnum - FirstLowInvalidHeapAttributeNumber);
	if (args->exact && args->text_column != NULL)
		used = bms_add_member(used, column_attnum(run->heap, args->text_column, "text column") -
							  FirstLowInvalidHeapAttributeNumber);
	index_columns(run->index, &used);
	check_privileges(run, used);

	run->estate = CreateExecutorState();
	run->econtext = GetPerTupleExprContext(run->estate);

	/*
	 * The key, coerced to the type it is returned as: what the caller asked
	 * for, evaluated as the caller (a SELECT of the column would run the
	 * same coercion).
	 */
	keyvar = column_var(run->heap, keyattnum);
	keyexpr = coerce_to_target_type(NULL, (Node *) keyvar, keyvar->vartype, args->key_type, -1,
									COERCION_ASSIGNMENT, COERCE_IMPLICIT_CAST, -1);
	if (keyexpr == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("key column \"%s\" is of type %s, which cannot be returned as %s",
						args->key_column, format_type_be(keyvar->vartype),
						format_type_be(args->key_type)),
				 errhint("Pass key_type => NULL::%s to get keys of the column's own type.",
						 format_type_be(keyvar->vartype))));
	/* a coercion (say int to text) comes without a collation until assigned one */
	assign_expr_collations(NULL, keyexpr);
	run->key_expr = ExecPrepareExpr((Expr *) keyexpr, run->estate);
	run->key_collation = exprCollation(keyexpr);
	get_typlenbyval(args->key_type, &run->key_typlen, &run->key_typbyval);
	tce = lookup_type_cache(args->key_type, TYPECACHE_CMP_PROC_FINFO);
	if (OidIsValid(tce->cmp_proc))
	{
		fmgr_info_cxt(tce->cmp_proc, &run->key_cmp, run->cxt);
		run->key_has_cmp = true;
	}

	if (args->exact)
	{
		MinhashOwnerContext owner;

		minhash_owner_begin(run->heap, &owner);
		setup_exact(run, args->ext_namespace);
		minhash_owner_end(&owner);
	}
	else if (args->text_column != NULL || args->unit != NULL || args->k >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("text_column, unit and k are used only with exact => true")));

	/* the snapshot of the calling query decides which rows exist */
	run->snapshot = GetActiveSnapshot();
	run->fetch = table_index_fetch_begin(run->heap);
	run->slot = table_slot_create(run->heap, NULL);

	metabuf = lsh_read_meta(run->index, BUFFER_LOCK_SHARE, &meta);
	lsh_meta_params(meta, &run->params);
	run->leftmost = meta->leftmost;
	UnlockReleaseBuffer(metabuf);
	/*
	 * A row visible to our snapshot was indexed before the walk starts, and
	 * VACUUM cannot free its slot while we hold the snapshot: its row id is
	 * below this bound.
	 */
	run->nblocks = RelationGetNumberOfBlocks(run->index);
	run->nrowids = (uint64) run->nblocks * run->params.slots_per_page;

	/* a quarter of work_mem for one group's signatures; the row cache has half */
	run->budget = (Size) work_mem * 1024 / 4;
	pairs_cache_init(run);
	MemoryContextSwitchTo(oldcxt);
}

void
pairs_end(PairsRun *run)
{
	ExecDropSingleTupleTableSlot(run->slot);
	table_index_fetch_end(run->fetch);
	FreeExecutorState(run->estate);
	/* locks are kept to the end of the transaction, as for any table read */
	index_close(run->index, NoLock);
	table_close(run->heap, NoLock);
	MemoryContextDelete(run->cxt);
}

/* btree order of keys when the type has one, else equal */
int
pairs_compare_keys(PairsRun *run, Datum a, Datum b)
{
	if (run->args.key_type == INT8OID)
	{
		int64		x = DatumGetInt64(a);
		int64		y = DatumGetInt64(b);

		return x < y ? -1 : (x > y ? 1 : 0);
	}
	if (!run->key_has_cmp)
		return 0;
	return DatumGetInt32(FunctionCall2Coll(&run->key_cmp, run->key_collation, a, b));
}
