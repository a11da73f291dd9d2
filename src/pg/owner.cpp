/*
 * Running a table's user code (index expressions and predicates) as the
 * table's owner, the way PostgreSQL's own maintenance commands do since
 * CVE-2022-1552 (REINDEX, VACUUM, CREATE INDEX, amcheck's heapallindexed):
 *
 *  - the current user becomes the table's owner, so a function in an index
 *    expression never runs with the rights of whoever called us (a superuser
 *    running minhash_similar_pairs(..., exact => true) must not run a table
 *    owner's plpgsql as superuser);
 *  - inside a security-restricted operation, so that code cannot SET ROLE,
 *    SET SESSION AUTHORIZATION, create temporary objects, PREPARE, ... and
 *    leave something behind that outlives the call;
 *  - at a new GUC nest level, so a set_config(..., false) inside the code is
 *    undone when we return;
 *  - with search_path = pg_catalog, pg_temp (what PostgreSQL 17 calls
 *    RestrictSearchPath): the caller's search_path is not the owner's, and a
 *    caller who can read the table must not be able to make the owner's
 *    unqualified references resolve to the caller's own functions, which
 *    would then run with the owner's rights.
 *
 * Everything is undone by minhash_owner_end(), or by transaction or
 * subtransaction abort if the code errors (AbortTransaction and
 * AbortSubTransaction restore the user id and security context, and
 * AtEOXact_GUC pops the nest level), exactly as for REINDEX.
 *
 * What the code reads is checked separately, as the caller, before any of
 * it runs (pairs_setup.cpp): this only decides whose rights the code has.
 */
#include "pg/pg_prelude.h"

#include "pg/minhash.h"

extern "C" {
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/rel.h"
}

/* the search_path user code of another role runs under (PostgreSQL 17's GUC_SAFE_SEARCH_PATH) */
#define MINHASH_SAFE_SEARCH_PATH "pg_catalog, pg_temp"

void
minhash_owner_begin(Relation heap, MinhashOwnerContext *ctx)
{
	GetUserIdAndSecContext(&ctx->save_userid, &ctx->save_sec_context);
	SetUserIdAndSecContext(heap->rd_rel->relowner,
						   ctx->save_sec_context | SECURITY_RESTRICTED_OPERATION);
	ctx->save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", MINHASH_SAFE_SEARCH_PATH, PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

void
minhash_owner_end(MinhashOwnerContext *ctx)
{
	AtEOXact_GUC(false, ctx->save_nestlevel);
	SetUserIdAndSecContext(ctx->save_userid, ctx->save_sec_context);
}
