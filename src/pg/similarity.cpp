/*
 * Comparing and combining signatures: jaccard (the estimate), the operators
 * % <%> = <> |, and the accessors.
 *
 * Every binary function requires the same num_perm and seed: positions of
 * signatures from different hash families carry no information about each
 * other, so "not similar" would be a silent wrong answer.
 */
#include "core/jaccard.h"
#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
PG_FUNCTION_INFO_V1(minhash_jaccard);
PG_FUNCTION_INFO_V1(minhash_similar);
PG_FUNCTION_INFO_V1(minhash_distance);
PG_FUNCTION_INFO_V1(minhash_eq);
PG_FUNCTION_INFO_V1(minhash_ne);
PG_FUNCTION_INFO_V1(minhash_merge);
PG_FUNCTION_INFO_V1(minhash_cardinality);
PG_FUNCTION_INFO_V1(minhash_num_perm);
PG_FUNCTION_INFO_V1(minhash_seed);
}

static double
estimate(FunctionCallInfo fcinfo)
{
	MinHashSig *a = PG_GETARG_MINHASH_P(0);
	MinHashSig *b = PG_GETARG_MINHASH_P(1);

	minhash_check_compatible(a, b);
	return minhash::jaccard_estimate(a->values, b->values, a->num_perm);
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

/* a <%> b: the Jaccard distance, for ORDER BY ... LIMIT */
extern "C" Datum
minhash_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(1.0 - estimate(fcinfo));
}

static bool
equal(FunctionCallInfo fcinfo)
{
	MinHashSig *a = PG_GETARG_MINHASH_P(0);
	MinHashSig *b = PG_GETARG_MINHASH_P(1);

	minhash_check_compatible(a, b);
	return memcmp(a->values, b->values, sizeof(uint32) * a->num_perm) == 0;
}

extern "C" Datum
minhash_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(equal(fcinfo));
}

extern "C" Datum
minhash_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(!equal(fcinfo));
}

/* a | b: the element-wise minimum is exactly the signature of the union */
extern "C" Datum
minhash_merge(PG_FUNCTION_ARGS)
{
	MinHashSig *a = PG_GETARG_MINHASH_P(0);
	MinHashSig *b = PG_GETARG_MINHASH_P(1);
	MinHashSig *result;

	minhash_check_compatible(a, b);
	result = minhash_sig_alloc(a->num_perm, a->seed);
	memcpy(result->values, a->values, sizeof(uint32) * a->num_perm);
	minhash::signature_merge(result->values, b->values, a->num_perm);
	PG_RETURN_MINHASH_P(result);
}

extern "C" Datum
minhash_cardinality(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);

	PG_RETURN_FLOAT8(minhash::cardinality_estimate(sig->values, sig->num_perm));
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
