/*
 * Setting up an all-pairs run: argument checks, the index and its table,
 * privileges, and the two expressions evaluated on each row -- the key
 * column (coerced to the type the keys are returned as) and, for exact
 * verification, the text to shingle.
 *
 * A partitioned index is walked as the merge of its partitions' indexes
 * (pairs_walk.cpp): each partition is set up here as a part of the run,
 * with its own key and text expressions (a partition's columns may have
 * other numbers than the parent's), and every partition's index must share
 * the parameters that make band keys comparable.
 *
 * The text comes from text_column when given. Otherwise, for an expression
 * index on minhash(<text expression>, unit, k, ...), it is that text
 * expression, shingled with the index's own unit and k: exact => true then
 * needs nothing more from the user.
 */
#include "pg/pg_prelude.h"

#include "pg/pairs/pairs.h"

extern "C" {
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parse_collate.h"
#include "storage/predicate.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
}

/* threshold argument: NULL means the GUC minhash.similarity_threshold */
double
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

const char *
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
 * The unit argument of exact verification, checked here rather than by
 * minhash_shingle_spec(), whose hints are about minhash()'s own arguments
 * (config =>, ignore =>, the document passed second): the pairs functions
 * take none of those, they read them from the index expression. A value is
 * echoed cut to 40 bytes, as there.
 */
static void
check_unit_arg(text *unit)
{
	char	   *name = text_to_cstring(unit);
	minhash::ShingleUnit parsed;

	if (!minhash::parse_shingle_unit(name, &parsed))
	{
		int			len = strlen(name);
		int			shown = pg_mbcliplen(name, len, 40);

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown shingle unit \"%.*s%s\"", shown, name, shown < len ? "..." : ""),
				 errhint("Valid units are \"word\", \"char\" and \"char_nospace\"; a text search configuration or ignore option is read from the index expression, such as minhash(body, config => 'english').")));
	}
	pfree(name);
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
	if (args->unit != NULL)
		check_unit_arg(args->unit);
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

/* a column of the table by name (what: "key column", ... for the message) */
AttrNumber
pairs_column_attnum(Relation heap, const char *name, const char *what)
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
 * seed), minhash(<text>, config regconfig, [bits, family,] k, num_perm,
 * seed[, family]), minhash(<text>, family, unit, k, num_perm, seed),
 * minhash(<text>, bits, family, unit, k, ...) or minhash(<text>, ignore,
 * bits, family, unit, k, ...) from this extension, or
 * NULL if the index is not one. Defaults are
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
	if (list_length(f->args) < 5 || list_length(f->args) > 8 ||
		get_func_namespace(f->funcid) != ext_namespace)
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
 * text_column of exact mode in a table: a string-type column (42804
 * otherwise). Also for Citus tables (citus_pairs_plan.cpp).
 */
Var *
pairs_text_column(const PairsArgs *args, Relation heap)
{
	AttrNumber	attnum = pairs_column_attnum(heap, args->text_column, "text column");
	Var		   *var = column_var(heap, attnum);

	if (TypeCategory(var->vartype) != TYPCATEGORY_STRING)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("text column \"%s\" is of type %s, not a string type",
						args->text_column, format_type_be(var->vartype)),
				 errhint("Index an expression such as minhash(%s::text): exact => true then shingles that expression.",
						 args->text_column)));
	return var;
}

/*
 * text_column's conversion to text, as the key's (check_key_code): code of
 * a role other than the table owner's or a superuser's is refused (42501);
 * true if it calls the owner's code, which must then run as the owner.
 */
bool
pairs_text_as_owner(const PairsArgs *args, Relation heap, Node *textexpr)
{
	Oid			func;
	Oid			domain;
	bool		as_owner = minhash_runs_user_code(textexpr, heap, &func, &domain);

	if (OidIsValid(func) || OidIsValid(domain))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("text column \"%s\" cannot be converted to text by %s",
						args->text_column, args->funcname),
				 errdetail("The conversion calls code of a role that is neither the owner of table \"%s\" nor a superuser.",
						   RelationGetRelationName(heap))));
	return as_owner;
}

