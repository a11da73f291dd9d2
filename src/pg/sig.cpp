/*
 * Helpers shared by every function that takes or builds a signature:
 * allocation, validation, compatibility checks, the cached hash family, and
 * turning core failures into PostgreSQL errors.
 */
#include <exception>
#include <new>

#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
#include "miscadmin.h"
#include "utils/memutils.h"
}

MinHashSig *
minhash_sig_alloc(int num_perm, uint64 seed)
{
	Size		size = MINHASH_SIG_SIZE(num_perm);
	MinHashSig *sig = (MinHashSig *) palloc0(size);

	SET_VARSIZE(sig, size);
	sig->version = MINHASH_FORMAT_VERSION;
	sig->flags = 0;
	sig->num_perm = (uint16) num_perm;
	sig->seed = seed;
	minhash::signature_init(sig->values, num_perm);
	return sig;
}

void
minhash_check_num_perm(int num_perm)
{
	if (num_perm < MINHASH_MIN_NUM_PERM || num_perm > MINHASH_MAX_NUM_PERM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_perm must be between %d and %d, not %d",
						MINHASH_MIN_NUM_PERM, MINHASH_MAX_NUM_PERM, num_perm)));
}

void
minhash_check_compatible(const MinHashSig *a, const MinHashSig *b)
{
	/* Positions of signatures from different families estimate nothing. */
	if (a->num_perm != b->num_perm)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signatures have different num_perm"),
				 errdetail("The first has num_perm %d, the second %d.",
						   (int) a->num_perm, (int) b->num_perm),
				 errhint("Signatures are comparable only when built with the same num_perm and seed; "
						 "an explicit cast to minhash(k) shortens a signature.")));
	if (a->seed != b->seed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signatures have different seeds"),
				 errdetail("The first has seed %lld, the second %lld.",
						   (long long) (int64) a->seed, (long long) (int64) b->seed),
				 errhint("Signatures are comparable only when built with the same num_perm and seed.")));
}

MinHashSig *
minhash_sig_detoast(Datum d)
{
	MinHashSig *sig = (MinHashSig *) PG_DETOAST_DATUM(d);
	Size		size = VARSIZE(sig);

	if (size < MINHASH_SIG_SIZE(0) ||
		sig->version != MINHASH_FORMAT_VERSION ||
		sig->num_perm < MINHASH_MIN_NUM_PERM || sig->num_perm > MINHASH_MAX_NUM_PERM ||
		size != MINHASH_SIG_SIZE(sig->num_perm))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid minhash signature"),
				 errdetail("Size %zu, format version %d.", (size_t) size,
						   size >= MINHASH_SIG_SIZE(0) ? (int) sig->version : -1)));
	return sig;
}

const minhash::PermutationFamily *
minhash_family(MemoryContext mcxt, minhash::PermutationFamily **slot,
			   int num_perm, uint64 seed)
{
	minhash::PermutationFamily *family = *slot;

	if (family == NULL)
	{
		family = (minhash::PermutationFamily *)
			MemoryContextAlloc(mcxt, sizeof(minhash::PermutationFamily));
		family->num_perm = 0;	/* no family yet: never matches below */
		*slot = family;
	}
	if (family->num_perm != num_perm || family->seed != seed)
		minhash::init_permutation_family(family, num_perm, seed);
	return family;
}

void
minhash_core_error_from_current(CoreError *err) noexcept
{
	err->kind = CORE_FAILED;
	strlcpy(err->message, "unknown exception", sizeof(err->message));
	try
	{
		throw;
	}
	catch (const std::bad_alloc &)
	{
		err->kind = CORE_OUT_OF_MEMORY;
		strlcpy(err->message, "out of memory", sizeof(err->message));
	}
	catch (const std::exception &e)
	{
		strlcpy(err->message, e.what(), sizeof(err->message));
	}
	catch (...)
	{
	}
}

void
minhash_report_core_error(const CoreError *err)
{
	if (err->kind == CORE_OUT_OF_MEMORY)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("The minhash core library could not allocate memory.")));
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("minhash core library failed: %s", err->message)));
	pg_unreachable();
}

const volatile sig_atomic_t *
minhash_interrupt_flag(void)
{
	return INTERRUPTS_CAN_BE_PROCESSED() ? &InterruptPending : NULL;
}
