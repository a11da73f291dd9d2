/*
 * LSH helpers at the SQL level: choosing bands and rows for a threshold, the
 * band hashes of a signature, and the band keys an lsh index stores and
 * probes (its probe rule, lsh_probe.cpp, for band keys computed outside an
 * index: Citus, sharded tables).
 */
#include "pg/pg_prelude.h"

#include <cmath>

#include "core/hash.h"
#include "core/lsh_params.h"
#include "pg/lsh/lsh.h"
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
 * Band i hashes values [i·r, i·r + depth), seeded with i (minhash 1.0's band
 * hash; with depth = r what a version-1 lsh index keyed).
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

/* the parameters an lsh index with these bands and rows has (prefix keys) */
static LshIndexParams
prefix_params(int32 bands, int32 rows)
{
	LshIndexParams params;

	memset(&params, 0, sizeof(params));
	params.bands = bands;
	params.rows = rows;
	params.version = LSH_VERSION;
	params.layout = minhash::prefix_layout(bands, rows);
	return params;
}

/*
 * minhash_bands(sig, bands, rows, depth) → int8[]: the band keys an lsh index
 * with these bands and rows stores (32-bit prefix keys, its band number in
 * the top bits), on the bits a probe of that depth compares (lsh_probe_mask,
 * the one probe rule, lsh_probe.cpp): two rows have an equal element exactly
 * where such a probe finds one from the other -- their first depth values
 * agree, or the few bits the key keeps of differing ones do.
 */
extern "C" Datum
minhash_bands_depth(PG_FUNCTION_ARGS)
{
	/* 32-bit values as the index keys them: an oph sketch densified, compact values widened */
	MinHashSig *sig = DatumGetMinHashSig(PG_GETARG_DATUM(0));
	int32		bands = PG_GETARG_INT32(1);
	int32		rows = PG_GETARG_INT32(2);
	int32		depth = PG_GETARG_INT32(3);
	LshIndexParams params;
	uint32		mask;
	uint32	   *keys;
	Datum	   *elems;

	check_bands(sig->num_perm, bands, rows, depth);
	params = prefix_params(bands, rows);
	mask = lsh_probe_mask(&params, depth);
	keys = (uint32 *) palloc(sizeof(uint32) * bands);
	minhash::prefix_band_keys(params.layout, sig->values, keys);
	elems = (Datum *) palloc(sizeof(Datum) * bands);
	for (int b = 0; b < bands; b++)
		elems[b] = Int64GetDatum((int64) (keys[b] & mask));
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, bands, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE));
}

/*
 * minhash_first_band(a, b, bands, rows, depth) → int4: the first band (1 for
 * the first) whose keys a probe of that depth matches (minhash_bands with
 * depth equal at that position; core prefix_keys_agree), NULL if none. Two
 * rows meet in every band they share; an all-pairs search that reports a
 * pair only from the bucket of this band reports it once (the index walk's
 * rule, lsh_probe_first_key).
 */
extern "C" Datum
minhash_first_band(PG_FUNCTION_ARGS)
{
	/* the index's form of both, as minhash_bands(sig, bands, rows, depth) */
	MinHashSig *a = DatumGetMinHashSig(PG_GETARG_DATUM(0));
	MinHashSig *b = DatumGetMinHashSig(PG_GETARG_DATUM(1));
	int32		bands = PG_GETARG_INT32(2);
	int32		rows = PG_GETARG_INT32(3);
	int32		depth = PG_GETARG_INT32(4);
	LshIndexParams params;

	minhash_check_compatible(a, b);
	check_bands(a->num_perm, bands, rows, depth);
	params = prefix_params(bands, rows);
	for (int i = 0; i < bands; i++)
	{
		if (minhash::prefix_keys_agree(params.layout, a->values, b->values, i, depth))
			PG_RETURN_INT32(i + 1);
	}
	PG_RETURN_NULL();
}