/* The text expression and shingle spec of exact mode. */
static void
setup_exact(PairsRun *run, PairsPart *part, Oid ext_namespace, Bitmapset **used)
{
	const PairsArgs *args = &run->args;
	FuncExpr   *call = minhash_text_call(part->index, ext_namespace);
	Node	   *textexpr = NULL;
	text	   *unit = args->unit;
	int32		k = args->k;
	int			unit_arg = 1;	/* positions of unit (or config) and k in the call */
	int			k_arg = 2;
	int			ignore_arg = -1;	/* and of ignore, if the call has it */
	uint8		ignore = 0;

	run->text_config = InvalidOid;
	if (call != NULL && list_length(call->args) > 5)
	{
		int			nargs = list_length(call->args);
		Oid			second = exprType((Node *) lsecond(call->args));

		if (second == REGCONFIGOID)
		{
			unit_arg = -1;		/* words from a text search configuration */
			k_arg = nargs == 6 ? 2 : 4;	/* (doc, config, [bits, family,] k, ...) */
		}
		else if (nargs == 6)
		{
			unit_arg = 2;		/* minhash(text, family, unit, k, ...) */
			k_arg = 3;
		}
		else if (nargs == 7)
		{
			unit_arg = 3;		/* minhash(text, bits, family, unit, k, ...) */
			k_arg = 4;
		}
		else
		{
			ignore_arg = 1;		/* minhash(text, ignore, bits, family, unit, k, ...) */
			unit_arg = 4;
			k_arg = 5;
		}
	}

	if (args->text_column != NULL)
		textexpr = (Node *) pairs_text_column(args, part->heap);
	else if (call != NULL)
	{
		textexpr = (Node *) linitial(call->args);
		part->text_as_owner = true;
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("exact verification needs the text of the rows"),
				 errdetail("Index \"%s\" is not an expression index on minhash(text, ...).",
						   RelationGetRelationName(part->index)),
				 errhint("Pass text_column => 'name of the text column', and unit and k as the signatures were computed with.")));

	if (call != NULL)
	{
		Node	   *kk = (Node *) list_nth(call->args, k_arg);

		if (unit_arg < 0)
		{
			Node	   *cfg = (Node *) lsecond(call->args);

			/* the index's configuration, unless the caller names a unit */
			if (unit == NULL && IsA(cfg, Const) && !((Const *) cfg)->constisnull)
				run->text_config = DatumGetObjectId(((Const *) cfg)->constvalue);
			else if (unit == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("exact verification needs a constant text search configuration"),
						 errhint("Pass unit and k as the signatures were computed with.")));
		}
		else
		{
			Node	   *u = (Node *) list_nth(call->args, unit_arg);

			if (unit == NULL && IsA(u, Const) && !((Const *) u)->constisnull)
				unit = DatumGetTextPP(((Const *) u)->constvalue);
		}
		if (k < 0 && IsA(kk, Const) && !((Const *) kk)->constisnull)
			k = DatumGetInt32(((Const *) kk)->constvalue);
		if (ignore_arg >= 0)
		{
			/* what the signatures leave out, the shingles must leave out too */
			Node	   *ig = strip_implicit_coercions((Node *) list_nth(call->args, ignore_arg));

			if (!IsA(ig, Const) || ((Const *) ig)->constisnull)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("exact verification needs a constant ignore argument"),
						 errdetail("The expression of index \"%s\" computes what to ignore.",
								   RelationGetRelationName(part->index))));
			ignore = minhash_ignore_arg(DatumGetTextPP(((Const *) ig)->constvalue));
		}
	}
	if (unit == NULL)
		unit = cstring_to_text("word");
	run->spec = minhash_shingle_spec(unit, k < 0 ? 0 : k);
	run->spec.ignore = ignore;
	if (OidIsValid(run->text_config))
		run->spec.k = minhash_lexeme_k(k < 0 ? 0 : k);

	textexpr = coerce_to_target_type(NULL, textexpr, exprType(textexpr), TEXTOID, -1,
									 COERCION_ASSIGNMENT, COERCE_IMPLICIT_CAST, -1);
	if (textexpr == NULL)
		elog(ERROR, "could not convert the text to shingle to type text");
	if (!part->text_as_owner)
		part->text_as_owner = pairs_text_as_owner(args, part->heap, textexpr);
	assign_expr_collations(NULL, textexpr);
	pull_varattnos(textexpr, 1, used);
	part->text_expr = ExecPrepareExpr((Expr *) textexpr, run->estate);
}

