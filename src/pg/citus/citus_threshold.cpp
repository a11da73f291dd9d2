/*
 * `%` on Citus tables: the session's threshold travels with the query.
 *
 * `a % b` is minhash_similar(a, b), which reads minhash.similarity_threshold
 * when it runs. Citus runs the query's text on the workers, in connections
 * of their own whose setting is the workers' (a SET in the coordinator's
 * session never reaches them; Citus propagates only SET LOCAL, and only with
 * citus.propagate_set_commands = 'local'), so a query on a distributed table
 * would silently filter at another threshold than the session's. The
 * planner hook (citus_planner.cpp) replaces, in a query that reads a Citus
 * table, every `a % b` (and minhash_similar(a, b), its function called by
 * name) by minhash_similar(a, b, <the session's threshold>) --
 * the IMMUTABLE form, which Citus ships as it is and whose support function
 * makes it an lsh index condition on each shard (lsh_support.cpp).
 *
 * Plan caching. A plan now holds the threshold of the moment it was made.
 * PostgreSQL re-plans a cached plan only on an invalidation, and a SET sends
 * none, so every such plan carries an invalidation item on the pg_proc entry
 * of minhash_similar(minhash, minhash), and when the setting changes (SET,
 * SET LOCAL and its end, RESET, a function's SET clause, a reload) the
 * assign hook delivers that invalidation in this backend only
 * (CallSyscacheCallbacks): the plan cache marks those generic plans invalid,
 * and the next execution plans again, with the new threshold.
 *
 * A `%` that reaches the planner unrewritten with a column of a Citus table
 * (the hook is off: minhash was not loaded at session start; or the % comes
 * from an inlined SQL function's body, planned after the hook ran) is
 * refused by the support function of minhash_similar(minhash, minhash)
 * (minhash_threshold_support), which the planner calls on the coordinator
 * before Citus ships anything: an error with a hint, never a wrong answer.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "pg/minhash.h"

extern "C" {
#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_language.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/supportnodes.h"
#include "optimizer/planner.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(minhash_threshold_support);
}

/* a plan with a threshold written in exists: its invalidation item */
static bool baked_any = false;
static uint32 baked_hash = 0;

static Oid
op_function(Oid opfuncid, Oid opno)
{
	return OidIsValid(opfuncid) ? opfuncid : get_opcode(opno);
}

/* the C function behind `%`: minhash_similar(minhash, minhash), reading the setting */
static bool
is_threshold_function(Oid funcid)
{
	return mh_is_own_c_function(funcid, "minhash_similar", 2);
}

bool
mh_citus_is_threshold_op(Node *node)
{
	if (IsA(node, OpExpr))
		return is_threshold_function(op_function(((OpExpr *) node)->opfuncid, ((OpExpr *) node)->opno));
	if (IsA(node, ScalarArrayOpExpr))
		return is_threshold_function(op_function(((ScalarArrayOpExpr *) node)->opfuncid,
												 ((ScalarArrayOpExpr *) node)->opno));
	/* the function of `%` called by name, minhash_similar(a, b): the same setting */
	if (IsA(node, FuncExpr))
		return is_threshold_function(((FuncExpr *) node)->funcid);
	return false;
}

/* minhash_similar(minhash, minhash, double precision) beside the `%` function */
static Oid
threshold_form(Oid funcid)
{
	Oid		   *fargs;
	int			nargs;
	Oid			argtypes[3];
	char	   *nspname = get_namespace_name(get_func_namespace(funcid));
	Oid			result;

	(void) get_func_signature(funcid, &fargs, &nargs);
	argtypes[0] = fargs[0];
	argtypes[1] = fargs[1];
	argtypes[2] = FLOAT8OID;
	result = LookupFuncName(list_make2(makeString(nspname), makeString(pstrdup("minhash_similar"))),
							3, argtypes, true);
	if (!OidIsValid(result))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("operator %% on a Citus table needs minhash_similar(minhash, minhash, double precision)"),
				 errhint("ALTER EXTENSION minhash UPDATE.")));
	return result;
}

