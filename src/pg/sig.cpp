/*
 * Helpers shared by every function that takes or builds a signature:
 * allocation, validation, compatibility checks and the cached hash family.
 */
#include "pg/pg_prelude.h"

#include "core/bbit.h"
#include "core/datasketch.h"
#include "core/jaccard.h"
#include "core/oph.h"
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
static_assert(MINHASH_FAMILY_DATASKETCH == (int) minhash::HashFamily::Datasketch &&
				  MINHASH_FAMILY_OPH == (int) minhash::HashFamily::Oph,
			  "family numbers are stored on disk: the glue and the core agree");
static_assert(MINHASH_NUM_WIDTHS == minhash::kNumValueWidths &&
				  MINHASH_WIDTH_32 == (int) minhash::ValueWidth::Bits32 &&
				  MINHASH_WIDTH_BITS((int) minhash::ValueWidth::Bits16) == 16 &&
				  MINHASH_WIDTH_BITS((int) minhash::ValueWidth::Bits8) == 8,
			  "width codes are stored on disk: the glue and the core agree");

bool
minhash_flags_valid(int flags)
{
	return (flags & ~(MINHASH_FLAGS_FAMILY_MASK | MINHASH_FLAGS_WIDTH_MASK)) == 0 &&
		(flags & MINHASH_FLAGS_FAMILY_MASK) < MINHASH_NUM_FAMILIES &&
		((flags & MINHASH_FLAGS_WIDTH_MASK) >> MINHASH_FLAGS_WIDTH_SHIFT) < MINHASH_NUM_WIDTHS;
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
				 errhint("Valid families are \"native\", \"datasketch\" and \"oph\".")));
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

int
minhash_width_arg(int64 bits)
{
	minhash::ValueWidth w;

	if (bits < 0 || bits > 64 || !minhash::width_of_bits((int) bits, &w))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bits must be 8, 16 or 32, not %lld", (long long) bits),
				 errhint("A signature keeps the low 8, 16 or 32 bits of each value.")));
	return (int) w;
}

MinHashSig *
minhash_sig_alloc_width(int num_perm, uint64 seed, int family, int width)
{
	Size		size;
	MinHashSig *sig;

	if (width == MINHASH_WIDTH_32)
		return minhash_sig_alloc(num_perm, seed, family);
	size = MINHASH_SIG_SIZE_W(num_perm, width);
	sig = (MinHashSig *) palloc0(size);
	SET_VARSIZE(sig, size);
	sig->version = MINHASH_FORMAT_VERSION;
	sig->flags = (uint8) (family | (width << MINHASH_FLAGS_WIDTH_SHIFT));
	sig->num_perm = (uint16) num_perm;
	sig->seed = seed;
	return sig;
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
				 errdetail("The first is a signature of the %s family, the second of the %s family.",
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
	/* Chance collisions depend on the width: the estimate needs one. */
	if (MinHashSigWidth(a) != MinHashSigWidth(b))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signatures have different widths"),
				 errdetail("The first keeps %d bits of each value, the second %d.",
						   MINHASH_WIDTH_BITS(MinHashSigWidth(a)),
						   MINHASH_WIDTH_BITS(MinHashSigWidth(b))),
				 errhint("Cast the wider one to minhash(%d, %d): an explicit cast keeps the low bits of each value.",
						 (int) a->num_perm,
						 MINHASH_WIDTH_BITS(Max(MinHashSigWidth(a), MinHashSigWidth(b))))));
}

void
minhash_check_mergeable(const MinHashSig *a, const MinHashSig *b, const char *what)
{
	minhash_check_compatible(a, b);
	/* min(low bits) is not the low bits of the min: compact values do not merge */
	if (MinHashSigWidth(a) != MINHASH_WIDTH_32)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s cannot merge %d-bit minhash signatures", what,
						MINHASH_WIDTH_BITS(MinHashSigWidth(a))),
				 errdetail("The union of two sets needs the whole 32-bit minima; a compact signature keeps only their low bits."),
				 errhint("Merge 32-bit signatures, then cast the union to minhash(%d, %d).",
						 (int) a->num_perm, MINHASH_WIDTH_BITS(MinHashSigWidth(a)))));
}


MinHashSig *
minhash_sig_detoast(Datum d)
{
	MinHashSig *sig = (MinHashSig *) PG_DETOAST_DATUM(d);
	Size		size = VARSIZE(sig);

	if (size < MINHASH_SIG_SIZE(0) ||
		sig->version != MINHASH_FORMAT_VERSION || !minhash_flags_valid(sig->flags) ||
		sig->num_perm < MINHASH_MIN_NUM_PERM || sig->num_perm > MINHASH_MAX_NUM_PERM ||
		size != MINHASH_SIG_SIZE_W(sig->num_perm, MinHashSigWidth(sig)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid minhash signature"),
				 errdetail("Size %zu, format version %d, flags %d.", (size_t) size,
						   size >= MINHASH_SIG_SIZE(0) ? (int) sig->version : -1,
						   size >= MINHASH_SIG_SIZE(0) ? (int) sig->flags : -1)));
	return sig;
}

