/*
 * Running a table's user code (index expressions and predicates) as the
 * table's owner, the way PostgreSQL's own maintenance commands do since
 * CVE-2022-1552 (REINDEX, VACUUM, CREATE INDEX, amcheck's heapallindexed):
 *
 *  - the current user becomes the table's owner, so a function in an index
 *    expression never runs with the rights of whoever called us (a superuser
 *    running minhash_similar_pairs(..., exact => true) must not run a table
 *    owner's plpgsql as superuser);
 *  - inside a security-restricted operation, so that code cannot SET ROLE,
 *    SET SESSION AUTHORIZATION, create temporary objects, PREPARE, ... and
 *    leave something behind that outlives the call;
 *  - at a new GUC nest level, so a set_config(..., false) inside the code is
 *    undone when we return;
 *  - with search_path = pg_catalog, pg_temp (what PostgreSQL 17 calls
 *    RestrictSearchPath): the caller's search_path is not the owner's, and a
 *    caller who can read the table must not be able to make the owner's
 *    unqualified references resolve to the caller's own functions, which
 *    would then run with the owner's rights.
 *
 * Everything is undone by minhash_owner_end(), or by transaction or
 * subtransaction abort if the code errors (AbortTransaction and
 * AbortSubTransaction restore the user id and security context, and
 * AtEOXact_GUC pops the nest level), exactly as for REINDEX.
 *
 * What the code reads is checked separately, as the caller, before any of
 * it runs (pairs_setup.cpp): this only decides whose rights the code has.
 */
#include "pg/pg_prelude.h"

#include "pg/minhash.h"

extern "C" {
#include "access/transam.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
}

/* the search_path user code of another role runs under (PostgreSQL 17's GUC_SAFE_SEARCH_PATH) */
#define MINHASH_SAFE_SEARCH_PATH "pg_catalog, pg_temp"

void
minhash_owner_begin(Relation heap, MinhashOwnerContext *ctx)
{
	GetUserIdAndSecContext(&ctx->save_userid, &ctx->save_sec_context);
	SetUserIdAndSecContext(heap->rd_rel->relowner,
						   ctx->save_sec_context | SECURITY_RESTRICTED_OPERATION);
	ctx->save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", MINHASH_SAFE_SEARCH_PATH, PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

void
minhash_owner_end(MinhashOwnerContext *ctx)
{
	AtEOXact_GUC(false, ctx->save_nestlevel);
	SetUserIdAndSecContext(ctx->save_userid, ctx->save_sec_context);
}

/*
 * Code in an expression the extension builds itself (a key column coerced to
 * key_type): the functions it calls, the I/O functions of a conversion
 * through text, and domain constraints. Built-in objects (created by initdb)
 * are PostgreSQL's; anything else was defined by some role.
 */
typedef struct UserCodeScan
{
	Oid			owner;			/* the table's owner */
	bool		found;			/* some code is not built in */
	Oid			foreign_func;	/* a function of another role (not a superuser) */
	Oid			foreign_type;	/* a domain of another role */
} UserCodeScan;

static bool
trusted_owner(Oid role, Oid table_owner)
{
	return role == table_owner || superuser_arg(role);
}

static bool
user_function_checker(Oid func, void *context)
{
	UserCodeScan *scan = (UserCodeScan *) context;
	HeapTuple	tup;

	if (func < FirstNormalObjectId)
		return false;
	scan->found = true;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(func));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", func);
	if (!trusted_owner(((Form_pg_proc) GETSTRUCT(tup))->proowner, scan->owner) &&
		!OidIsValid(scan->foreign_func))
		scan->foreign_func = func;
	ReleaseSysCache(tup);
	return false;				/* look at every function */
}

static bool
user_code_walker(Node *node, void *context)
{
	UserCodeScan *scan = (UserCodeScan *) context;

	if (node == NULL)
		return false;
	(void) check_functions_in_node(node, user_function_checker, context);
	if (IsA(node, CoerceToDomain))
	{
		Oid			domain = ((CoerceToDomain *) node)->resulttype;
		HeapTuple	tup;

		/* its CHECK constraints are expressions of the domain's owner */
		if (domain >= FirstNormalObjectId)
		{
			scan->found = true;
			tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(domain));
			if (!HeapTupleIsValid(tup))
				elog(ERROR, "cache lookup failed for type %u", domain);
			if (!trusted_owner(((Form_pg_type) GETSTRUCT(tup))->typowner, scan->owner) &&
				!OidIsValid(scan->foreign_type))
				scan->foreign_type = domain;
			ReleaseSysCache(tup);
		}
	}
#if PG_VERSION_NUM >= 160000
	return expression_tree_walker(node, user_code_walker, context);
#else
	/* through void (*)(void): the walker type of 15 takes no declared arguments */
	return expression_tree_walker(node, (bool (*)()) (void (*)(void)) user_code_walker, context);
#endif
}

bool
minhash_runs_user_code(Node *expr, Relation heap, Oid *foreign_func, Oid *foreign_type)
{
	UserCodeScan scan = {heap->rd_rel->relowner, false, InvalidOid, InvalidOid};

	(void) user_code_walker(expr, &scan);
	*foreign_func = scan.foreign_func;
	*foreign_type = scan.foreign_type;
	return scan.found;
}
