/*
 * The partition-cursor merge of the all-pairs walk: every part's leaf level
 * (the index itself, or each partition's index) and its pending rows'
 * entries, read in key order and merged into band groups (the rows of every
 * part sharing a key), each handed whole to the walk (pairs_walk.cpp) to
 * verify, if it has two rows or more. A group's row ids spill to a tuplesort
 * beyond a sixteenth of work_mem.
 *
 * Partitioned indexes: one leaf cursor per partition's index, merged by key
 * (a binary heap of cursors), so a band group gathers the rows of every
 * partition sharing the key, in one pass, with one leaf per partition in
 * memory. Rows are global row ids (pairs.h); all partitions' indexes share
 * k, seed, bands and rows (checked at setup), so band keys and the
 * first-equal-band rule mean the same in all of them. Each part's pending
 * rows (fastupdate) are one more sorted cursor, read before its leaf level
 * (lsh_pending.h); a row merged meanwhile meets itself in a group, where row
 * ids are deduplicated.
 *
 * Key ranges: a merge may cover only keys [lo, hi] (pairs_merge_range), as
 * the parallel walk's participants do (pairs_parallel.cpp): its cursors
 * start at a descent to lo instead of the leftmost leaf and keep the entries
 * of the range.
 *
 * Concurrency: no metapage lock is held during the walk, so inserts and
 * VACUUM proceed. A leaf is copied under its share lock together with its
 * right link. Splits only move entries to a new right sibling, which the
 * walk, following the saved link, either has read already (in the copy) or
 * has yet to reach -- the argument VACUUM's leaf pass rests on too.
 */
#include "pg/pg_prelude.h"

#include <algorithm>

#include "pg/pairs/pairs_merge.h"
#include "pg/lsh/lsh_pending.h"

extern "C" {
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
}

/* A partition's leaf level, read one leaf at a time in key order. */
typedef struct PairsCursor
{
	int			part;
	LshEntry   *leaf;			/* copy of the current leaf, sorted */
	int			n;
	int			pos;
	LshWalk		lw;				/* checked reads along the part's leaf level */
	LshCursor	leaves;			/* the part's leaf level (none for a pending cursor) */
} PairsCursor;

struct PairsMerge
{
	PairsRun   *run;
	PairsWalk  *walk;			/* where the band groups go */
	PairsGroup	group;			/* the band group being gathered */
	bool		ranged;			/* pairs_merge_range: keys in [lo, hi] only, no progress reports */
	uint32		lo;
	uint32		hi;
	LshEntry  **pending;		/* per part: its pending rows' entries, sorted */
	int		   *npending;
	PairsCursor *cursors;		/* per part its leaf level, then per part its pending rows */
	int		   *heap;			/* cursors with entries left, a min-heap by current key */
	int			nheap;
	BufferAccessStrategy strategy;
};

static void
group_start(PairsMerge *pm, uint32 key)
{
	pm->group.open = true;
	pm->group.key = key;
	pm->group.n = 0;
}

/* A run of entries of one part, into the group: their rows that the snapshot may see. */
static void
group_add(PairsMerge *pm, int part, const LshEntry *e, int n)
{
	PairsGroup *g = &pm->group;
	PairsRun   *run = pm->run;
	const PairsPart *pt = &run->parts[part];

	for (int i = 0; i < n; i++)
	{
		uint64		id;

		/* a row indexed after the walk began: invisible to the snapshot */
		if (e[i].value >= pt->nrowids)
			continue;
		id = pt->base + e[i].value;
		if (g->spill != NULL)
		{
			tuplesort_putdatum(g->spill, Int64GetDatum(id), false);
			continue;
		}
		if (g->n == g->max_ids)
		{
			/* too many rows for memory: from now on the ids go to a tuplesort */
			MemoryContext oldcxt = MemoryContextSwitchTo(run->cxt);

			g->spill = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
											 Max(64, work_mem / 4), NULL,
											 TUPLESORT_RANDOMACCESS);
			MemoryContextSwitchTo(oldcxt);
			for (int j = 0; j < g->n; j++)
				tuplesort_putdatum(g->spill, Int64GetDatum(g->ids[j]), false);
			g->n = 0;
			tuplesort_putdatum(g->spill, Int64GetDatum(id), false);
			continue;
		}
		if (g->n == g->cap)
		{
			g->cap *= 2;
			g->ids = (uint64 *) repalloc_huge(g->ids, sizeof(uint64) * g->cap);
		}
		g->ids[g->n++] = id;
	}
}

