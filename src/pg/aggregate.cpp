/*
 * Aggregates: minhash_agg(element [, num_perm, seed]) builds the signature of
 * the set of its input values; minhash_merge_agg(minhash) the signature of the
 * union of its input signatures.
 *
 * minhash_agg's state is a MinHashSig palloc'd in the aggregate context and
 * updated in place. Signatures merge by element-wise minimum, so partial
 * states of parallel workers combine exactly: the parallel result equals the
 * serial one. The serialized state is simply the signature's bytes.
 *
 * Zero input rows give NULL (like array_agg); rows whose element is NULL are
 * skipped, so rows that are all NULL give the empty set's signature -- in both
 * cases minhash_agg(x) = minhash(array_agg(x)).
 */
#include "pg/pg_prelude.h"

#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
#include "utils/builtins.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(minhash_agg_trans);
PG_FUNCTION_INFO_V1(minhash_agg_final);
PG_FUNCTION_INFO_V1(minhash_agg_combine);
PG_FUNCTION_INFO_V1(minhash_agg_serial);
PG_FUNCTION_INFO_V1(minhash_agg_deserial);
PG_FUNCTION_INFO_V1(minhash_merge_trans);
}

/* fn_extra of the transition function */
typedef struct AggCache
{
	minhash::PermutationFamily *family;
	bool		have_elem;
	ElementText elem;
} AggCache;

static MemoryContext
agg_context(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext aggcontext;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "%s called in non-aggregate context", fname);
	return aggcontext;
}

static MinHashSig *
copy_sig_to(MemoryContext cxt, const MinHashSig *sig)
{
	MinHashSig *copy = (MinHashSig *) MemoryContextAlloc(cxt, VARSIZE(sig));

	memcpy(copy, sig, VARSIZE(sig));
	return copy;
}

/* minhash_agg_trans(internal, anyelement [, int4, int8]) */
extern "C" Datum
minhash_agg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = agg_context(fcinfo, "minhash_agg_trans");
	MinHashSig *state = PG_ARGISNULL(0) ? NULL : (MinHashSig *) PG_GETARG_POINTER(0);
	int32		num_perm = 128;
	uint64		seed = 1;
	AggCache   *cache;
	const minhash::PermutationFamily *family;
	uint64		h;

	if (PG_NARGS() > 2)
	{
		if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("num_perm and seed of minhash_agg must not be null")));
		num_perm = PG_GETARG_INT32(2);
		seed = (uint64) PG_GETARG_INT64(3);
	}

	if (state == NULL)
	{
		minhash_check_num_perm(num_perm);
		MemoryContext old = MemoryContextSwitchTo(aggcontext);

		state = minhash_sig_alloc(num_perm, seed, MINHASH_FAMILY_NATIVE);
		MemoryContextSwitchTo(old);
	}
	else if (state->num_perm != num_perm || state->seed != seed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_perm and seed of minhash_agg must be the same in every row"),
				 errdetail("The group started with num_perm %d and seed %lld, a later row has num_perm %d and seed %lld.",
						   (int) state->num_perm, (long long) (int64) state->seed,
						   num_perm, (long long) (int64) seed)));

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(state);

	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(AggCache));
	cache = (AggCache *) fcinfo->flinfo->fn_extra;
	if (!cache->have_elem)
	{
		Oid			elemtype = get_fn_expr_argtype(fcinfo->flinfo, 1);

		if (!OidIsValid(elemtype))
			elog(ERROR, "could not determine the input type of minhash_agg");
		element_text_init(&cache->elem, elemtype, fcinfo->flinfo->fn_mcxt);
		cache->have_elem = true;
	}
	family = minhash_family(fcinfo->flinfo->fn_mcxt, &cache->family, num_perm, seed,
							 MINHASH_FAMILY_NATIVE);

	h = element_hash(&cache->elem, PG_GETARG_DATUM(1), MINHASH_FAMILY_NATIVE);
	minhash::signature_update(*family, &h, 1, state->values);
	PG_RETURN_POINTER(state);
}

