/*
 * LSH helpers at the SQL level: choosing bands and rows for a threshold, and
 * the band hashes of a signature (what an lsh index stores per band).
 */
#include "pg/pg_prelude.h"

#include <cmath>

#include "core/hash.h"
#include "core/lsh_params.h"
#include "pg/minhash.h"

/* funcapi.h reaches the spinlock headers, which use C's "register" */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wregister"
extern "C" {
#include "funcapi.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(minhash_lsh_params);
PG_FUNCTION_INFO_V1(minhash_bands);
PG_FUNCTION_INFO_V1(minhash_bands_depth);
PG_FUNCTION_INFO_V1(minhash_first_band);
}
#pragma GCC diagnostic pop

static void
check_unit_interval(const char *name, double v)
{
	if (std::isnan(v) || v < 0.0 || v > 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 0 and 1, not %g", name, v)));
}

static void
check_weight(const char *name, double v)
{
	if (!std::isfinite(v) || v < 0.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a finite number not less than 0, not %g", name, v)));
}

/* minhash_lsh_params(threshold, num_perm, fp_weight, fn_weight) → one row */
extern "C" Datum
minhash_lsh_params(PG_FUNCTION_ARGS)
{
	double		threshold = PG_GETARG_FLOAT8(0);
	int32		num_perm = PG_GETARG_INT32(1);
	double		fp_weight = PG_GETARG_FLOAT8(2);
	double		fn_weight = PG_GETARG_FLOAT8(3);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	minhash::LshParams p;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	check_unit_interval("threshold", threshold);
	minhash_check_num_perm(num_perm);
	check_weight("fp_weight", fp_weight);
	check_weight("fn_weight", fn_weight);
	if (fp_weight == 0.0 && fn_weight == 0.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fp_weight and fn_weight must not both be 0")));

	p = minhash::choose_lsh_params(threshold, num_perm, fp_weight, fn_weight);

	InitMaterializedSRF(fcinfo, 0);
	values[0] = Int32GetDatum(p.bands);
	values[1] = Int32GetDatum(p.rows);
	values[2] = Float8GetDatum(p.false_positive_area);
	values[3] = Float8GetDatum(p.false_negative_area);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

/* ERRCODE_INVALID_PARAMETER_VALUE unless bands x rows fit k and 1 <= depth <= rows */
static void
check_bands(int num_perm, int32 bands, int32 rows, int32 depth)
{
	if (bands < 1 || rows < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bands and rows must be at least 1, not %d and %d", bands, rows)));
	if ((int64) bands * rows > num_perm)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bands * rows must not exceed num_perm"),
				 errdetail("%d bands of %d rows need %lld values, the signature has %d.",
						   bands, rows, (long long) bands * rows, num_perm)));
	if (depth < 1 || depth > rows)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("depth must be between 1 and rows (%d), not %d", rows, depth)));
}

/*
 * Band i hashes values [i·r, i·r + depth), seeded with i: rows agreeing on
 * the first depth values of a band (an lsh probe or all-pairs walk below the
 * index's design threshold, docs/lsh.md "Probe depth") share its key.
 */
static Datum
band_keys(MinHashSig *sig, int32 bands, int32 rows, int32 depth)
{
	uint32		values[MINHASH_MAX_NUM_PERM];
	Datum	   *elems;

	check_bands(sig->num_perm, bands, rows, depth);
	/* the values comparisons see: an oph sketch densified, compact values widened */
	minhash_sig_values32(sig, values);
	elems = (Datum *) palloc(sizeof(Datum) * bands);
	for (int b = 0; b < bands; b++)
		elems[b] = Int64GetDatum((int64) minhash::band_hash(values + (size_t) b * rows, depth, b));
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, bands, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE));
}

/* minhash_bands(sig, bands, rows) → int8[]: band i hashes values [i·r, (i+1)·r) */
extern "C" Datum
minhash_bands(PG_FUNCTION_ARGS)
{
	int32		rows = PG_GETARG_INT32(2);

	return band_keys(PG_GETARG_MINHASH_P(0), PG_GETARG_INT32(1), rows, Max(rows, 1));
}

/* minhash_bands(sig, bands, rows, depth) → int8[]: the first depth values of each band */
extern "C" Datum
minhash_bands_depth(PG_FUNCTION_ARGS)
{
	return band_keys(PG_GETARG_MINHASH_P(0), PG_GETARG_INT32(1), PG_GETARG_INT32(2),
					 PG_GETARG_INT32(3));
}

/*
 * minhash_first_band(a, b, bands, rows, depth) → int4: the first band (1 for
 * the first) in which a and b agree on the first depth values, NULL if none.
 * Two rows meet in every band they share; an all-pairs search that reports
 * a pair only from the bucket of this band reports it once
 * (src/pg/pairs/pairs_walk.cpp does the same in the index).
 */
extern "C" Datum
minhash_first_band(PG_FUNCTION_ARGS)
{
	MinHashSig *a = PG_GETARG_MINHASH_P(0);
	MinHashSig *b = PG_GETARG_MINHASH_P(1);
	int32		bands = PG_GETARG_INT32(2);
	int32		rows = PG_GETARG_INT32(3);
	int32		depth = PG_GETARG_INT32(4);

	minhash_check_compatible(a, b);
	check_bands(a->num_perm, bands, rows, depth);
	for (int i = 0; i < bands; i++)
	{
		const uint32 *x = a->values + (size_t) i * rows;
		const uint32 *y = b->values + (size_t) i * rows;
		int			v = 0;

		while (v < depth && x[v] == y[v])
			v++;
		if (v == depth)
			PG_RETURN_INT32(i + 1);
	}
	PG_RETURN_NULL();
}
