/*
 * Hints: warming the pages a scan is about to read, and where a block was
 * last found in shared buffers (LshBufferHint, lsh.h).
 *
 * A % query reads one leaf per band (30 at the default 30 x 4) and then the
 * data pages of its candidates, each somewhere in gigabytes of shared
 * buffers: every first touch of a page is a cache and TLB miss, and a leaf is
 * searched (read whole before version 4). Reading them one after the other
 * waits for memory once per page. Looking the blocks up first (the tree's
 * internal levels are cached in backend memory, lsh_tree.cpp) lets the scan
 * ask the CPU for all of them at once, so the misses overlap:
 *
 *  - lsh_walk_prefetch finds the block's buffer without pinning it
 *    (PrefetchBuffer: for a block not in shared buffers it starts the read
 *    from the kernel instead) and prefetches the cache lines every checked
 *    read looks at first: the buffer's descriptor, the page header and the
 *    special space
 *    (lsh_prefetch_head, also for a buffer known from an earlier scan: the
 *    buffer hints of the cached tree levels' leaves, lsh_tree.cpp);
 *  - lsh_prefetch_lines prefetches a whole page, for the next page to scan
 *    while the current one is being scanned (a leaf read whole, before
 *    version 4); lsh_prefetch_leaf_at only the lines a search of a sorted
 *    leaf reads;
 *  - lsh_walk_recent hands the buffer to the walk's next read of that block,
 *    which then pins it with ReadRecentBuffer (no second buffer-table lookup):
 *    lsh_hint_pin, the one way the lsh code pins through a buffer hint.
 *
 * All are hints: nothing is read through them. An unpinned buffer may
 * be evicted and reused in between; ReadRecentBuffer then fails and the read
 * looks the block up as usual, and every page is still checked after it is
 * pinned and locked (lsh_walk_read). A block a link may not name (damage) is
 * not prefetched: its read reports it.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"
#include "pg/compat.h"

extern "C" {
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
}

#define LSH_CACHE_LINE 64

static inline void
lsh_prefetch_line(const char *p)
{
#if defined(__GNUC__) || defined(__clang__)
	__builtin_prefetch(p, 0, 3);
#else
	(void) p;
#endif
}

void
lsh_prefetch_address(const void *p)
{
	lsh_prefetch_line((const char *) p);
}

static inline void
lsh_prefetch_for_write(const char *p)
{
#if defined(__GNUC__) || defined(__clang__)
	__builtin_prefetch(p, 1, 3);
#else
	(void) p;
#endif
}

/* The page of an unpinned shared buffer, NULL for local buffers (not prefetched). */
static const char *
lsh_recent_page(Buffer buf)
{
	if (!BufferIsValid(buf) || BufferIsLocal(buf))
		return NULL;
	return (const char *) BufferGetBlock(buf);
}

/* The lines every checked read looks at first: the page header and the special space. */
void
lsh_prefetch_head(Buffer buf)
{
	const char *page = lsh_recent_page(buf);

	if (page == NULL)
		return;
	lsh_prefetch_line(page);
	lsh_prefetch_line(page + BLCKSZ - LSH_CACHE_LINE);
	/* and the buffer's descriptor, which pinning it (ReadRecentBuffer) writes first */
	lsh_prefetch_for_write((const char *) GetBufferDescriptor(buf - 1));
}

Buffer
lsh_walk_prefetch(LshWalk *w, BlockNumber blkno)
{
	PrefetchBufferResult r;

	if (blkno == InvalidBlockNumber || blkno == LSH_METAPAGE_BLKNO)
		return InvalidBuffer;
	if (blkno >= w->nblocks)
	{
		w->nblocks = RelationGetNumberOfBlocks(w->index);
		if (blkno >= w->nblocks)
			return InvalidBuffer;
	}
	r = PrefetchBuffer(w->index, MAIN_FORKNUM, blkno);
	lsh_prefetch_head(r.recent_buffer);
	return r.recent_buffer;
}

void
lsh_prefetch_lines(Buffer buf)
{
	const char *page = lsh_recent_page(buf);

	if (page == NULL)
		return;
	for (int off = 0; off < BLCKSZ; off += LSH_CACHE_LINE)
		lsh_prefetch_line(page + off);
}

/*
 * The lines of a sorted leaf (lsh_leaf_sorted) that a search for key will
 * read: where lsh_leaf_guess expects the key, its neighbours, and the
 * entries appended after the sorted ones. The page is not pinned, so it may
 * be another page by now: anything but an lsh leaf (its special space where
 * an lsh page has it) is left alone, the entry count is clamped to the page,
 * and a wrong guess only costs the prefetch.
 */
void
lsh_prefetch_leaf_at(Buffer buf, uint32 key)
{
	const char *page = lsh_recent_page(buf);
	const int	start = (int) LSH_CONTENT_START;
	int			esize;
	int			n;
	int			sorted;
	int			at;

	/* pd_special is checked before the special space is read through it */
	if (page == NULL || !LshPageIsLsh((Page) page) || LshPageType((Page) page) != LSH_PAGE_LEAF)
		return;
	esize = lsh_leaf_entry_size((Page) page);
	n = lsh_count_entries((Page) page, esize);
	sorted = Min((int) LshPageGetOpaque((Page) page)->count, n);
	if (sorted > 0)
	{
		at = start + lsh_leaf_guess((Page) page, sorted, key) * esize;
		lsh_prefetch_line(page + Max(at - LSH_CACHE_LINE, start));
		lsh_prefetch_line(page + at);
		lsh_prefetch_line(page + Min(at + LSH_CACHE_LINE, (int) BLCKSZ - LSH_CACHE_LINE));
	}
	for (at = start + sorted * esize; at < start + n * esize; at += LSH_CACHE_LINE)
		lsh_prefetch_line(page + at);
}

void
lsh_walk_recent(LshWalk *w, BlockNumber blkno, Buffer buf)
{
	lsh_hint_remember(&w->recent, w->index, blkno, buf);
}

/*
 * Pin blkno: through the buffer lsh_walk_recent named for it if that buffer
 * still holds it, else by the usual lookup (through the walk's ring, if it
 * has one: a ring's read does not take the hint). The hint is used once.
 */
Buffer
lsh_walk_pin(LshWalk *w, BlockNumber blkno)
{
	Buffer		buf = w->strategy == NULL ? lsh_hint_pin(&w->recent, w->index, blkno) : InvalidBuffer;

	w->recent.buffer = InvalidBuffer;
	if (BufferIsValid(buf))
		return buf;
	return ReadBufferExtended(w->index, MAIN_FORKNUM, blkno, RBM_NORMAL, w->strategy);
}