/*
 * The indexed signature of a part's rows, for an index that rechecks against
 * the table (heap_verify): its column, or its expression, which is the table
 * owner's code (loaded and prepared as the owner, run as the owner). The
 * index's columns are among those whose privileges setup_part checks.
 */
static void
setup_signature(PairsRun *run, PairsPart *part)
{
	AttrNumber	attnum = part->index->rd_index->indkey.values[0];

	if (attnum != 0)
		part->sig_expr = ExecPrepareExpr((Expr *) column_var(part->heap, attnum), run->estate);
	else
	{
		MinhashOwnerContext owner;

		minhash_owner_begin(part->heap, &owner);
		part->sig_expr = ExecPrepareExpr((Expr *) linitial(RelationGetIndexExpressions(part->index)),
										 run->estate);
		minhash_owner_end(&owner);
		part->sig_as_owner = true;
	}
}

/*
 * Reading rows through this function must not bypass what a plain SELECT
 * would enforce: SELECT on every column it reads (key, text, the indexed
 * signature), and no row-level security (the walk cannot apply policies).
 */
static void
check_privileges(PairsRun *run, Relation heap, Bitmapset *used)
{
	Oid			relid = RelationGetRelid(heap);
	Oid			nspid = RelationGetNamespace(heap);
	Oid			userid = GetUserId();
	int			i = -1;

	if (mh_namespace_aclcheck(nspid, userid, ACL_USAGE) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_SCHEMA, get_namespace_name(nspid));
	if (check_enable_rls(relid, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support tables with row-level security",
						run->args.funcname),
				 errdetail("Row-level security is enabled for table \"%s\".",
						   RelationGetRelationName(heap))));
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
			aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(heap->rd_rel->relkind),
						   RelationGetRelationName(heap));
	}
}

/* the index the call names is an lsh index that has every row its snapshot sees */
void
pairs_check_index(Relation index)
{
	if (!lsh_is_lsh_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an lsh index", RelationGetRelationName(index))));
	/* what made it invalid decides what mends it */
	if (!index->rd_index->indisvalid && index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lsh index \"%s\" is not valid", RelationGetRelationName(index)),
				 errdetail("A partitioned index is valid once a valid index of every partition is attached to it; one created ON ONLY the table starts without them."),
				 errhint("Attach each partition's lsh index with ALTER INDEX ... ATTACH PARTITION, or create the index without ONLY.")));
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lsh index \"%s\" is not valid", RelationGetRelationName(index)),
				 errdetail("It may miss rows: a CREATE INDEX, REINDEX or DROP INDEX CONCURRENTLY of it failed, was interrupted or is in progress."),
				 errhint("REINDEX the index, or drop it.")));
	if (lsh_index_too_new(index, GetActiveSnapshot()))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("lsh index \"%s\" is too new for this transaction's snapshot",
						RelationGetRelationName(index)),
				 errdetail("The index was built after the snapshot was taken, without the older versions of rows updated meanwhile that the snapshot sees."),
				 errhint("Run the query in a new transaction.")));
}

/*
 * The key column attnum of a table coerced to the type keys are returned as
 * (an assignment cast, as INSERT would apply), with its collation.
 */