Node *
mh_citus_threshold_call(Node *node, MhThresholdRewrite *rw)
{
	Oid			fn;
	List	   *fargs;
	Oid			inputcollid;
	int			location;
	FuncExpr   *call;
	List	   *args;

	if (IsA(node, ScalarArrayOpExpr))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("operator %% with ANY or ALL is not supported in a query on a Citus table"),
				 errhint("Write minhash_similar(sig, query, threshold) for each query signature, or join with the query signatures.")));
	if (IsA(node, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) node;

		fn = f->funcid;
		fargs = f->args;
		inputcollid = f->inputcollid;
		location = f->location;
	}
	else
	{
		OpExpr	   *op = (OpExpr *) node;

		fn = op_function(op->opfuncid, op->opno);
		fargs = op->args;
		inputcollid = op->inputcollid;
		location = op->location;
	}
	if (!rw->have_threshold)
	{
		/* the setting as it is now (an error if a rejected value is pending, as % would raise) */
		rw->threshold = minhash_threshold();
		rw->have_threshold = true;
	}
	if (rw->function != fn)
	{
		rw->function = fn;
		rw->function_t = threshold_form(fn);
	}
	args = list_copy(fargs);
	args = lappend(args, makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8),
								   Float8GetDatum(rw->threshold), false, FLOAT8PASSBYVAL));
	call = makeFuncExpr(rw->function_t, BOOLOID, args, InvalidOid, inputcollid,
						COERCE_EXPLICIT_CALL);
	call->location = location;
	return (Node *) call;
}

void
mh_citus_threshold_planned(PlannedStmt *stmt, const MhThresholdRewrite *rw)
{
	PlanInvalItem *item;

	if (!OidIsValid(rw->function))
		return;
	item = makeNode(PlanInvalItem);
	item->cacheId = PROCOID;
	item->hashValue = GetSysCacheHashValue1(PROCOID, ObjectIdGetDatum(rw->function));
	stmt->invalItems = lappend(stmt->invalItems, item);
	baked_hash = item->hashValue;
	baked_any = true;
}

void
mh_citus_threshold_assigned(double oldval, double newval)
{
	if (baked_any && oldval != newval)
		CallSyscacheCallbacks(PROCOID, baked_hash);
}

/* The Citus table a Var of the tree reads, or InvalidOid. */
typedef struct CitusVarContext
{
	PlannerInfo *root;
	Oid			relid;
	bool		any_var;
} CitusVarContext;

static bool
citus_var_walker(Node *node, CitusVarContext *ctx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;
		PlannerInfo *root = ctx->root;

		ctx->any_var = true;
		for (Index up = 0; root != NULL && up < var->varlevelsup; up++)
			root = root->parent_root;
		if (root != NULL && var->varno >= 1 &&
			var->varno <= (int) list_length(root->parse->rtable))
		{
			RangeTblEntry *rte = rt_fetch(var->varno, root->parse->rtable);

			if (rte->rtekind == RTE_RELATION && mh_citus_table_method(rte->relid) != 0)
			{
				ctx->relid = rte->relid;
				return true;
			}
		}
		return false;
	}
	return expression_tree_walker(node, MH_WALKER(citus_var_walker), ctx);
}

/*
 * Support function of minhash_similar(minhash, minhash), the function of
 * `%`: refuses a `%` that reaches the planner unrewritten with a column of a
 * Citus table (see the top of this file).
 */
extern "C" Datum
minhash_threshold_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestSimplify *req;
	CitusVarContext ctx;
	bool		found;

	if (!IsA(rawreq, SupportRequestSimplify))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestSimplify *) rawreq;
	if (!mh_citus_installed())
		PG_RETURN_POINTER(NULL);
	ctx.root = req->root;
	ctx.relid = InvalidOid;
	ctx.any_var = false;
	found = citus_var_walker((Node *) req->fcall->args, &ctx);
	/*
	 * Without a planner (root NULL: Citus plans single-shard queries on the
	 * distribution column that way) the Var's table is unknown: with the hook
	 * off, a column there may be a Citus table's.
	 */
	if (!found && !(req->root == NULL && ctx.any_var && !mh_citus_hook_installed()))
		PG_RETURN_POINTER(NULL);
	if (!mh_citus_hook_installed())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("operator %% on a Citus table needs the minhash library loaded at session start"),
				 OidIsValid(ctx.relid) ?
				 errdetail("Citus runs the query on the workers, where minhash.similarity_threshold is not this session's setting; "
						   "minhash writes the setting into queries on table \"%s\" when it plans them, "
						   "which needs its library loaded before the first query.",
						   get_rel_name(ctx.relid)) :
				 errdetail("Citus runs the query on the workers, where minhash.similarity_threshold is not this session's setting; "
						   "minhash writes the setting into queries on distributed tables when it plans them, "
						   "which needs its library loaded before the first query."),
				 errhint("Add minhash to shared_preload_libraries after citus (or to session_preload_libraries), "
						 "or write minhash_similar(sig, query, threshold).")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("operator %% on Citus table \"%s\" cannot be used here", get_rel_name(ctx.relid)),
			 errdetail("The query reached the planner after minhash wrote the session's threshold into it "
					   "(in the body of an inlined SQL function, for example), so the workers would use their own setting."),
			 errhint("Write minhash_similar(sig, query, threshold).")));
	PG_RETURN_POINTER(NULL);
}
