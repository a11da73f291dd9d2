/*
 * Helpers shared by every function that takes or builds a signature:
 * allocation, validation, compatibility checks and the cached hash family.
 */
#include "pg/pg_prelude.h"

#include "core/datasketch.h"
#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
}

static_assert(MINHASH_MIN_NUM_PERM == minhash::kMinNumPerm &&
				  MINHASH_MAX_NUM_PERM == minhash::kMaxNumPerm,
			  "the glue's num_perm limits mirror the core's");

static_assert(MINHASH_NUM_FAMILIES == minhash::kNumHashFamilies,
			  "the glue's family count mirrors the core's");
static_assert(MINHASH_FAMILY_DATASKETCH == (int) minhash::HashFamily::Datasketch,
			  "family numbers are stored on disk: the glue and the core agree");

bool
minhash_flags_valid(int flags)
{
	return (flags & ~MINHASH_FLAGS_FAMILY_MASK) == 0 &&
		(flags & MINHASH_FLAGS_FAMILY_MASK) < MINHASH_NUM_FAMILIES;
}

const char *
minhash_family_name(int family)
{
	return minhash::hash_family_name((minhash::HashFamily) family);
}

int
minhash_family_arg(Datum family_enum)
{
	/* the enum's label; the enum and the core name the same families */
	char	   *label = DatumGetCString(DirectFunctionCall1(enum_out, family_enum));
	minhash::HashFamily family;

	if (!minhash::parse_hash_family(label, &family))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown minhash hash family \"%s\"", label),
				 errhint("Valid families are \"native\" and \"datasketch\".")));
	pfree(label);
	return (int) family;
}

void
minhash_check_family_seed(int family, uint64 seed)
{
	if (family == MINHASH_FAMILY_DATASKETCH && seed > minhash::kMaxDatasketchSeed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("seed %lld is out of range for the datasketch family",
						(long long) (int64) seed),
				 errdetail("datasketch seeds NumPy's RandomState, which takes 0 to %llu.",
						   (unsigned long long) minhash::kMaxDatasketchSeed)));
}

MinHashSig *
minhash_sig_alloc(int num_perm, uint64 seed, int family)
{
	Size		size = MINHASH_SIG_SIZE(num_perm);
	MinHashSig *sig = (MinHashSig *) palloc0(size);

	SET_VARSIZE(sig, size);
	sig->version = MINHASH_FORMAT_VERSION;
	sig->flags = (uint8) family;
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
	if (MinHashSigFamily(a) != MinHashSigFamily(b))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signatures have different hash families"),
				 errdetail("The first is a %s signature, the second a %s signature.",
						   minhash_family_name(MinHashSigFamily(a)),
						   minhash_family_name(MinHashSigFamily(b))),
				 errhint("Signatures are comparable only when built with the same hash family, num_perm and seed; "
						 "minhash_family() shows a signature's family.")));
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
		sig->version != MINHASH_FORMAT_VERSION || !minhash_flags_valid(sig->flags) ||
		sig->num_perm < MINHASH_MIN_NUM_PERM || sig->num_perm > MINHASH_MAX_NUM_PERM ||
		size != MINHASH_SIG_SIZE(sig->num_perm))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid minhash signature"),
				 errdetail("Size %zu, format version %d, flags %d.", (size_t) size,
						   size >= MINHASH_SIG_SIZE(0) ? (int) sig->version : -1,
						   size >= MINHASH_SIG_SIZE(0) ? (int) sig->flags : -1)));
	return sig;
}

const minhash::PermutationFamily *
minhash_family(MemoryContext mcxt, minhash::PermutationFamily **slot,
			   int num_perm, uint64 seed, int kind)
{
	minhash::PermutationFamily *family = *slot;

	if (family == NULL)
	{
		family = (minhash::PermutationFamily *)
			MemoryContextAlloc(mcxt, sizeof(minhash::PermutationFamily));
		family->num_perm = 0;	/* no family yet: never matches below */
		*slot = family;
	}
	if (family->num_perm != num_perm || family->seed != seed ||
		family->kind != (minhash::HashFamily) kind)
		minhash::init_permutation_family(family, num_perm, seed, (minhash::HashFamily) kind);
	return family;
}