/* oph_densify needs the family of (k, seed) */
static void
densify(const MinHashSig *sig, uint32 *out)
{
	minhash::OphFamily family;

	minhash::init_oph_family(&family, sig->num_perm, sig->seed);
	minhash::oph_densify(family, sig->values, out);
}

void
minhash_sig_values32(const MinHashSig *sig, uint32 *out)
{
	int			width = MinHashSigWidth(sig);

	if (width != MINHASH_WIDTH_32)
		minhash::widen_values(sig->values, sig->num_perm, (minhash::ValueWidth) width, out);
	else if (MinHashSigFamily(sig) == MINHASH_FAMILY_OPH)
		densify(sig, out);
	else
		memcpy(out, sig->values, sizeof(uint32) * sig->num_perm);
}

MinHashSig *
minhash_sig_index_form(Datum d)
{
	MinHashSig *sig = minhash_sig_detoast(d);
	MinHashSig *wide;

	if (MinHashSigWidth(sig) == MINHASH_WIDTH_32 && MinHashSigFamily(sig) != MINHASH_FAMILY_OPH)
		return sig;
	/* a working copy with 32-bit values: the header (flags, so the width) as the datum's */
	wide = (MinHashSig *) palloc(MINHASH_SIG_SIZE(sig->num_perm));
	memcpy(wide, sig, offsetof(MinHashSig, values));
	SET_VARSIZE(wide, MINHASH_SIG_SIZE(sig->num_perm));
	minhash_sig_values32(sig, wide->values);
	return wide;
}

MinHashSig *
minhash_sig_narrow(const MinHashSig *sig, int width)
{
	int			from = MinHashSigWidth(sig);
	MinHashSig *out;

	Assert(width >= from);
	if (width == from)
		return (MinHashSig *) sig;
	out = minhash_sig_alloc_width(sig->num_perm, sig->seed, MinHashSigFamily(sig), width);
	if (from == MINHASH_WIDTH_32)
	{
		uint32		values[MINHASH_MAX_NUM_PERM];

		minhash_sig_values32(sig, values);	/* oph: densified before narrowing */
		minhash::narrow_values(values, sig->num_perm, (minhash::ValueWidth) width, out->values);
	}
	else
		minhash::renarrow_values(sig->values, sig->num_perm, (minhash::ValueWidth) from,
								 (minhash::ValueWidth) width, out->values);
	return out;
}

/*
 * The last oph sketch densified for one argument of a comparison function
 * (fn_extra): a query compared with every row of a scan is densified once.
 */
typedef struct DensifiedArg
{
	int			num_perm;		/* 0: empty */
	uint64		seed;
	uint32		sketch[MINHASH_MAX_NUM_PERM];
	uint32		values[MINHASH_MAX_NUM_PERM];
} DensifiedArg;

/* sig's densified values: from the cache if it holds sig's sketch, else computed into it */
static const uint32 *
densified(DensifiedArg *cache, const MinHashSig *sig)
{
	size_t		bytes = sizeof(uint32) * sig->num_perm;

	if (cache->num_perm != sig->num_perm || cache->seed != sig->seed ||
		memcmp(cache->sketch, sig->values, bytes) != 0)
	{
		cache->num_perm = 0;	/* whole or empty */
		memcpy(cache->sketch, sig->values, bytes);
		densify(sig, cache->values);
		cache->seed = sig->seed;
		cache->num_perm = sig->num_perm;
	}
	return cache->values;
}

/*
 * The estimated Jaccard similarity of a and b (same family, k, seed and
 * width, else an error); flinfo, if given, caches the densified form of
 * each argument that is an oph sketch.
 */
double
minhash_sig_estimate_in(FmgrInfo *flinfo, const MinHashSig *a, const MinHashSig *b)
{
	int			width = MinHashSigWidth(a);
	int			k = a->num_perm;
	int			same;

	minhash_check_compatible(a, b);
	if (MinHashSigFamily(a) == MINHASH_FAMILY_OPH && width == MINHASH_WIDTH_32)
	{
		DensifiedArg local[2];	/* no flinfo: densified here, not kept */
		DensifiedArg *cache = local;

		if (flinfo != NULL)
		{
			if (flinfo->fn_extra == NULL)
				flinfo->fn_extra = MemoryContextAllocZero(flinfo->fn_mcxt, 2 * sizeof(DensifiedArg));
			cache = (DensifiedArg *) flinfo->fn_extra;
		}
		else
			local[0].num_perm = local[1].num_perm = 0;
		same = minhash::matching_values(densified(&cache[0], a), densified(&cache[1], b), k);
	}
	else
		same = minhash::matching_packed(a->values, b->values, k, (minhash::ValueWidth) width);
	return minhash::bbit_jaccard(same, k, MINHASH_WIDTH_BITS(width));
}

double
minhash_sig_estimate(const MinHashSig *a, const MinHashSig *b)
{
	return minhash_sig_estimate_in(NULL, a, b);
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
