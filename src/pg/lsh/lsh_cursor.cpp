/*
 * The leaf cursor: one level of the band tree in key order, a page at a
 * time, through the checked walk (lsh_access.cpp): every page is pinned,
 * locked and checked before it is used or its right link followed, the
 * chain is bounded by the index's size, and a right sibling's low key must
 * continue its left sibling's high key. Damage is XX002.
 *
 * Its users differ only in where they start, where they stop and how they
 * lock:
 *  - a scan probes a key range: lsh_cursor_range descends to the leftmost
 *    leaf that may hold lo (checking that it does) and stops after the leaf
 *    whose high key reaches past hi (runs of equal keys may span leaves);
 *  - VACUUM (EXCLUSIVE, to rewrite leaves), the all-pairs walk and
 *    minhash_lsh_check read a whole level from its first page:
 *    lsh_cursor_level.
 * lsh_cursor_next releases the page it returned last and returns the next
 * one, held until the following call or lsh_cursor_release. The caller
 * reads the entries from cur->page (lsh_leaf_collect, lsh_leaf_decode).
 * The next page's block is taken from the page under its lock, so a caller
 * may rewrite the page (VACUUM) or release it early (the pairs walk copies
 * a leaf, then works without a lock) without changing where the walk goes.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

/* A cursor about to read first; the whole level unless a range narrows it. */
static void
lsh_cursor_init(LshCursor *cur, LshWalk *walk, BlockNumber first, int lockmode, int level)
{
	*cur = LshCursor{walk, lockmode, level, 0, PG_UINT32_MAX, false, first, InvalidBlockNumber,
					 InvalidBuffer, NULL};
	lsh_walk_chain(walk);		/* one chain: bounded by the index's size */
}

/*
 * The leaves holding keys in [lo, hi], share-locked, from the leftmost leaf
 * that may hold lo. The caller holds the metapage lock (share at least), as
 * for any descent.
 */
void
lsh_cursor_range(LshCursor *cur, LshWalk *walk, const LshMetaPageData *meta, uint32 lo, uint32 hi)
{
	bool		has_low = false;
	uint32		low = 0;
	BlockNumber first = meta->root == InvalidBlockNumber ? InvalidBlockNumber :
		lsh_find_leaf_low(walk->index, meta, lo, true, &has_low, &low);

	lsh_cursor_range_from(cur, walk, first, has_low, low, lo, hi);
}

/*
 * The same from a descent the caller made (lsh_find_leaf_low for lo, under
 * the metapage lock it still holds or in a tree unchanged since: same
 * nsplits): its leaf and the low key its parent gives it.
 */
void
lsh_cursor_range_from(LshCursor *cur, LshWalk *walk, BlockNumber first, bool has_low, uint32 low,
					  uint32 lo, uint32 hi)
{
	lsh_cursor_init(cur, walk, first, BUFFER_LOCK_SHARE, 0);
	cur->lo = lo;
	cur->hi = hi;
	cur->check_lo = true;
	if (first != InvalidBlockNumber)
		lsh_walk_expect_low(walk, has_low, low);
}

/*
 * A whole level from its first page (the metapage's leftmost leaf for the
 * leaf level), locked in lockmode. The first page of a level holds the
 * keys from 0.
 */
void
lsh_cursor_level(LshCursor *cur, LshWalk *walk, BlockNumber first, int lockmode, int level)
{
	lsh_cursor_init(cur, walk, first, lockmode, level);
	if (first != InvalidBlockNumber)
		lsh_walk_expect_low(walk, true, 0);
}

/* Release the current page (if the cursor holds one). */
void
lsh_cursor_release(LshCursor *cur)
{
	if (BufferIsValid(cur->buf))
		UnlockReleaseBuffer(cur->buf);
	cur->buf = InvalidBuffer;
	cur->page = NULL;
}

/*
 * The next page of the cursor, in cur->page (block cur->blkno), pinned and
 * locked; false at the end. The previous page is released first.
 */
bool
lsh_cursor_next(LshCursor *cur)
{
	LshPageOpaque opaque;
	bool		more;

	lsh_cursor_release(cur);
	if (cur->next == InvalidBlockNumber)
		return false;
	cur->blkno = cur->next;
	cur->buf = lsh_walk_read(cur->walk, cur->blkno, cur->lockmode,
							 cur->level == 0 ? LSH_PAGE_LEAF : LSH_PAGE_INTERNAL, cur->level,
							 NULL, InvalidBlockNumber, &cur->page);
	if (!BufferIsValid(cur->buf))
	{
		/* a reporting walk (minhash_lsh_check's) listed damage it cannot read past */
		cur->next = InvalidBlockNumber;
		return false;
	}
	if (cur->check_lo)
	{
		/* the descent must have reached a leaf whose range holds lo */
		lsh_check_key_in_leaf(cur->walk->index, cur->page, cur->blkno, cur->lo);
		cur->check_lo = false;
	}
	opaque = LshPageGetOpaque(cur->page);
	more = (opaque->flags & LSH_HAS_HIGH) && opaque->high <= cur->hi;
	cur->next = more ? lsh_walk_right(cur->walk, cur->page) : InvalidBlockNumber;
	return true;
}
