/*
 * Comparing and combining signatures: jaccard (the estimate), the operators
 * % <%> | %>=, minhash_similar(sig, q, t), and the accessors. (Exact equality
 * and order, = <> < <= > >=, are in compare.cpp.)
 *
 * Every binary function requires the same family, num_perm, seed and width:
 * positions of signatures from different hash families carry no information
 * about each other, so "not similar" would be a silent wrong answer, and
 * the estimate corrects for chance collisions of the width both share
 * (minhash_sig_estimate, sig.cpp; it keeps the densified form of an oph
 * argument in fn_extra, so a query compared with every row is densified
 * once).
 */
#include "pg/pg_prelude.h"

#include "core/jaccard.h"
#include "core/oph.h"
#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
#include "executor/executor.h"
#include "funcapi.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(minhash_jaccard);
PG_FUNCTION_INFO_V1(minhash_similar);
PG_FUNCTION_INFO_V1(minhash_similar_t);
PG_FUNCTION_INFO_V1(minhash_similar_query);
PG_FUNCTION_INFO_V1(minhash_distance);
PG_FUNCTION_INFO_V1(minhash_merge);
PG_FUNCTION_INFO_V1(minhash_cardinality);
PG_FUNCTION_INFO_V1(minhash_num_perm);
PG_FUNCTION_INFO_V1(minhash_seed);
PG_FUNCTION_INFO_V1(minhash_sig_family);
PG_FUNCTION_INFO_V1(minhash_sig_bits);
}

static double
estimate(FunctionCallInfo fcinfo)
{
	MinHashSig *a = PG_GETARG_MINHASH_P(0);
	MinHashSig *b = PG_GETARG_MINHASH_P(1);

	return minhash_sig_estimate_in(fcinfo->flinfo, a, b);
}

extern "C" Datum
minhash_jaccard(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(estimate(fcinfo));
}

/* a % b: the GUC is read on every call, so SET applies to the next query. */
extern "C" Datum
minhash_similar(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(estimate(fcinfo) >= minhash_threshold());
}

static double
threshold_arg(double t)
{
	if (!(t >= 0.0 && t <= 1.0))	/* also rejects NaN */
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("threshold must be between 0 and 1, not %g", t)));
	return t;
}

/*
 * minhash_similar(a, b, t): estimate >= t with t in the query, IMMUTABLE (no
 * GUC), so postgres_fdw ships it. The planner support function
 * (lsh_support.cpp) turns it into the lsh index condition a %>= (b, t).
 */
extern "C" Datum
minhash_similar_t(PG_FUNCTION_ARGS)
{
	double		t = threshold_arg(PG_GETARG_FLOAT8(2));

	PG_RETURN_BOOL(estimate(fcinfo) >= t);
}

bool
minhash_query_fields(Datum query, Datum *sig, double *threshold)
{
	HeapTupleHeader th = DatumGetHeapTupleHeader(query);
	bool		isnull;
	Datum		t;

	*sig = GetAttributeByNum(th, 1, &isnull);
	if (isnull)
		return false;
	t = GetAttributeByNum(th, 2, &isnull);
	if (isnull)
		return false;
	*threshold = threshold_arg(DatumGetFloat8(t));
	return true;
}

/* a %>= (b, t)::minhash_query: the operator form of minhash_similar(a, b, t) */
extern "C" Datum
minhash_similar_query(PG_FUNCTION_ARGS)
{
	MinHashSig *a = PG_GETARG_MINHASH_P(0);
	MinHashSig *b;
	Datum		q;
	double		t;

	if (!minhash_query_fields(PG_GETARG_DATUM(1), &q, &t))
		PG_RETURN_NULL();
	b = minhash_sig_detoast(q);
	PG_RETURN_BOOL(minhash_sig_estimate_in(fcinfo->flinfo, a, b) >= t);
}

/* a <%> b: the Jaccard distance, for ORDER BY ... LIMIT */
extern "C" Datum
minhash_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(1.0 - estimate(fcinfo));
}

/*
 * a | b: the element-wise minimum is exactly the signature of the union (of
 * an oph sketch too: it is stored undensified); compact signatures refuse.
 */
extern "C" Datum
minhash_merge(PG_FUNCTION_ARGS)
{
	MinHashSig *a = PG_GETARG_MINHASH_P(0);
	MinHashSig *b = PG_GETARG_MINHASH_P(1);
	MinHashSig *result;

	minhash_check_mergeable(a, b, "|");
	result = minhash_sig_alloc(a->num_perm, a->seed, MinHashSigFamily(a));
	memcpy(result->values, a->values, sizeof(uint32) * a->num_perm);
	minhash::signature_merge(result->values, b->values, a->num_perm);
	PG_RETURN_MINHASH_P(result);
}

extern "C" Datum
minhash_cardinality(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);

	/* the estimate reads the size of the minima, which compact values lose */
	if (MinHashSigWidth(sig) != MINHASH_WIDTH_32)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash_cardinality needs 32-bit signature values"),
				 errdetail("This signature keeps the low %d bits of each value; the estimate reads how small the minima are.",
						   MINHASH_WIDTH_BITS(MinHashSigWidth(sig))),
				 errhint("Estimate from the 32-bit signature, before the cast to minhash(%d, %d).",
						 (int) sig->num_perm, MINHASH_WIDTH_BITS(MinHashSigWidth(sig)))));
	if (MinHashSigFamily(sig) == MINHASH_FAMILY_OPH)
		PG_RETURN_FLOAT8(minhash::oph_cardinality_estimate(sig->values, sig->num_perm));
	PG_RETURN_FLOAT8(minhash::cardinality_estimate(sig->values, sig->num_perm));
}

/* minhash_bits(sig): 32, or 16 or 8 for a compact signature */
extern "C" Datum
minhash_sig_bits(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(MINHASH_WIDTH_BITS(MinHashSigWidth(PG_GETARG_MINHASH_P(0))));
}

extern "C" Datum
minhash_num_perm(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(PG_GETARG_MINHASH_P(0)->num_perm);
}

extern "C" Datum
minhash_seed(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) PG_GETARG_MINHASH_P(0)->seed);
}

/* minhash_family(sig): the enum minhash_family value of the signature's family */
extern "C" Datum
minhash_sig_family(PG_FUNCTION_ARGS)
{
	const char *name = minhash_family_name(MinHashSigFamily(PG_GETARG_MINHASH_P(0)));

	return DirectFunctionCall2(enum_in, CStringGetDatum(name),
							   ObjectIdGetDatum(get_fn_expr_rettype(fcinfo->flinfo)));
}
