/*
 * The planner hook for queries on Citus tables.
 *
 * Citus ships a query to the shards as SQL text deparsed from the query it
 * was given -- a copy taken before PostgreSQL's planner, and with it every
 * planner support function, sees the query. What must change in the shipped
 * text is therefore changed here, in a hook that runs before Citus's
 * (minhash loaded after citus), and only in queries that read a Citus table:
 *
 *  - `a % b` becomes minhash_similar(a, b, <the session's threshold>)
 *    (citus_threshold.cpp): the workers never see this session's
 *    minhash.similarity_threshold;
 *  - minhash_agg(x [, k, seed]) becomes
 *    minhash_merge_agg(minhash(ARRAY[x] [, k, seed])) (citus_aggregates.cpp):
 *    Citus computes partial aggregates on the workers only for aggregates
 *    whose declared argument types are those of the call, which a
 *    polymorphic aggregate's (anyelement) never are.
 *
 * A plan holding a threshold carries an invalidation item that a change of
 * the setting fires (citus_threshold.cpp), so cached plans are re-planned.
 *
 * The hook must be in place before the session's first query is planned:
 * minhash loaded at postmaster or session start (shared_preload_libraries
 * after citus, or session_preload_libraries). Loaded on first use instead --
 * inside some query's planning, too late for it -- the hook stays off for
 * the whole session, so that behaviour does not depend on which query ran
 * first: then `%` on a Citus table is refused (minhash_threshold_support)
 * and minhash_agg is gathered to the coordinator, as without this hook.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "pg/minhash.h"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_language.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/planner.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

static planner_hook_type prev_planner_hook = NULL;
static bool hook_installed = false;

bool
mh_citus_hook_installed(void)
{
	return hook_installed;
}

bool
mh_citus_installed(void)
{
	return OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE));
}

/*
 * The C symbol of a function of this library (C language, probin
 * $libdir/minhash or with the platform's suffix), with its argument count;
 * NULL for any other function.
 */
static char *
own_c_symbol(Oid funcid, int *nargs)
{
	HeapTuple	tp;
	Form_pg_proc p;
	char	   *result = NULL;

	if (!OidIsValid(funcid))
		return NULL;
	tp = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tp))
		return NULL;
	p = (Form_pg_proc) GETSTRUCT(tp);
	if (p->prolang == ClanguageId)
	{
		bool		isnull;
		Datum		bin = SysCacheGetAttr(PROCOID, tp, Anum_pg_proc_probin, &isnull);

		if (!isnull)
		{
			char	   *path = TextDatumGetCString(bin);
			const char *base = strrchr(path, '/');

			base = base ? base + 1 : path;
			if (strncmp(base, "minhash", 7) == 0 && (base[7] == '\0' || base[7] == '.'))
			{
				Datum		src = SysCacheGetAttr(PROCOID, tp, Anum_pg_proc_prosrc, &isnull);

				if (!isnull)
				{
					result = TextDatumGetCString(src);
					*nargs = p->pronargs;
				}
			}
		}
	}
	ReleaseSysCache(tp);
	return result;
}

bool
mh_is_own_c_function(Oid funcid, const char *symbol, int nargs)
{
	int			own_nargs;
	char	   *own = own_c_symbol(funcid, &own_nargs);

	return own != NULL && strcmp(own, symbol) == 0 && (nargs < 0 || own_nargs == nargs);
}

/* Does the query read a Citus table (at any level)? */
static bool
reads_citus_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		return rte->rtekind == RTE_RELATION && mh_citus_table_method(rte->relid) != 0;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, MH_WALKER(reads_citus_walker), context,
								 QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, MH_WALKER(reads_citus_walker), context);
}

/* Is the node a comparison of signatures (`%`, `%>=`, minhash_similar(a, b, t))? */
static bool
compares_signatures(Node *node)
{
	Oid			funcid = InvalidOid;
	int			nargs;
	char	   *symbol;

	if (IsA(node, OpExpr))
	{
		funcid = ((OpExpr *) node)->opfuncid;
		if (!OidIsValid(funcid))
			funcid = get_opcode(((OpExpr *) node)->opno);
	}
	else if (IsA(node, FuncExpr))
		funcid = ((FuncExpr *) node)->funcid;
	symbol = own_c_symbol(funcid, &nargs);
	/* one catalog lookup a node: this runs for every query planned with Citus */
	return symbol != NULL &&
		((strcmp(symbol, "minhash_similar") == 0 && nargs == 2) ||
		 (strcmp(symbol, "minhash_similar_t") == 0 && nargs == 3) ||
		 (strcmp(symbol, "minhash_similar_query") == 0 && nargs == 2));
}