Node *
pairs_key_coercion(const PairsArgs *args, Relation heap, AttrNumber attnum)
{
	Var		   *keyvar = column_var(heap, attnum);
	Node	   *keyexpr;

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
	return keyexpr;
}

/*
 * The key expression of a table (the key column by name, coerced), adding
 * the columns it reads to *used.
 */
static Node *
key_expression(PairsRun *run, Relation heap, Bitmapset **used)
{
	const PairsArgs *args = &run->args;
	Node	   *keyexpr = pairs_key_coercion(args, heap,
											 pairs_column_attnum(heap, args->key_column, "key column"));

	pull_varattnos(keyexpr, 1, used);
	return keyexpr;
}

/*
 * minhash_clusters' keep column of a table, as it is (no conversion, so no
 * code of any role runs to read it; its btree comparison runs as the caller,
 * as the key's does), adding it to the columns read.
 */
static Var *
keep_var(PairsRun *run, Relation heap, Bitmapset **used)
{
	Var		   *var = column_var(heap, pairs_column_attnum(heap, run->args.keep_column, "keep column"));

	*used = bms_add_member(*used, var->varattno - FirstLowInvalidHeapAttributeNumber);
	return var;
}

/*
 * The keep column's type must have the btree order that ranks the rows
 * (42883 without one). Also for Citus tables (citus_pairs_plan.cpp).
 */
void
pairs_check_keep_order(const char *keep_column, Oid typid)
{
	TypeCacheEntry *tce = lookup_type_cache(typid, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);

	if (!OidIsValid(tce->lt_opr) || !OidIsValid(tce->gt_opr))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify an ordering operator for type %s",
						format_type_be(typid)),
				 errdetail("The keep column \"%s\" ranks the rows of each cluster by its type's btree order.",
						   keep_column),
				 errhint("Keep by a column of a type with a btree operator class, such as a length or a timestamp.")));
}

/* The keep column's type, with the btree order that ranks the rows. */
static void
set_keep_type(PairsRun *run, const Var *var)
{
	pairs_check_keep_order(run->args.keep_column, var->vartype);
	run->keep_type = var->vartype;
	run->keep_collation = var->varcollid;
	get_typlenbyval(run->keep_type, &run->keep_typlen, &run->keep_typbyval);
}

/*
 * Converting the key to key_type may call code of some role: a cast's
 * function, a domain's constraints (the built-in casts and I/O conversions
 * are PostgreSQL's). A SELECT of the column runs none of it, so neither may
 * this as the caller: such code runs as the table's owner, like the index's
 * own expressions (pairs_prepare_key, pairs_fetch_key), and must therefore be
 * the owner's or a superuser's; code of any other role (the caller's own
 * domain, say) would then run with the owner's rights, and is refused.
 */
static void
check_key_code(PairsRun *run, Relation heap, Node *keyexpr)
{
	const PairsArgs *args = &run->args;
	Oid			func;
	Oid			domain;

	(void) minhash_runs_user_code(keyexpr, heap, &func, &domain);
	if (OidIsValid(func) || OidIsValid(domain))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("key column \"%s\" cannot be returned as %s by %s",
						args->key_column, format_type_be(args->key_type), args->funcname),
				 OidIsValid(func)
				 ? errdetail("The conversion calls function %s, which belongs to neither the owner of table \"%s\" nor a superuser.",
							 format_procedure(func), RelationGetRelationName(heap))
				 : errdetail("The conversion checks the constraints of domain %s, which belongs to neither the owner of table \"%s\" nor a superuser.",
							 format_type_be(domain), RelationGetRelationName(heap)),
				 errhint("Pass key_type => NULL::%s to get keys of the column's own type, and convert them in the query.",
						 format_type_be(exprType((Node *) column_var(heap, pairs_column_attnum(heap, args->key_column, "key column")))))));
}

