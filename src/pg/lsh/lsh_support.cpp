/*
 * Planner support for minhash_similar(sig, q, t): makes the IMMUTABLE,
 * threshold-carrying form indexable by the lsh index, and estimates its
 * selectivity as the % operator's.
 *
 * `%` reads the GUC minhash.similarity_threshold, so it is STABLE and
 * postgres_fdw never ships it. minhash_similar(sig, q, t) is IMMUTABLE and
 * ships; on the server that runs it, this function (SupportRequestIndexCondition,
 * as PostGIS does for ST_DWithin) hands the planner the index condition
 *     sig %>= ROW(q, t)::minhash_query
 * -- strategy 3 of minhash_ops, whose right side carries the threshold to
 * the scan (lsh_scan_quals in lsh_scan.cpp). The estimate is symmetric, so
 * the indexed signature may be either argument.
 *
 * The condition is not lossy: the scan verifies each candidate with the
 * same estimate and threshold, as for %. Like %, it returns only rows that
 * share a band with q (the index's recall).
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "utils/catcache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(minhash_similar_support);
}

/* the %>= operator of an lsh opfamily for this left type, and its right type */
static Oid
threshold_operator(Oid opfamily, Oid lefttype, Oid *righttype)
{
	CatCList   *list = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamily));
	Oid			opno = InvalidOid;

	for (int i = 0; i < list->n_members; i++)
	{
		Form_pg_amop amop = (Form_pg_amop) GETSTRUCT(&list->members[i]->tuple);

		if (amop->amopstrategy == LSH_SIMILAR_T_STRATEGY && amop->amoplefttype == lefttype &&
			amop->amoppurpose == AMOP_SEARCH)
		{
			opno = amop->amopopr;
			*righttype = amop->amoprighttype;
			break;
		}
	}
	ReleaseCatCacheList(list);
	return opno;
}

extern "C" Datum
minhash_similar_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestIndexCondition *req;
	FuncExpr   *call;
	Node	   *indexed;
	Node	   *query;
	Node	   *threshold;
	Oid			opno;
	Oid			righttype = InvalidOid;
	RowExpr    *row;

	if (IsA(rawreq, SupportRequestSelectivity))
	{
		/*
		 * The % operator's estimate at the call's own t (when it is a
		 * constant, else at minhash.similarity_threshold), instead of the
		 * planner's 1/3 for an unknown boolean function, which would price the
		 * index out. A join uses the restriction estimate of its first side.
		 */
		SupportRequestSelectivity *sreq = (SupportRequestSelectivity *) rawreq;
		double		t = minhash_threshold();
		Node	   *targ = list_length(sreq->args) == 3 ? (Node *) lthird(sreq->args) : NULL;

		if (targ != NULL)
			targ = estimate_expression_value(sreq->root, targ);
		if (targ != NULL && IsA(targ, Const) && !((Const *) targ)->constisnull)
			t = DatumGetFloat8(((Const *) targ)->constvalue);
		if (list_length(sreq->args) != 3)
			sreq->selectivity = DEFAULT_MATCHING_SEL;
		else
			sreq->selectivity = lsh_similar_restriction_sel(sreq->root,
															list_make2(linitial(sreq->args), lsecond(sreq->args)),
															sreq->is_join ? 0 : sreq->varRelid, t);
		PG_RETURN_POINTER(rawreq);
	}
	if (!IsA(rawreq, SupportRequestIndexCondition))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestIndexCondition *) rawreq;
	/* only for lsh indexes, and for the call form minhash_similar(a, b, t) */
	if (!mh_is_lsh_indexinfo(req->index) || !is_funcclause(req->node))
		PG_RETURN_POINTER(NULL);
	call = (FuncExpr *) req->node;
	if (list_length(call->args) != 3 || req->indexarg > 1)
		PG_RETURN_POINTER(NULL);
	indexed = (Node *) list_nth(call->args, req->indexarg);
	query = (Node *) list_nth(call->args, 1 - req->indexarg);
	threshold = (Node *) lthird(call->args);
	/* the right side is computed once per scan: no Var of the indexed table */
	if (!is_pseudo_constant_for_index(req->root, query, req->index) ||
		!is_pseudo_constant_for_index(req->root, threshold, req->index))
		PG_RETURN_POINTER(NULL);
	opno = threshold_operator(req->opfamily, exprType(indexed), &righttype);
	if (!OidIsValid(opno))
		PG_RETURN_POINTER(NULL);

	row = makeNode(RowExpr);
	row->args = list_make2(query, threshold);
	row->row_typeid = righttype;
	row->row_format = COERCE_EXPLICIT_CAST;
	row->colnames = NIL;
	row->location = -1;
	req->lossy = false;
	PG_RETURN_POINTER(list_make1(make_opclause(opno, BOOLOID, false, (Expr *) indexed,
											   (Expr *) row, InvalidOid, InvalidOid)));
}
