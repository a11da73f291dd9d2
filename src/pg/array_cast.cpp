/*
 * Export and import of signatures as int8[] (the values; int8 because SQL has
 * no unsigned 32-bit type), for other MinHash tools. The family and seed are
 * not part of the array: they are given on import. The cast int8[] → minhash
 * and minhash_from_array(values, seed) import native signatures (as in 1.0);
 * minhash_from_array(values, family, seed) names the family, and
 * minhash_from_array(values, family, seed, bits) the width of a compact
 * signature. Export gives the stored values: the low bits of a compact
 * signature, an oph sketch undensified (empty bins 4294967295).
 */
#include "pg/pg_prelude.h"

#include "core/bbit.h"
#include "pg/minhash.h"

extern "C" {
#include "catalog/pg_type.h"
#include "utils/array.h"

PG_FUNCTION_INFO_V1(minhash_to_array);
PG_FUNCTION_INFO_V1(minhash_from_array);
PG_FUNCTION_INFO_V1(minhash_from_array_family);
PG_FUNCTION_INFO_V1(minhash_from_array_bits);
}

extern "C" Datum
minhash_to_array(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);
	Datum	   *elems = (Datum *) palloc(sizeof(Datum) * sig->num_perm);
	uint32		values[MINHASH_MAX_NUM_PERM];

	minhash::widen_values(sig->values, sig->num_perm, (minhash::ValueWidth) MinHashSigWidth(sig),
						  values);
	for (int i = 0; i < sig->num_perm; i++)
		elems[i] = Int64GetDatum((int64) values[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, sig->num_perm, INT8OID, sizeof(int64), true,
										  TYPALIGN_DOUBLE));
}

static MinHashSig *
from_array(ArrayType *arr, uint64 seed, int family, int width = MINHASH_WIDTH_32)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int64		limit = ((int64) 1 << MINHASH_WIDTH_BITS(width)) - 1;
	uint32		values[MINHASH_MAX_NUM_PERM];
	MinHashSig *sig;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("signature values must be a one-dimensional array")));
	deconstruct_array(arr, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE, &elems, &nulls, &n);
	if (n < MINHASH_MIN_NUM_PERM || n > MINHASH_MAX_NUM_PERM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a signature has between %d and %d values, not %d",
						MINHASH_MIN_NUM_PERM, MINHASH_MAX_NUM_PERM, n)));

	minhash_check_family_seed(family, seed);
	sig = minhash_sig_alloc_width(n, seed, family, width);
	for (int i = 0; i < n; i++)
	{
		int64		v;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("signature values must not be null"),
					 errdetail("Element %d is null.", i + 1)));
		v = DatumGetInt64(elems[i]);
		if (v < 0 || v > limit)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("signature value %lld is out of range", (long long) v),
					 errdetail("Values are unsigned %d-bit integers, from 0 to %lld; element %d is not.",
							   MINHASH_WIDTH_BITS(width), (long long) limit, i + 1)));
		values[i] = (uint32) v;
	}
	minhash::narrow_values(values, n, (minhash::ValueWidth) width, sig->values);
	return sig;
}

/* minhash_from_array(int8[] [, seed int8]): native; the cast int8[] → minhash passes no seed (1) */
extern "C" Datum
minhash_from_array(PG_FUNCTION_ARGS)
{
	uint64		seed = PG_NARGS() > 1 ? (uint64) PG_GETARG_INT64(1) : 1;

	PG_RETURN_MINHASH_P(from_array(PG_GETARG_ARRAYTYPE_P(0), seed, MINHASH_FAMILY_NATIVE));
}

/* minhash_from_array(int8[], family minhash_family, seed int8) */
extern "C" Datum
minhash_from_array_family(PG_FUNCTION_ARGS)
{
	int			family = minhash_family_arg(PG_GETARG_DATUM(1));

	PG_RETURN_MINHASH_P(from_array(PG_GETARG_ARRAYTYPE_P(0), (uint64) PG_GETARG_INT64(2),
								   family));
}

/* minhash_from_array(int8[], family minhash_family, seed int8, bits int4) */
extern "C" Datum
minhash_from_array_bits(PG_FUNCTION_ARGS)
{
	int			family = minhash_family_arg(PG_GETARG_DATUM(1));
	int			width = minhash_width_arg(PG_GETARG_INT32(3));

	PG_RETURN_MINHASH_P(from_array(PG_GETARG_ARRAYTYPE_P(0), (uint64) PG_GETARG_INT64(2),
								   family, width));
}
