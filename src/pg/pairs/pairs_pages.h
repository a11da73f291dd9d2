/*
 * The data pages of an index as the all-pairs walk (pairs_walk.cpp) and
 * minhash_match (pairs_match.cpp) read them: a stored signature by row id,
 * its page checked once, its slot checked every time.
 *
 * Data pages are read in random order, one slot at a time, millions of times
 * in a large walk. Two memories cut the cost of a read to little more than
 * touching the slot:
 *  - the buffer each block was last found in (LshBufferHint), so
 *    ReadRecentBuffer pins it without a lookup in the shared buffer table (a
 *    direct-mapped table of at most a sixteenth of work_mem);
 *  - which blocks have been checked to be data pages (PairsPart.checked):
 *    index pages are never freed or reused for another type, so a block
 *    checked once stays one (this spares two cache misses, the page header
 *    and special space).
 */
#ifndef MINHASH_PG_PAIRS_PAGES_H
#define MINHASH_PG_PAIRS_PAGES_H

#include "pg/pairs/pairs.h"

typedef struct PairsPages
{
	uint32		mask;			/* size - 1, size a power of two */
	LshBufferHint *hint;
} PairsPages;

/* the hint slot of (part, block) */
#define PAIRS_HINT(pc, part, blkno) \
	(&(pc)->hint[((blkno) ^ ((uint32) (part) * 0x9E3779B1U)) & (pc)->mask])

/* pairs_walk.cpp: the hints and every part's bitmap of checked blocks, in the current context */
void		pairs_pages_init(PairsRun *run, PairsPages *pages);

/* The data page blkno of a part, pinned and share-locked and checked (XX002 if it is not a sound data page). */
static inline Buffer
pairs_read_data_page(PairsRun *run, PairsPages *pages, int part, BlockNumber blkno)
{
	PairsPart  *pt = &run->parts[part];
	Buffer		buf;

	/* readers skip row ids beyond the part's nrowids: blkno < its nblocks */
	Assert(blkno < pt->nblocks);
	buf = lsh_hint_read(PAIRS_HINT(pages, part, blkno), pt->index, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if ((pt->checked[blkno >> 3] & (1 << (blkno & 7))) == 0)
	{
		/* entries name allocated slots: anything but a sound data page is damage */
		const char *problem = blkno == LSH_METAPAGE_BLKNO ? "link to the metapage" :
			lsh_page_problem(BufferGetPage(buf), LSH_PAGE_DATA, 0, &run->params);

		if (problem != NULL)
			lsh_corrupted(pt->index, problem, blkno);
		pt->checked[blkno >> 3] |= (uint8) (1 << (blkno & 7));
	}
	return buf;
}

/*
 * The slot of a part's row id on its data page, checked (state, TID within
 * the part's table: emitting a pair fetches the heap tuple); NULL unless
 * LIVE, since a DEAD slot's TID may already name another tuple.
 */
static inline const LshSlotHeader *
pairs_live_slot(PairsRun *run, int part, Page page, uint32 rowid, BlockNumber blkno)
{
	PairsPart  *pt = &run->parts[part];
	const LshSlotHeader *slot = lsh_slot_read(pt->index, page, &run->params,
											  lsh_rowid_slot(&run->params, rowid), blkno);

	if (slot->state != LSH_SLOT_LIVE)
		return NULL;
	lsh_check_heap_tid(pt->index, pt->heap, &pt->heap_nblocks, &slot->tid, blkno);
	return slot;
}

#endif