/*
 * The key's expression state. A conversion that calls user code is prepared
 * (which may fold constants) and evaluated as the table owner, inside a
 * security-restricted operation (owner.cpp), in the leader and in parallel
 * workers alike.
 */
void
pairs_prepare_key(PairsRun *run, PairsPart *part)
{
	Oid			func;
	Oid			domain;

	part->key_as_owner = minhash_runs_user_code(part->key_node, part->heap, &func, &domain);
	if (part->key_as_owner)
	{
		MinhashOwnerContext owner;

		minhash_owner_begin(part->heap, &owner);
		part->key_expr = ExecPrepareExpr((Expr *) part->key_node, run->estate);
		minhash_owner_end(&owner);
	}
	else
		part->key_expr = ExecPrepareExpr((Expr *) part->key_node, run->estate);
}

/*
 * The columns the index reads: its columns, its expressions' and its
 * predicate's, read from pg_index without loading the expressions (loading
 * folds constant calls: the owner's code, which must not run as the caller).
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
 * One index of the walk, of a table already locked: its expressions, the
 * privileges on its table, its parameters and extent. check_acl is false for
 * the partitions of a partitioned table: a SELECT through the parent checks
 * the parent's privileges only (done by the caller), but a partition's
 * row-level security is refused as the parent's is.
 */