/* The group is complete: the walk verifies it if it has a pair (most keys are one row's). */
static void
group_finish(PairsMerge *pm)
{
	PairsGroup *g = &pm->group;

	if (!g->open)
		return;
	g->open = false;
	if (g->spill == NULL && g->n < 2)
		return;
	pairs_verify_group(pm->walk, g);
}

/*
 * Read the cursor's next leaf; false at the end of its level (or range). A
 * leaf is copied with its right link under its share lock, then sorted
 * (inserts append out of order). A ranged walk keeps the keys of its range.
 */
static bool
cursor_load(PairsMerge *pm, PairsCursor *c)
{
	PairsRun   *run = pm->run;
	Page		page;
	bool		has_high;
	uint32		high;
	BlockNumber right = InvalidBlockNumber;

	if (!lsh_cursor_next(&c->leaves))
		return false;
	page = c->leaves.page;
	c->n = lsh_leaf_decode(page, c->leaf);
	c->pos = 0;
	has_high = (LshPageGetOpaque(page)->flags & LSH_HAS_HIGH) != 0;
	high = LshPageGetOpaque(page)->high;
	if (pm->ranged && has_high && high > pm->hi)
		right = lsh_walk_right(&c->lw, page);
	lsh_cursor_release(&c->leaves);
	if (right != InvalidBlockNumber)
	{
		/*
		 * The range ends in this leaf, so the cursor stops here; its right
		 * sibling is read all the same, to check that its low key continues
		 * this leaf's high key, as the whole walk checks every leaf's: a
		 * damaged high key would otherwise end the range early, silently.
		 */
		Page		rpage;
		Buffer		rbuf = lsh_walk_read(&c->lw, right, BUFFER_LOCK_SHARE, LSH_PAGE_LEAF, 0, NULL,
										 InvalidBlockNumber, &rpage);

		if (BufferIsValid(rbuf))
			UnlockReleaseBuffer(rbuf);
	}

	if (pm->ranged)
	{
		int			m = 0;

		for (int i = 0; i < c->n; i++)
			if (c->leaf[i].key >= pm->lo && c->leaf[i].key <= pm->hi)
				c->leaf[m++] = c->leaf[i];
		c->n = m;
	}
	run->leaves++;
	run->entries += c->n;
	lsh_sort_entries(c->leaf, c->n);
	pairs_prefetch_leaf(pm->walk, c->part, c->leaf, c->n);
	if (has_high && !pm->ranged)
		pairs_report_progress(run, high / 4294967296.0);
	return true;
}

/* Read leaves until the cursor has an entry; false when the part has none left. */
static bool
cursor_fill(PairsMerge *pm, PairsCursor *c)
{
	while (c->pos >= c->n)
	{
		CHECK_FOR_INTERRUPTS();
		if (!cursor_load(pm, c))
			return false;
	}
	return true;
}

static inline uint32
cursor_key(const PairsMerge *pm, int c)
{
	const PairsCursor *cur = &pm->cursors[c];

	/* below the design threshold a group is a key prefix: keys equal under the mask */
	return cur->leaf[cur->pos].key & pm->run->key_mask;
}