/* minhash_agg_final(internal) → minhash: a copy, the state may still be advanced (window aggregates) */
extern "C" Datum
minhash_agg_final(PG_FUNCTION_ARGS)
{
	MinHashSig *state;

	agg_context(fcinfo, "minhash_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (MinHashSig *) PG_GETARG_POINTER(0);
	PG_RETURN_MINHASH_P(copy_sig_to(CurrentMemoryContext, state));
}

/* minhash_agg_combine(internal, internal) → internal */
extern "C" Datum
minhash_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = agg_context(fcinfo, "minhash_agg_combine");
	MinHashSig *a = PG_ARGISNULL(0) ? NULL : (MinHashSig *) PG_GETARG_POINTER(0);
	MinHashSig *b = PG_ARGISNULL(1) ? NULL : (MinHashSig *) PG_GETARG_POINTER(1);

	if (b == NULL)
	{
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(a);
	}
	/* The state must live in the aggregate context, b need not. */
	if (a == NULL)
		PG_RETURN_POINTER(copy_sig_to(aggcontext, b));

	minhash_check_mergeable(a, b, "minhash_agg");
	minhash::signature_merge(a->values, b->values, a->num_perm);
	PG_RETURN_POINTER(a);
}

/* minhash_agg_serial(internal) → bytea: the signature's varlena is its own serialization */
extern "C" Datum
minhash_agg_serial(PG_FUNCTION_ARGS)
{
	MinHashSig *state;

	agg_context(fcinfo, "minhash_agg_serial");
	state = (MinHashSig *) PG_GETARG_POINTER(0);
	PG_RETURN_BYTEA_P(copy_sig_to(CurrentMemoryContext, state));
}

/* minhash_agg_deserial(bytea, internal) → internal */
extern "C" Datum
minhash_agg_deserial(PG_FUNCTION_ARGS)
{
	agg_context(fcinfo, "minhash_agg_deserial");
	/* Validates header and size as for any stored signature. */
	MinHashSig *sig = minhash_sig_detoast(PG_GETARG_DATUM(0));

	if ((Pointer) sig == DatumGetPointer(PG_GETARG_DATUM(0)))
		sig = copy_sig_to(CurrentMemoryContext, sig);
	PG_RETURN_POINTER(sig);
}

/*
 * minhash_merge_trans(minhash, minhash) → minhash: transition and combine
 * function of minhash_merge_agg. Strict, so nodeAgg makes a copy of the
 * first signature in the aggregate context the state; later ones are merged
 * into it.
 *
 * The state is merged in place when it is already the aggregate's own plain
 * signature: nodeAgg then sees the same pointer and copies nothing. A state
 * still in its stored form (short header, compressed or out of line, as the
 * first input was copied) is detoasted into per-call memory; that copy is
 * merged and returned, and nodeAgg copies it into the aggregate context and
 * frees the old state. (Copying it into the aggregate context here would
 * leak: nodeAgg copies any new pointer again.)
 */
extern "C" Datum
minhash_merge_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = agg_context(fcinfo, "minhash_merge_trans");
	Datum		state_datum = PG_GETARG_DATUM(0);
	MinHashSig *state = minhash_sig_detoast(state_datum);
	MinHashSig *next = PG_GETARG_MINHASH_P(1);

	/* an oph sketch merges as stored (undensified); compact signatures refuse */
	minhash_check_mergeable(state, next, "minhash_merge_agg");
	if ((Pointer) state == DatumGetPointer(state_datum) &&
		GetMemoryChunkContext(state) != aggcontext)
	{
		/* Plain but not the aggregate's (never seen, but do not scribble on it). */
		state = copy_sig_to(CurrentMemoryContext, state);
	}
	minhash::signature_merge(state->values, next->values, state->num_perm);
	PG_RETURN_MINHASH_P(state);
}