static void
setup_part(PairsRun *run, PairsPart *part, Relation heap, Relation index, bool check_acl)
{
	const PairsArgs *args = &run->args;
	Bitmapset  *used = NULL;
	Node	   *keyexpr;
	LshMetaPage meta;
	Buffer		metabuf;
	LshIndexParams params;

	part->heap = heap;
	part->index = index;
	pairs_check_index(index);
	/*
	 * What the call reads, checked before anything is evaluated: the key
	 * (coerced as the caller, as a SELECT of the column would be), the text
	 * column, and the index's columns, expressions and predicate.
	 */
	keyexpr = key_expression(run, heap, &used);
	if (args->keep_column != NULL)
		part->keep_node = (Node *) keep_var(run, heap, &used);
	if (args->exact && args->text_column != NULL)
		used = bms_add_member(used, pairs_column_attnum(heap, args->text_column, "text column") -
							  FirstLowInvalidHeapAttributeNumber);
	index_columns(index, &used);
	if (check_acl)
		check_privileges(run, heap, used);
	else if (check_enable_rls(RelationGetRelid(heap), InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support tables with row-level security", args->funcname),
				 errdetail("Row-level security is enabled for partition \"%s\".",
						   RelationGetRelationName(heap))));
	check_key_code(run, heap, keyexpr);
	part->key_node = keyexpr;
	pairs_prepare_key(run, part);
	if (check_acl)
		run->key_collation = exprCollation(keyexpr);	/* a plain index: its own table */
	if (part->keep_node != NULL)
	{
		if (check_acl)
			set_keep_type(run, (Var *) part->keep_node);
		part->keep_expr = ExecPrepareExpr((Expr *) part->keep_node, run->estate);
	}
	if (args->exact)
	{
		/* loading the index expression may run its owner's code: as the owner (owner.cpp) */
		MinhashOwnerContext owner;

		minhash_owner_begin(heap, &owner);
		setup_exact(run, part, args->ext_namespace, &used);
		minhash_owner_end(&owner);
	}

	part->fetch = table_index_fetch_begin(heap);
	part->slot = table_slot_create(heap, NULL);

	metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	lsh_meta_params(meta, &params);
	part->leftmost = meta->leftmost;
	UnlockReleaseBuffer(metabuf);
	/*
	 * A row visible to our snapshot was indexed before the walk starts, and
	 * VACUUM cannot free its slot while we hold the snapshot: its row id is
	 * below this bound.
	 */
	part->nblocks = RelationGetNumberOfBlocks(index);
	part->nrowids = params.num_perm == 0 ? 0 : (uint64) part->nblocks * params.slots_per_page;
	if (params.num_perm == 0)
		part->leftmost = InvalidBlockNumber;	/* nothing was ever inserted */
	else if (run->params.num_perm == 0)
		run->params = params;
	else if ((params.version == LSH_VERSION_EXACT) != (run->params.version == LSH_VERSION_EXACT))
		/* versions 2 and 3 share their band keys (3 adds the pending list) */
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the partitions of lsh index \"%s\" do not share their on-disk version",
						run->indexname),
				 errdetail("Index \"%s\" has on-disk version %u; another has version %u.",
						   RelationGetRelationName(index), params.version, run->params.version),
				 errhint("REINDEX the partitions' indexes built by minhash 1.0.")));
	else if (params.num_perm != run->params.num_perm || params.seed != run->params.seed ||
			 params.bands != run->params.bands || params.rows != run->params.rows)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the partitions of lsh index \"%s\" do not share their parameters",
						run->indexname),
				 /* seeds signed, as minhash_seed() and the text form show them */
				 errdetail("Index \"%s\" has k = %d, seed = %lld, %d bands of %d rows; another has k = %d, seed = %lld, %d bands of %d rows.",
						   RelationGetRelationName(index), params.num_perm,
						   (long long) (int64) params.seed, params.bands, params.rows,
						   run->params.num_perm, (long long) (int64) run->params.seed,
						   run->params.bands, run->params.rows),
				 errhint("Rows of different partitions can be compared only through equal bands: give every partition's index the same WITH options and signatures of one k and seed.")));
	else if (params.family != run->params.family)
		/*
		 * Equal values of two hash families are not equal sets: the band keys
		 * of the two would meet by chance, and the pair be reported from
		 * signatures jaccard() refuses to compare.
		 */
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the partitions of lsh index \"%s\" do not share their parameters",
						run->indexname),
				 errdetail("Index \"%s\" holds %s signatures; another holds %s signatures.",
						   RelationGetRelationName(index), minhash_family_name(params.family),
						   minhash_family_name(run->params.family)),
				 errhint("Signatures are comparable only when built with the same hash family, num_perm and seed.")));
	else if (params.sig_width != run->params.sig_width || params.slot_width != run->params.slot_width)
		/* band keys come from the slots' values: equal bands need equal widths */
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the partitions of lsh index \"%s\" do not share their parameters",
						run->indexname),
				 errdetail("Index \"%s\" holds %d-bit signatures and keeps %d bits of each value; another holds %d-bit signatures and keeps %d bits.",
						   RelationGetRelationName(index), MINHASH_WIDTH_BITS(params.sig_width),
						   MINHASH_WIDTH_BITS(params.slot_width), MINHASH_WIDTH_BITS(run->params.sig_width),
						   MINHASH_WIDTH_BITS(run->params.slot_width)),
				 errhint("Give every partition signatures of one width and its index the same verify_bits.")));
}

/*
 * The probe rule at the threshold (lsh_probe.cpp), as a % scan probes: below
 * the index's design threshold, band groups are runs of keys sharing the
 * prefix of the probe depth (version 2 keys; a version-1 index keeps 1.0's
 * whole-band groups and says once that REINDEX would widen it).
 */
static void
set_probe_depth(PairsRun *run)
{
	run->depth = run->params.rows;
	run->key_mask = 0xFFFFFFFF;
	if (run->params.num_perm == 0)
		return;
	run->depth = lsh_probe_depth(&run->params, run->args.threshold);
	run->key_mask = lsh_probe_mask(&run->params, run->depth);
	if (run->params.version == LSH_VERSION_EXACT &&
		lsh_prefix_depth(&run->params, run->args.threshold) < run->params.rows)
		for (int p = 0; p < run->nparts; p++)
			lsh_notice_format1(run->parts[p].index);
}

/*
 * The leaf indexes of a partitioned index, each with its table: tables are
 * locked first, as a SELECT on the parent does, then their indexes. A
 * partition without an lsh index (a foreign table, say) would silently drop
 * its rows from the answer: refused.
 */