/* What the query holds that this hook acts on, found in one walk */
typedef struct QueryUses
{
	bool		rewritten;		/* `%` or minhash_agg: rewritten for the shards */
	bool		compares;		/* a comparison of signatures: a join on it gets a hint */
} QueryUses;

static bool
query_uses_walker(Node *node, QueryUses *uses)
{
	if (node == NULL)
		return false;
	if (!uses->rewritten &&
		(mh_citus_is_threshold_op(node) ||
		 (IsA(node, Aggref) && mh_citus_is_minhash_agg((Aggref *) node))))
		uses->rewritten = true;
	if (!uses->compares && compares_signatures(node))
		uses->compares = true;
	if (uses->rewritten && uses->compares)
		return true;			/* nothing left to find */
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, MH_WALKER(query_uses_walker), uses, 0);
	return expression_tree_walker(node, MH_WALKER(query_uses_walker), uses);
}

/*
 * Citus distributes a join of two distributed tables only on their
 * distribution columns; on a similarity condition it refuses with "complex
 * joins are only supported ..." and no way out. For a query comparing
 * signatures, that error gets a hint with the forms Citus does run.
 */
static PlannedStmt *
plan_with_join_hint(Query *parse, const char *query_string, int cursorOptions,
					ParamListInfo boundParams)
{
	PlannedStmt *volatile result = NULL;
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		if (prev_planner_hook)
			result = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
		else
			result = standard_planner(parse, query_string, cursorOptions, boundParams);
	}
	PG_CATCH();
	{
		MemoryContext errcxt = MemoryContextSwitchTo(cxt);
		ErrorData  *edata = CopyErrorData();

		if (edata->sqlerrcode != ERRCODE_FEATURE_NOT_SUPPORTED || edata->hint != NULL ||
			edata->message == NULL ||
			strncmp(edata->message, "complex joins are only supported", 32) != 0)
		{
			MemoryContextSwitchTo(errcxt);
			PG_RE_THROW();
		}
		FlushErrorState();
		edata->hint = pstrdup("Citus joins two distributed tables only on their distribution columns, not on a similarity condition. "
							  "Put one side's signatures in a reference table or a materialized CTE "
							  "(WITH q AS MATERIALIZED (SELECT ...) ... JOIN q ON ...), which Citus sends to every shard; "
							  "for the similar pairs within one table, use minhash_similar_pairs.");
		ReThrowError(edata);
	}
	PG_END_TRY();
	return result;
}

typedef struct RewriteContext
{
	MhThresholdRewrite threshold;
} RewriteContext;

static Node *
rewrite_mutator(Node *node, RewriteContext *ctx)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Query))
		return (Node *) query_tree_mutator((Query *) node, MH_MUTATOR(rewrite_mutator), ctx, 0);
	/* the children first: an argument may hold another % */
	node = expression_tree_mutator(node, MH_MUTATOR(rewrite_mutator), ctx);
	if (mh_citus_is_threshold_op(node))
		return mh_citus_threshold_call(node, &ctx->threshold);
	if (IsA(node, Aggref) && mh_citus_is_minhash_agg((Aggref *) node))
		return mh_citus_merge_form((Aggref *) node);
	return node;
}

static PlannedStmt *
citus_planner(Query *parse, const char *query_string, int cursorOptions,
			  ParamListInfo boundParams)
{
	RewriteContext ctx;
	PlannedStmt *result;
	bool		hint = false;

	memset(&ctx, 0, sizeof(ctx));
	/* only in a database with Citus, for a query that reads a Citus table */
	if (mh_citus_installed())
	{
		QueryUses	uses = {false, false};

		(void) query_uses_walker((Node *) parse, &uses);
		if ((uses.rewritten || uses.compares) && reads_citus_walker((Node *) parse, NULL))
		{
			if (uses.rewritten)
				parse = query_tree_mutator(parse, MH_MUTATOR(rewrite_mutator), &ctx, 0);
			hint = uses.compares;
		}
	}

	if (hint)
		result = plan_with_join_hint(parse, query_string, cursorOptions, boundParams);
	else if (prev_planner_hook)
		result = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		result = standard_planner(parse, query_string, cursorOptions, boundParams);

	mh_citus_threshold_planned(result, &ctx.threshold);
	return result;
}

void
mh_citus_planner_init(void)
{
	/*
	 * Loaded at postmaster start (shared_preload_libraries) or at session
	 * start (session_preload_libraries, before the first command): no
	 * command is being run. Loaded by a command that calls into the library
	 * (or by LOAD): too late for that query, so not at all (see the top of
	 * this file).
	 */
	if (!process_shared_preload_libraries_in_progress && debug_query_string != NULL)
		return;
	prev_planner_hook = planner_hook;
	planner_hook = citus_planner;
	hook_installed = true;
}
