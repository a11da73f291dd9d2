/*
 * Exact equality and a total order of signatures: the operators = <> < <= >
 * >= and the btree and hash support functions behind GROUP BY, DISTINCT,
 * UNIQUE, merge and hash joins.
 *
 * Unlike the estimate (jaccard, %, <%>), which rejects signatures of
 * different families, num_perm or seeds, these compare any two signatures:
 * an operator class must order every value, and two signatures built
 * differently are simply not equal. The order has no meaning beyond being
 * total and stable: family, then seed (signed, as minhash_seed shows it),
 * then num_perm, then the width (32 bits first), then the stored values as
 * unsigned integers, position by position (an oph sketch undensified, as
 * stored: equal means the same bytes, which is what the hash functions
 * hash).
 */
#include "pg/pg_prelude.h"

#include "core/bbit.h"
#include "pg/minhash.h"

extern "C" {
#include "common/hashfn.h"

PG_FUNCTION_INFO_V1(minhash_eq);
PG_FUNCTION_INFO_V1(minhash_ne);
PG_FUNCTION_INFO_V1(minhash_lt);
PG_FUNCTION_INFO_V1(minhash_le);
PG_FUNCTION_INFO_V1(minhash_gt);
PG_FUNCTION_INFO_V1(minhash_ge);
PG_FUNCTION_INFO_V1(minhash_cmp);
PG_FUNCTION_INFO_V1(minhash_hash);
PG_FUNCTION_INFO_V1(minhash_hash_extended);
}

static int
compare(const MinHashSig *a, const MinHashSig *b)
{
	int			fa = MinHashSigFamily(a);
	int			fb = MinHashSigFamily(b);
	int			k;

	if (fa != fb)
		return fa < fb ? -1 : 1;
	if (a->seed != b->seed)
		return (int64) a->seed < (int64) b->seed ? -1 : 1;
	if (a->num_perm != b->num_perm)
		return a->num_perm < b->num_perm ? -1 : 1;
	if (MinHashSigWidth(a) != MinHashSigWidth(b))
		return MinHashSigWidth(a) < MinHashSigWidth(b) ? -1 : 1;
	k = a->num_perm;
	if (MinHashSigWidth(a) == MINHASH_WIDTH_32)
	{
		for (int i = 0; i < k; i++)
			if (a->values[i] != b->values[i])
				return a->values[i] < b->values[i] ? -1 : 1;
		return 0;
	}
	for (int i = 0; i < k; i++)
	{
		uint32		va,
					vb;

		minhash::widen_values((const char *) a->values + MINHASH_WIDTH_BYTES(MinHashSigWidth(a)) * i,
							  1, (minhash::ValueWidth) MinHashSigWidth(a), &va);
		minhash::widen_values((const char *) b->values + MINHASH_WIDTH_BYTES(MinHashSigWidth(b)) * i,
							  1, (minhash::ValueWidth) MinHashSigWidth(b), &vb);
		if (va != vb)
			return va < vb ? -1 : 1;
	}
	return 0;
}

static int
compare_args(FunctionCallInfo fcinfo)
{
	MinHashSig *a = PG_GETARG_MINHASH_P(0);
	MinHashSig *b = PG_GETARG_MINHASH_P(1);
	int			r = compare(a, b);

	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	return r;
}

extern "C" Datum
minhash_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) == 0);
}

extern "C" Datum
minhash_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) != 0);
}

extern "C" Datum
minhash_lt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) < 0);
}

extern "C" Datum
minhash_le(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) <= 0);
}

extern "C" Datum
minhash_gt(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) > 0);
}

extern "C" Datum
minhash_ge(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(compare_args(fcinfo) >= 0);
}

extern "C" Datum
minhash_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(compare_args(fcinfo));
}

/*
 * The hash of everything equality compares: the bytes after the varlena
 * header (version, flags, num_perm, seed, values at their width; the struct
 * has no padding).
 * A detoasted signature always has a 4-byte header.
 */
static_assert(offsetof(MinHashSig, values) == 16, "MinHashSig has no padding");

extern "C" Datum
minhash_hash(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);
	Datum		h = hash_any((const unsigned char *) VARDATA(sig), VARSIZE(sig) - VARHDRSZ);

	PG_FREE_IF_COPY(sig, 0);
	return h;
}

extern "C" Datum
minhash_hash_extended(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);
	Datum		h = hash_any_extended((const unsigned char *) VARDATA(sig),
									  VARSIZE(sig) - VARHDRSZ, PG_GETARG_INT64(1));

	PG_FREE_IF_COPY(sig, 0);
	return h;
}
