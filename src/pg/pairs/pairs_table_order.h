/*
 * The pass in table order (pairs_table_order.cpp) as the parallel pass
 * (pairs_table_order_parallel.cpp) sees it: the ends sorted by table
 * position in, one row per end out.
 */
#ifndef MINHASH_PG_PAIRS_TABLE_ORDER_H
#define MINHASH_PG_PAIRS_TABLE_ORDER_H

#include "pg/pairs/pairs.h"

extern "C" {
#include "catalog/pg_am.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
}

/* One end of a deferred pair: a row to fetch, and where its result goes. */
typedef struct PairsEnd
{
	int32		part;
	ItemPointerData tid;
	int64		number;			/* 2 * pair number + side */
	int64		rowid;
	double		sim;
} PairsEnd;

/*
 * Jumps of more blocks than this are prefetched (posix_fadvise); shorter ones
 * are left to the kernel's read-ahead of sequential reads. Advice on every
 * block of a dense run turns the kernel's large reads into single-page ones:
 * at 10M rows the pass took 65 s with it and 45 s without
 * (bench/notes/2026-11-24-10m-all-pairs-shared-pass.md).
 */
#define PAIRS_PREFETCH_GAP	16

/* Prefetch blkno of part's table if it is a jump from the block read before (*last_*). */
static inline void
pairs_prefetch_jump(Relation heap, int32 part, BlockNumber blkno, int32 *last_part,
					BlockNumber *last_block)
{
	if ((part != *last_part || blkno < *last_block || blkno - *last_block > PAIRS_PREFETCH_GAP) &&
		heap->rd_rel->relam == HEAP_TABLE_AM_OID)
		(void) PrefetchBuffer(heap, MAIN_FORKNUM, blkno);
	*last_part = part;
	*last_block = blkno;
}

/* The row of the last end fetched: a row's ends are adjacent, so it is fetched once. */
typedef struct PairsLastRow
{
	int32		part;
	ItemPointerData tid;
	bool		visible;
	Datum		key;			/* valid until the next fetch */
	Datum		keep;			/* the keep column (run->keep_type), likewise */
	bool		keep_isnull;
	uint64		fetched;		/* rows fetched */
} PairsLastRow;

void		pairs_last_row_init(PairsLastRow *last);
bool		pairs_fetch_end(PairsRun *run, PairsLastRow *last, const PairsEnd *e);

bool		pairs_table_order_next_end(PairsDeferred *d, PairsEnd *e);
void		pairs_table_order_put_row(PairsDeferred *d, int64 number, int64 rowid, double sim,
									  bool visible, Datum key, Datum keep, bool keep_isnull);

/* pairs_table_order_parallel.cpp: false when no worker started (do it serially) */
bool		pairs_table_order_parallel(PairsRun *run, PairsDeferred *d, uint64 *rows_fetched);

#endif
