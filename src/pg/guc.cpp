/*
 * GUCs of the SQL surface. They are read when an operator runs, so SET takes
 * effect on the next call (as pg_trgm.similarity_threshold does).
 */
#include "pg/minhash.h"

extern "C" {
#include "utils/guc.h"
}

double		minhash_similarity_threshold = 0.5;

void
minhash_guc_init(void)
{
	DefineCustomRealVariable("minhash.similarity_threshold",
							 "Sets the estimated Jaccard similarity at or above which the % operator is true.",
							 NULL,
							 &minhash_similarity_threshold,
							 0.5, 0.0, 1.0,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
}
