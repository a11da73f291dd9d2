/*
 * The loadable module: magic block and _PG_init.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "pg/minhash.h"
#include "pg/lsh/lsh.h"

extern "C" {
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);
}

extern "C" void
_PG_init(void)
{
	minhash_guc_init();

	/* the lsh index access method: its GUCs and reloptions */
	lsh_init();
	lsh_explain_init();

	/* queries on Citus tables: the session's threshold and minhash_agg rewritten */
	mh_citus_planner_init();

	/* Every minhash.* GUC is defined above; anything else is a typo. */
	MarkGUCPrefixReserved("minhash");
}
