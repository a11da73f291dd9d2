/*
 * minhash_agg on Citus tables, computed on the workers.
 *
 * Citus computes an aggregate on the workers and combines the partial
 * results on the coordinator (worker_partial_agg / coord_combine_agg) when
 * the aggregate has a combine function and a state type it can ship as text
 * -- and when the declared argument types are exactly the call's: it checks
 * them before it runs. minhash_agg takes anyelement, so that check always
 * fails, whatever its state type; Citus then gathers every input row to the
 * coordinator instead (GROUP BY the distribution column aside, where the
 * whole aggregate runs on each shard).
 *
 * The same signature is the union of the rows' one-element signatures:
 *     minhash_agg(x [, k, seed]) = minhash_merge_agg(minhash(ARRAY[x] [, k, seed]))
 * (a NULL x gives the empty set's signature, which changes no minimum; no
 * row gives NULL either way). minhash_merge_agg takes minhash and keeps a
 * minhash state, combined by minhash_merge_trans: Citus computes it on the
 * workers. The planner hook (citus_planner.cpp) writes the one for the other
 * in queries that read a Citus table. Aggregates with DISTINCT or ORDER BY
 * are left as they are (neither changes a set's signature).
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_func.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

bool
mh_citus_is_minhash_agg(Aggref *aggref)
{
	HeapTuple	tp;
	Oid			transfn;

	if (aggref->aggdistinct != NIL || aggref->aggorder != NIL || aggref->aggstar ||
		aggref->aggkind != AGGKIND_NORMAL || (list_length(aggref->args) != 1 &&
											   list_length(aggref->args) != 3))
		return false;
	tp = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggref->aggfnoid));
	if (!HeapTupleIsValid(tp))
		return false;
	transfn = ((Form_pg_aggregate) GETSTRUCT(tp))->aggtransfn;
	ReleaseSysCache(tp);
	/* the element must have an array type, for ARRAY[x] */
	return mh_is_own_c_function(transfn, "minhash_agg_trans", -1) &&
		OidIsValid(get_array_type(exprType((Node *) ((TargetEntry *) linitial(aggref->args))->expr)));
}

/* a function of the extension (the aggregate's schema) by name and argument types */
static Oid
extension_function(Oid aggfnoid, const char *name, int nargs, const Oid *argtypes)
{
	char	   *nspname = get_namespace_name(get_func_namespace(aggfnoid));
	Oid			result = LookupFuncName(list_make2(makeString(nspname), makeString(pstrdup(name))),
										nargs, argtypes, true);

	if (!OidIsValid(result))
		elog(ERROR, "function %s.%s of the minhash extension not found", nspname, name);
	return result;
}

Node *
mh_citus_merge_form(Aggref *aggref)
{
	Oid			sigtype = aggref->aggtype;
	Oid			merge_args[1] = {sigtype};
	Oid			minhash_args[3] = {ANYARRAYOID, INT4OID, INT8OID};
	Oid			merge_agg = extension_function(aggref->aggfnoid, "minhash_merge_agg", 1, merge_args);
	Oid			minhash_fn = extension_function(aggref->aggfnoid, "minhash", 3, minhash_args);
	Expr	   *elem = ((TargetEntry *) linitial(aggref->args))->expr;
	ArrayExpr  *array = makeNode(ArrayExpr);
	Expr	   *num_perm;
	Expr	   *seed;
	FuncExpr   *sig;
	Aggref	   *merge = (Aggref *) copyObjectImpl(aggref);

	array->element_typeid = exprType((Node *) elem);
	array->array_typeid = get_array_type(array->element_typeid);
	array->array_collid = exprCollation((Node *) elem);
	array->elements = list_make1(elem);
	array->multidims = false;
	array->location = -1;
	if (list_length(aggref->args) == 3)
	{
		num_perm = ((TargetEntry *) lsecond(aggref->args))->expr;
		seed = ((TargetEntry *) lthird(aggref->args))->expr;
	}
	else
	{
		/* minhash_agg(x)'s: 128 values, seed 1 */
		num_perm = (Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(128),
									  false, true);
		seed = (Expr *) makeConst(INT8OID, -1, InvalidOid, sizeof(int64), Int64GetDatum(1),
								  false, FLOAT8PASSBYVAL);
	}
	sig = makeFuncExpr(minhash_fn, sigtype, list_make3(array, num_perm, seed), InvalidOid,
					   aggref->inputcollid, COERCE_EXPLICIT_CALL);

	merge->aggfnoid = merge_agg;
	merge->aggargtypes = list_make1_oid(sigtype);
	merge->args = list_make1(makeTargetEntry((Expr *) sig, 1, NULL, false));
	merge->aggdirectargs = NIL;
	merge->inputcollid = InvalidOid;
	merge->aggvariadic = false;
	return (Node *) merge;
}
