/*
 * The loadable module: magic block and _PG_init.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "pg/minhash.h"
#include "pg/lsh/lsh.h"
#include "pg/lsh/lsh_pending.h"
#include "pg/pairs/pairs.h"

extern "C" {
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);
}

extern "C" void
_PG_init(void)
{
	minhash_guc_init();

	/* each wing's GUCs, reloptions and hooks */
	lsh_init();					/* the access method: reloptions, scan GUCs */
	lsh_alter_init();			/* ALTER INDEX SET of build options */
	lsh_pending_init();			/* the pending list's limit */
	lsh_explain_init();			/* EXPLAIN ANALYZE's scan counters */
	pairs_parallel_init();		/* all pairs: when to walk in parallel */

	/* queries on Citus tables: the session's threshold and minhash_agg rewritten */
	mh_citus_planner_init();

	/* Every minhash.* GUC is defined above; anything else is a typo. */
	MarkGUCPrefixReserved("minhash");
}
