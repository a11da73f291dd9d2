/*
 * PostgreSQL major-version differences, in one place (15, 16, 17, 18).
 *
 * The glue is written against one API; where a server release renamed or
 * changed a function, a structure member or a header, the name below picks
 * the right one by PG_VERSION_NUM (as pgvector does). Use these names, not
 * the versioned ones, in src/pg/: `make test-matrix` builds and tests the
 * glue on 15 (host), 17 and 18 (chroots); 16 is covered by these guards.
 *
 * Only macros here, so this header needs none of the headers it refers to:
 * each user includes what its expansion calls (catalog/pg_class.h for
 * RelationRelationId, utils/tuplesort.h, commands/vacuum.h, ...).
 */
#ifndef MINHASH_PG_COMPAT_H
#define MINHASH_PG_COMPAT_H

/* This header comes after postgres.h (pg/minhash.h includes both). */
#ifndef PG_VERSION_NUM
#error "include postgres.h before pg/compat.h"
#endif

#if PG_VERSION_NUM < 150000
#error "minhash needs PostgreSQL 15 or later"
#endif

/* 16 moved VARSIZE, VARDATA, SET_VARSIZE... out of postgres.h. */
#if PG_VERSION_NUM >= 160000
extern "C" {
#include "varatt.h"
}
#endif

/*
 * 16 renamed the physical relation identifiers: RelFileNode became
 * RelFileLocator, Relation->rd_node rd_locator, SMgrRelation->smgr_rnode
 * smgr_rlocator (ReadRecentBuffer and log_newpage take the new type).
 */
#if PG_VERSION_NUM >= 160000
#define MH_REL_LOCATOR(rel) ((rel)->rd_locator)
#define MH_SMGR_LOCATOR(smgr) ((smgr)->smgr_rlocator.locator)
#else
#define MH_REL_LOCATOR(rel) ((rel)->rd_node)
#define MH_SMGR_LOCATOR(smgr) ((smgr)->smgr_rnode.node)
#endif

/* 16 replaced pg_namespace_aclcheck() by object_aclcheck(classid, ...). */
#if PG_VERSION_NUM >= 160000
#define mh_namespace_aclcheck(nspid, roleid, mode) \
	object_aclcheck(NamespaceRelationId, (nspid), (roleid), (mode))
#else
#define mh_namespace_aclcheck(nspid, roleid, mode) pg_namespace_aclcheck((nspid), (roleid), (mode))
#endif

/*
 * Is this index (IndexOptInfo) an lsh index? 17 typed IndexOptInfo's
 * amcostestimate as amcostestimate_function (15 and 16: void (*)(void)).
 */
#define mh_is_lsh_indexinfo(info) \
	(reinterpret_cast<void (*)(void)>((info)->amcostestimate) == \
	 reinterpret_cast<void (*)(void)>(lshcostestimate))

/* 16 replaced pg_class_ownercheck() by object_ownercheck(classid, ...). */
#if PG_VERSION_NUM >= 160000
#define mh_class_ownercheck(relid, roleid) object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define mh_class_ownercheck(relid, roleid) pg_class_ownercheck((relid), (roleid))
#endif

/*
 * 16 added tuplesort_getdatum()'s `copy` argument; true keeps 15's
 * behaviour (a by-reference datum is copied into the caller's context).
 */
#if PG_VERSION_NUM >= 160000
#define mh_tuplesort_getdatum(state, forward, val, isnull) \
	tuplesort_getdatum((state), (forward), true, (val), (isnull), NULL)
#else
#define mh_tuplesort_getdatum(state, forward, val, isnull) \
	tuplesort_getdatum((state), (forward), (val), (isnull), NULL)
#endif

/* 18 gave vacuum_delay_point() an is_analyze argument. */
#if PG_VERSION_NUM >= 180000
#define mh_vacuum_delay_point() vacuum_delay_point(false)
#else
#define mh_vacuum_delay_point() vacuum_delay_point()
#endif

/*
 * 17 runs index expressions in maintenance commands (CREATE INDEX, REINDEX,
 * VACUUM, amcheck) with search_path = pg_catalog, pg_temp; code that
 * evaluates them the same way calls this after NewGUCNestLevel() (utils/guc.h).
 */
#if PG_VERSION_NUM >= 170000
#define mh_restrict_search_path() RestrictSearchPath()
#else
#define mh_restrict_search_path() ((void) 0)
#endif

/* 17 renamed IsAutoVacuumWorkerProcess() (postmaster/autovacuum.h, miscadmin.h). */
#if PG_VERSION_NUM >= 170000
#define mh_is_autovacuum_worker() AmAutoVacuumWorkerProcess()
#else
#define mh_is_autovacuum_worker() IsAutoVacuumWorkerProcess()
#endif

/*
 * 18 compares paths by their number of disabled nodes before their costs,
 * so an infinite cost no longer keeps a path the index cannot answer from
 * beating a sequential scan under enable_seqscan = off (one disabled node):
 * such a path counts two.
 */
#if PG_VERSION_NUM >= 180000
#define mh_disable_index_path(path) ((path)->path.disabled_nodes = 2)
#else
#define mh_disable_index_path(path) ((void) 0)
#endif

/*
 * One index search: pg_stat_*_indexes.idx_scan (pgstat_count_index_scan,
 * utils/pgstat.h), and from 18 on EXPLAIN ANALYZE's "Index Searches".
 */
#if PG_VERSION_NUM >= 180000
#define mh_count_index_search(scan) \
	do { \
		pgstat_count_index_scan((scan)->indexRelation); \
		if ((scan)->instrument) \
			(scan)->instrument->nsearches++; \
	} while (0)
#else
#define mh_count_index_search(scan) pgstat_count_index_scan((scan)->indexRelation)
#endif

/*
 * 16 typed the callbacks of expression_tree_walker/mutator and
 * query_tree_walker/mutator (and made those macros that cast them); 15
 * declares them without arguments, which C++ will not convert to.
 */
#if PG_VERSION_NUM >= 160000
#define MH_WALKER(fn) (fn)
#define MH_MUTATOR(fn) (fn)
#else
#define MH_WALKER(fn) ((bool (*)()) (void (*)(void)) (fn))
#define MH_MUTATOR(fn) ((Node *(*)()) (void (*)(void)) (fn))
#endif

#endif							/* MINHASH_PG_COMPAT_H */
