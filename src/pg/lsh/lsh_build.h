/*
 * Building an lsh index: the state shared by the serial build
 * (lsh_build.cpp) and the parallel one (lsh_build_parallel.cpp).
 *
 * One participant (the serial build, or each process of a parallel build)
 * turns rows into data pages and band entries: a row's signature goes into
 * the next slot of the participant's own data page image; when the image is
 * full it is appended to the index (lsh_new_buffer, so participants may
 * interleave their pages), and only then, its block number known, do the
 * rows' sort keys (band key << 32 | row id) go to the participant's
 * tuplesort. A parallel build's tuplesorts are the workers of one
 * coordinated sort whose merge the leader reads to write the band tree.
 */
#ifndef MINHASH_PG_LSH_BUILD_H
#define MINHASH_PG_LSH_BUILD_H

#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

extern "C" {
#include "nodes/execnodes.h"
#include "storage/dsm.h"
#include "storage/shm_toc.h"
#include "utils/tuplesort.h"
}

typedef struct LshBuildShared LshBuildShared;
typedef struct LshBuildLeader LshBuildLeader;

/* Pages per WAL record: as many block references as a record can hold */
#define LSH_BUILD_WAL_BATCH 32

/* Pages written but not yet WAL-logged, pinned (lsh_build_wal.cpp) */
typedef struct LshBuildWal
{
	bool		use_wal;		/* false: pages are released unlogged */
	int			limit;			/* pages per record: LSH_BUILD_WAL_BATCH, fewer in tiny shared_buffers */
	int			n;
	Buffer		bufs[LSH_BUILD_WAL_BATCH];
} LshBuildWal;

typedef struct LshBuildState
{
	Relation	index;
	LshMetaPageData meta;		/* the metapage being built */
	LshIndexParams params;
	bool		have_params;
	uint32	   *pagekeys;		/* band keys of the rows on the data page image */

	PGAlignedBlock data;		/* data page being filled */
	bool		have_data;		/* data holds a page (maybe with no slot yet) */
	BlockNumber next_blkno;		/* leader: next block of the band tree */

	/*
	 * The band entries' sort: one tuplesort (a parallel participant's, or
	 * the leader's merge), or in a serial build one per group of adjacent
	 * bands (lsh_build.cpp), begun at the first full data page.
	 */
	Tuplesortstate *sort;
	bool		band_groups;	/* serial: sort by band groups */
	int			nsorts;			/* groups begun (0 until then) */
	Tuplesortstate **sorts;		/* [nsorts], in key order */
	int		   *band_group;		/* [bands]: the group of each band */
	MemoryContext buildctx;		/* the build's context (the sorts live there) */
	double		index_tuples;
	int64		nentries;
	MemoryContext tmpctx;		/* reset per row */
	LshBuildShared *shared;		/* parallel participant: NULL in a serial build */
	LshBuildWal wal;			/* the pages this participant wrote, to log */
} LshBuildState;

/* lsh_build.cpp */
void		lsh_build_state_init(LshBuildState *st, Relation index, const LshMetaPageData *meta,
								 LshBuildShared *shared);
void		lsh_build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
							   bool tupleIsAlive, void *state);
void		lsh_build_flush_data(LshBuildState *st);

/* lsh_build_wal.cpp */
void		lsh_build_wal_init(LshBuildWal *batch, bool use_wal);
void		lsh_build_wal_add(LshBuildWal *batch, Buffer buf);
void		lsh_build_wal_flush(LshBuildWal *batch);

/* lsh_build_parallel.cpp */
LshBuildLeader *lsh_parallel_begin(Relation heap, Relation index, IndexInfo *indexInfo,
								   const LshMetaPageData *meta, bool have_params);
double		lsh_parallel_scan(LshBuildLeader *leader, LshBuildState *st, IndexInfo *indexInfo);
void		lsh_parallel_end(LshBuildLeader *leader);
/* called by the parallel build as a participant (lsh_build_parallel.cpp) */
void		lsh_shared_adopt_params(LshBuildState *st);
bool		lsh_shared_take_params(LshBuildState *st);
void		lsh_shared_free_push(LshBuildShared *shared, Page page, BlockNumber blkno);
bool		lsh_shared_use_wal(LshBuildShared *shared);
extern "C" PGDLLEXPORT void lsh_parallel_build_main(dsm_segment *seg, shm_toc *toc);

#endif