/* restore the heap order below position i */
static void
heap_sift_down(PairsMerge *pm, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1;
		int			m = i;

		if (l < pm->nheap && cursor_key(pm, pm->heap[l]) < cursor_key(pm, pm->heap[m]))
			m = l;
		if (l + 1 < pm->nheap && cursor_key(pm, pm->heap[l + 1]) < cursor_key(pm, pm->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		std::swap(pm->heap[i], pm->heap[m]);
		i = m;
	}
}

/*
 * The top cursor's run of this key, into the group: it may continue on the
 * part's next leaves. Then the cursor goes back into the heap by its next
 * key, or leaves it if the part is done.
 */
static void
heap_take_top(PairsMerge *pm, uint32 key)
{
	PairsCursor *c = &pm->cursors[pm->heap[0]];

	const uint32 mask = pm->run->key_mask;

	while (cursor_fill(pm, c) && (c->leaf[c->pos].key & mask) == key)
	{
		int			j = c->pos + 1;

		while (j < c->n && (c->leaf[j].key & mask) == key)
			j++;
		group_add(pm, c->part, c->leaf + c->pos, j - c->pos);
		c->pos = j;
	}
	if (c->pos >= c->n)
		pm->heap[0] = pm->heap[--pm->nheap];	/* cursor_fill found no more leaves */
	heap_sift_down(pm, 0);
}

/* put cursor c into the heap of cursors with entries left */
static void
heap_push(PairsMerge *pm, int c)
{
	int			i = pm->nheap++;

	pm->heap[i] = c;
	while (i > 0 && cursor_key(pm, pm->heap[(i - 1) / 2]) > cursor_key(pm, pm->heap[i]))
	{
		std::swap(pm->heap[i], pm->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

/*
 * The merge: the smallest current key of all parts is the next band group;
 * every cursor at that key adds its run, then the group is verified. Keys
 * ascend in every part, so a group is complete when no cursor is left at
 * its key.
 */
static void
merge(PairsMerge *pm)
{
	while (pm->nheap > 0)
	{
		uint32		key = cursor_key(pm, pm->heap[0]);

		CHECK_FOR_INTERRUPTS();
		group_start(pm, key);
		while (pm->nheap > 0 && cursor_key(pm, pm->heap[0]) == key)
			heap_take_top(pm, key);
		group_finish(pm);
	}
}

/* first index of e[0..n) (sorted) whose key is at least key */
static int
entries_lower_bound(const LshEntry *e, int n, uint64 key)
{
	int			lo = 0;
	int			hi = n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if ((uint64) e[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A merge of the run's parts for walk w: one cursor per part's leaf level,
 * with room for a full leaf of the narrower (7-byte) format, and one per
 * part's pending rows, read now. ranged: it will merge key ranges
 * (pairs_merge_range) rather than every leaf from the leftmost.
 */
PairsMerge *
pairs_merge_begin(PairsRun *run, PairsWalk *walk, bool ranged)
{
	PairsMerge *pm = (PairsMerge *) palloc0(sizeof(PairsMerge));

	pm->run = run;
	pm->walk = walk;
	pm->ranged = ranged;
	pm->group.cap = 1024;
	pm->group.ids = (uint64 *) palloc(sizeof(uint64) * pm->group.cap);
	/* a group's ids in memory: a sixteenth of work_mem (512 ids at the minimum, 64kB) */
	pm->group.max_ids = (int) Min(run->budget / 4 / sizeof(uint64), (Size) (MaxAllocHugeSize / sizeof(uint64) / 2));
	/* leaves are read once: a ring buffer keeps them from evicting the data pages */
	pm->strategy = GetAccessStrategy(BAS_BULKREAD);
	pm->cursors = (PairsCursor *) palloc0(sizeof(PairsCursor) * run->nparts * 2);
	pm->heap = (int *) palloc(sizeof(int) * run->nparts * 2);
	pm->pending = (LshEntry **) palloc0(sizeof(LshEntry *) * run->nparts);
	pm->npending = (int *) palloc0(sizeof(int) * run->nparts);
	for (int p = 0; p < run->nparts; p++)
	{
		PairsCursor *c = &pm->cursors[run->nparts + p];

		c->part = p;
		pm->pending[p] = lsh_pending_entries(run->parts[p].index, &run->params, &pm->npending[p]);
		lsh_walk_init(&c->lw, run->parts[p].index, NULL);
		lsh_cursor_level(&c->leaves, &c->lw, InvalidBlockNumber, BUFFER_LOCK_SHARE, 0);
	}
	for (int p = 0; p < run->nparts; p++)
	{
		PairsCursor *c = &pm->cursors[p];

		c->part = p;
		c->leaf = (LshEntry *) palloc(sizeof(LshEntry) * (LSH_CONTENT_SIZE / LSH_NARROW_ENTRY_SIZE + 1));
		/* the same checked reads as scans; a right-link cycle ends at the block count */
		lsh_walk_init(&c->lw, run->parts[p].index, pm->strategy);
	}
	return pm;
}

void
pairs_merge_end(PairsMerge *pm)
{
	FreeAccessStrategy(pm->strategy);
}

/* Every band group of every part, from each part's leftmost leaf (the serial walk). */
void
pairs_merge_all(PairsMerge *pm)
{
	PairsRun   *run = pm->run;

	pm->nheap = 0;
	for (int p = 0; p < run->nparts; p++)
	{
		PairsCursor *c = &pm->cursors[run->nparts + p];

		c->leaf = pm->pending[p];
		c->n = pm->npending[p];
		c->pos = 0;
		if (c->n > 0)
			heap_push(pm, run->nparts + p);
	}
	for (int p = 0; p < run->nparts; p++)
	{
		PairsCursor *c = &pm->cursors[p];

		lsh_cursor_level(&c->leaves, &c->lw, run->parts[p].leftmost, BUFFER_LOCK_SHARE, 0);
		if (cursor_fill(pm, c))
			heap_push(pm, p);
	}
	merge(pm);
}

/*
 * The band groups of keys in [lo, hi] of every part (a ranged merge). The
 * range must hold whole groups: lo and hi + 1 multiples of the group width
 * (keys equal under run->key_mask). Each part's leaves are found by a
 * descent to lo under the metapage lock, held until the first leaf is
 * copied (the descent's leaf must hold lo: a split in between would move lo
 * to the right); later leaves follow right links as in the whole walk.
 */
void
pairs_merge_range(PairsMerge *pm, uint32 lo, uint32 hi)
{
	PairsRun   *run = pm->run;

	Assert(pm->ranged);
	pm->lo = lo;
	pm->hi = hi;
	pm->nheap = 0;
	for (int p = 0; p < run->nparts; p++)
	{
		PairsCursor *c = &pm->cursors[run->nparts + p];
		int			from = entries_lower_bound(pm->pending[p], pm->npending[p], lo);
		int			to = entries_lower_bound(pm->pending[p], pm->npending[p], (uint64) hi + 1);

		c->leaf = pm->pending[p] + from;
		c->n = to - from;
		c->pos = 0;
		if (c->n > 0)
			heap_push(pm, run->nparts + p);
	}
	for (int p = 0; p < run->nparts; p++)
	{
		PairsCursor *c = &pm->cursors[p];
		Relation	index = run->parts[p].index;
		LshMetaPage meta;
		Buffer		metabuf;
		bool		loaded;

		c->n = c->pos = 0;
		if (run->parts[p].leftmost == InvalidBlockNumber)
			continue;			/* nothing was ever inserted */
		metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
		lsh_cursor_range(&c->leaves, &c->lw, meta, lo, hi);
		loaded = cursor_load(pm, c);
		UnlockReleaseBuffer(metabuf);
		if (loaded && cursor_fill(pm, c))
			heap_push(pm, p);
	}
	merge(pm);
}