static void
setup_partitions(PairsRun *run, Relation parentheap, Relation parentindex)
{
	List	   *tables = find_all_inheritors(RelationGetRelid(parentheap), AccessShareLock, NULL);
	List	   *indexes = find_all_inheritors(RelationGetRelid(parentindex), NoLock, NULL);
	ListCell   *lc;
	int			ntables = 0;
	int			n = 0;

	foreach(lc, tables)
	{
		Oid			relid = lfirst_oid(lc);
		char		relkind = get_rel_relkind(relid);

		if (relkind == RELKIND_FOREIGN_TABLE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s does not support foreign partitions", run->args.funcname),
					 errdetail("Partition \"%s\" of table \"%s\" is a foreign table.",
							   get_rel_name(relid), RelationGetRelationName(parentheap)),
					 errhint("Find the pairs of a sharded table by exchanging band keys (docs/scale-out.md).")));
		if (relkind == RELKIND_RELATION || relkind == RELKIND_MATVIEW)
			ntables++;
	}
	run->parts = (PairsPart *) palloc0(sizeof(PairsPart) * Max(list_length(indexes), 1));
	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);
		Relation	heap;
		Relation	index;
		Oid			heapoid;

		if (get_rel_relkind(indexoid) != RELKIND_INDEX)
			continue;			/* the parent, or a sub-partitioned table's index */
		heapoid = IndexGetRelation(indexoid, false);
		/*
		 * A partition whose DETACH ... CONCURRENTLY is pending (or was
		 * interrupted) is no longer among the table's partitions, as a SELECT
		 * on the parent sees them, yet its index is still the parent index's
		 * child: the answer follows the table.
		 */
		if (!list_member_oid(tables, heapoid))
			continue;
		heap = table_open(heapoid, AccessShareLock);
		index = index_open(indexoid, AccessShareLock);
		setup_part(run, &run->parts[n++], heap, index, false);
	}
	if (n != ntables)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lsh index \"%s\" does not cover every partition of table \"%s\"",
						run->indexname, RelationGetRelationName(parentheap)),
				 errdetail("%d partitions have an index, %d have rows.", n, ntables)));
	run->nparts = n;
}

