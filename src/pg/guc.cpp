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

	/* what the placeholder held, if PostgreSQL just dropped it */
	if (copy != NULL && !(parse_real(copy, &v, 0, NULL) && v >= 0.0 && v <= 1.0))
		threshold_rejected = copy;
	else if (copy != NULL)
		pfree(copy);
}
