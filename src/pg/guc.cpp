/*
 * GUCs of the SQL surface. They are read when an operator runs, so SET takes
 * effect on the next call (as pg_trgm.similarity_threshold does).
 *
 * A SET before this library is loaded in the session cannot be checked:
 * PostgreSQL keeps the value in a placeholder of unknown type, and when the
 * library defines the real variable it re-applies it -- an invalid value is
 * then dropped with a WARNING and the default (0.5) silently takes its
 * place. Silently answering a query at another threshold than the one the
 * user set is worse than an error, so the rejected value is remembered and
 * the first use of the threshold raises the error, until a valid value is
 * set (docs/sql.md, "Settings").
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
#include "utils/guc.h"
#include "utils/memutils.h"
}

#define THRESHOLD_GUC "minhash.similarity_threshold"

/* read through minhash_threshold() only: it refuses a value rejected at load */
static double minhash_similarity_threshold = 0.5;

/* a value set before the library was loaded and rejected at load, or NULL */
static char *threshold_rejected = NULL;

/*
 * Any value actually assigned replaces a rejected one. Plans that carry the
 * threshold as a constant (queries on Citus tables) are invalidated when it
 * changes; the variable still holds the old value here.
 */
static void
threshold_assign(double newval, void *extra)
{
	(void) extra;
	mh_citus_threshold_assigned(minhash_similarity_threshold, newval);
	if (threshold_rejected != NULL)
	{
		pfree(threshold_rejected);
		threshold_rejected = NULL;
	}
}

double
minhash_threshold(void)
{
	if (threshold_rejected != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": \"%s\"", THRESHOLD_GUC,
						threshold_rejected),
				 errdetail("The value was set before the minhash library was loaded, when it could "
						   "not be checked; it must be a number between 0 and 1."),
				 errhint("SET %s to a value between 0 and 1, or RESET it.", THRESHOLD_GUC)));
	return minhash_similarity_threshold;
}

/*
 * minhash.simd: which kernel computes native signatures. Every kernel gives
 * the same bits, so this is a matter of speed alone, for measuring the AVX2
 * kernel on a host that also has AVX-512 (bench/). "auto" is what the core
 * chose at start-up: the widest the CPU runs, or the environment variable
 * MINHASH_SIMD.
 */
#define SIMD_AUTO (-1)

static int	minhash_simd = SIMD_AUTO;

static const struct config_enum_entry simd_options[] = {
	{"auto", SIMD_AUTO, false},
	{"portable", (int) minhash::SimdLevel::Portable, false},
	{"avx2", (int) minhash::SimdLevel::Avx2, false},
	{"avx512", (int) minhash::SimdLevel::Avx512, false},
	{NULL, 0, false}
};

/* a kernel the CPU cannot run is refused, not silently replaced */
static bool
simd_check(int *newval, void **extra, GucSource source)
{
	(void) extra;
	(void) source;
	if (*newval != SIMD_AUTO && *newval > (int) minhash::simd_best())
	{
		GUC_check_errdetail("This CPU runs the %s kernel at most.",
							minhash::simd_level_name(minhash::simd_best()));
		return false;
	}
	return true;
}

static void
simd_assign(int newval, void *extra)
{
	(void) extra;
	minhash::simd_use(newval == SIMD_AUTO ? minhash::simd_default()
					  : (minhash::SimdLevel) newval);
}

void
minhash_guc_init(void)
{
	const char *pending = GetConfigOption(THRESHOLD_GUC, true, false);
	char	   *copy = pending ? MemoryContextStrdup(TopMemoryContext, pending) : NULL;
	double		v;

	DefineCustomRealVariable(THRESHOLD_GUC,
							 "Sets the estimated Jaccard similarity at or above which the % operator is true.",
							 NULL,
							 &minhash_similarity_threshold,
							 0.5, 0.0, 1.0,
							 PGC_USERSET, 0,
							 NULL, threshold_assign, NULL);

	DefineCustomEnumVariable("minhash.simd",
							 "Selects the SIMD kernel that computes native signatures.",
							 "auto, portable, avx2 or avx512; every kernel computes the same signatures.",
							 &minhash_simd,
							 SIMD_AUTO, simd_options,
							 PGC_USERSET, 0,
							 simd_check, simd_assign, NULL);

	/* what the placeholder held, if PostgreSQL just dropped it */
	if (copy != NULL && !(parse_real(copy, &v, 0, NULL) && v >= 0.0 && v <= 1.0))
		threshold_rejected = copy;
	else if (copy != NULL)
		pfree(copy);
}