void
pairs_begin(PairsRun *run, const PairsArgs *args)
{
	MemoryContext oldcxt;
	char		relkind = get_rel_relkind(args->indexoid);
	Oid			heapoid;
	Relation	heap;
	Relation	index;
	TypeCacheEntry *tce;

	memset((void *) run, 0, sizeof(PairsRun));
	run->args = *args;
	run->cxt = AllocSetContextCreate(CurrentMemoryContext, "minhash pairs", ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(run->cxt);

	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", args->indexoid)));
	if (relkind != RELKIND_INDEX && relkind != RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an lsh index", get_rel_name(args->indexoid))));
	heapoid = IndexGetRelation(args->indexoid, false);
	/* the table first, as the executor locks them */
	heap = table_open(heapoid, AccessShareLock);
	index = index_open(args->indexoid, AccessShareLock);
	run->indexname = pstrdup(RelationGetRelationName(index));

	run->estate = CreateExecutorState();
	run->econtext = GetPerTupleExprContext(run->estate);
	get_typlenbyval(args->key_type, &run->key_typlen, &run->key_typbyval);

	if (!args->exact && (args->text_column != NULL || args->unit != NULL || args->k >= 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("text_column, unit and k are used only with exact => true")));

	if (relkind == RELKIND_INDEX)
	{
		run->parts = (PairsPart *) palloc0(sizeof(PairsPart));
		run->nparts = 1;
		setup_part(run, &run->parts[0], heap, index, true);
	}
	else
	{
		/* the parent: its kind, its privileges, as a SELECT on it checks them */
		Bitmapset  *used = NULL;
		Var		   *keep = NULL;

		pairs_check_index(index);
		run->key_collation = exprCollation(key_expression(run, heap, &used));
		if (args->keep_column != NULL)
			keep = keep_var(run, heap, &used);
		if (args->text_column != NULL)
			used = bms_add_member(used, pairs_column_attnum(heap, args->text_column, "text column") -
								  FirstLowInvalidHeapAttributeNumber);
		index_columns(index, &used);
		check_privileges(run, heap, used);
		if (keep != NULL)
			set_keep_type(run, keep);
		run->parentheap = heap;
		run->parentindex = index;
		setup_partitions(run, heap, index);
	}

	tce = lookup_type_cache(args->key_type, TYPECACHE_CMP_PROC_FINFO);
	if (OidIsValid(tce->cmp_proc))
	{
		fmgr_info_cxt(tce->cmp_proc, &run->key_cmp, run->cxt);
		run->key_has_cmp = true;
	}

	/* global row ids: each part's row ids after the previous parts' */
	for (int p = 0; p < run->nparts; p++)
	{
		run->parts[p].base = run->nrowids;
		run->nrowids += run->parts[p].nrowids;
	}

	/* the snapshot of the calling query decides which rows exist */
	run->snapshot = GetActiveSnapshot();

	/*
	 * SERIALIZABLE: the walk reads the index through its own access layer,
	 * not index_beginscan, so it takes the relation-level predicate lock
	 * that index_beginscan takes for an access method without ampredlocks
	 * (lsh has none). A concurrent insert meets it in index_insert: without
	 * it, "no near-duplicate yet, insert" in two transactions would both
	 * commit. The rows read are locked by the heap fetch (tuple locks). A
	 * no-op at other isolation levels.
	 */
	for (int p = 0; p < run->nparts; p++)
		PredicateLockRelation(run->parts[p].index, run->snapshot);
	set_probe_depth(run);
	run->heap_verify = run->params.num_perm > 0 && !lsh_verifies_exactly(&run->params);
	if (run->heap_verify)
		for (int p = 0; p < run->nparts; p++)
			setup_signature(run, &run->parts[p]);

	/* a quarter of work_mem for one group's signatures; the row cache has half */
	run->budget = (Size) work_mem * 1024 / 4;
	pairs_cache_init(run);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * exact => true: one NOTICE for the rows whose text had more distinct
 * shingles than exact verification may hold (a quarter of work_mem,
 * pairs_exact.cpp). Their pairs were verified by the estimate rather than
 * failing the whole call for one oversized document. Also for Citus tables.
 */
void
pairs_notice_too_large(const char *funcname, long n)
{
	ereport(NOTICE,
			(errmsg_plural("%s: %ld row too large for exact verification within work_mem was verified by its estimate",
						   "%s: %ld rows too large for exact verification within work_mem were verified by their estimate",
						   n, funcname, n),
			 errdetail("Exact verification keeps 8 bytes per distinct shingle of a row, at most a quarter of work_mem (%d kB: %zu shingles). "
					   "A pair with a row that has more is verified, and its similarity reported, by the estimate of the two signatures.",
					   work_mem, pairs_shingle_limit()),
			 errhint("Raise work_mem for this query to verify them exactly.")));
}

static void
pairs_report_too_large(PairsRun *run)
{
	if (run->too_large != NULL)
		pairs_notice_too_large(run->args.funcname, hash_get_num_entries(run->too_large));
}

void
pairs_end(PairsRun *run)
{
	pairs_report_too_large(run);
	for (int p = 0; p < run->nparts; p++)
	{
		ExecDropSingleTupleTableSlot(run->parts[p].slot);
		table_index_fetch_end(run->parts[p].fetch);
		/* locks are kept to the end of the transaction, as for any table read */
		index_close(run->parts[p].index, NoLock);
		table_close(run->parts[p].heap, NoLock);
	}
	if (run->parentindex != NULL)
	{
		index_close(run->parentindex, NoLock);
		table_close(run->parentheap, NoLock);
	}
	FreeExecutorState(run->estate);
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
