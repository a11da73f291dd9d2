/*
 * The all-pairs walk: one pass along the leaf level of an lsh index's band
 * tree, in key order, where rows sharing a band are runs of equal keys (a
 * run may continue on the next leaf when it reaches the leaf's high key).
 *
 * For each run of two rows or more (a band group), every pair of its rows is
 * a candidate. It is verified only in the group of the first band where the
 * two stored signatures agree entirely (see pairs.h), so each pair is
 * verified and emitted once, without remembering pairs. Verification reads
 * the signatures from the index's data pages, never the heap; only pairs that
 * pass reach the row cache (visibility under the snapshot, keys).
 *
 * Memory: a group's signatures are read in chunks that fit a quarter of
 * work_mem and compared block against block, so a group of many thousands of
 * identical rows (m^2 / 2 pairs) costs time, not memory; a group's row ids
 * spill to a tuplesort beyond a sixteenth of work_mem.
 *
 * Concurrency: no metapage lock is held during the walk, so inserts and
 * VACUUM proceed. A leaf is copied under its share lock together with its
 * right link. Splits only move entries to a new right sibling, which the
 * walk, following the saved link, either has read already (in the copy) or
 * has yet to reach -- the argument VACUUM's leaf pass rests on too. Entries
 * added or moved meanwhile belong to rows the snapshot cannot see; entries
 * of rows it can see are neither removed nor re-slotted while it is held.
 */
#include <algorithm>

#include "core/hash.h"
#include "core/jaccard.h"
#include "pg/lsh/pairs.h"

extern "C" {
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/tuplesort.h"
}

/* the row ids of one band group */
typedef struct PairsGroup
{
	bool		open;
	uint32		key;
	uint32	   *ids;
	int			n;
	int			cap;
	int			max_ids;		/* beyond this, the ids go to spill */
	Tuplesortstate *spill;
} PairsGroup;

/* signatures of up to cap rows, read from the data pages */
typedef struct PairsChunk
{
	int			n;
	uint32	   *ids;
	ItemPointerData *tids;
	uint32	   *sigs;			/* n * num_perm values */
} PairsChunk;

/*
 * Data pages are read in random order, one slot at a time, millions of times
 * in a large walk. Two memories cut the cost of a read to little more than
 * touching the slot:
 *  - the buffer each block was last found in, so ReadRecentBuffer pins it
 *    without a lookup in the shared buffer table (a direct-mapped table of
 *    at most a sixteenth of work_mem);
 *  - which blocks have been checked to be data pages: index pages are never
 *    freed or reused for another type, so a block checked once stays one
 *    (this spares two cache misses, the page header and special space).
 */
typedef struct PairsPageHint
{
	BlockNumber block;
	Buffer		buffer;
} PairsPageHint;

typedef struct PairsPages
{
	uint32		mask;			/* size - 1, size a power of two */
	PairsPageHint *hint;
	uint8	   *checked;		/* bit per block below run->nblocks */
} PairsPages;

/*
 * Groups up to this size are verified in place, their pages locked together
 * (within PostgreSQL's limit of 200 LWLocks held at once).
 */
#define PAIRS_SMALL_GROUP	16

/* a pair of a small group that passed verification */
typedef struct PairsPassed
{
	uint8		i;
	uint8		j;
	double		sim;
} PairsPassed;

typedef struct PairsWalk
{
	PairsRun   *run;
	PairsPages	pages;
	PairsEmitFn emit;
	void	   *arg;
	LshEntry   *leaf;			/* copy of the current leaf */
	PairsGroup	group;
	int			chunk_cap;
	uint32	   *idbuf;			/* chunk_cap ids read from a group */
	PairsChunk	a;
	PairsChunk	b;
	PairsPassed passed[PAIRS_SMALL_GROUP * (PAIRS_SMALL_GROUP - 1) / 2];
	BlockNumber heap_nblocks;	/* the table's known size, for checking stored TIDs */
} PairsWalk;

/* A group reader: the unique ids of a group in ascending order, rewindable. */
typedef struct IdReader
{
	PairsGroup *g;
	int			pos;
	bool		have_last;
	uint32		last;
	int			mark_pos;
	bool		mark_have_last;
	uint32		mark_last;
} IdReader;

/* Leaves written by a build are already in order; inserts append out of order. */
static void
sort_entries(LshEntry *e, int n) noexcept
{
	auto		less = [](const LshEntry &x, const LshEntry &y) {
		return x.key != y.key ? x.key < y.key : x.value < y.value;
	};

	if (!std::is_sorted(e, e + n, less))
		std::sort(e, e + n, less);
}

/* sorts and removes duplicates; returns the new count */
static int
sort_unique_ids(uint32 *ids, int n) noexcept
{
	std::sort(ids, ids + n);
	return (int) (std::unique(ids, ids + n) - ids);
}

/* must fold exactly as lsh_band_keys() does */
static inline uint32
band_key(const uint32 *values, int band, int rows)
{
	uint64		h = minhash::band_hash(values + (Size) band * rows, rows, band);

	return (uint32) (h ^ (h >> 32));
}

/* first band in which the two signatures agree on every value, or -1 */
static inline int
first_equal_band(const uint32 *a, const uint32 *b, int bands, int rows)
{
	/* bands are a few values long: a plain loop beats a call to memcmp */
	for (int i = 0; i < bands; i++)
	{
		const uint32 *x = a + (Size) i * rows;
		const uint32 *y = b + (Size) i * rows;
		int			v = 0;

		while (v < rows && x[v] == y[v])
			v++;
		if (v == rows)
			return i;
	}
	return -1;
}

static void
chunk_alloc(PairsChunk *c, int cap, int num_perm)
{
	c->n = 0;
	c->ids = (uint32 *) palloc(sizeof(uint32) * cap);
	c->tids = (ItemPointerData *) palloc(sizeof(ItemPointerData) * cap);
	c->sigs = (uint32 *) palloc_extended(sizeof(uint32) * (Size) cap * num_perm, MCXT_ALLOC_HUGE);
}

static void
pages_init(PairsWalk *w)
{
	PairsRun   *run = w->run;
	Size		max_entries = Max((Size) work_mem * 1024 / 16 / sizeof(PairsPageHint), 1024);
	uint32		size = 1024;

	while (size < run->nblocks && (Size) size * 2 <= max_entries)
		size *= 2;
	w->pages.mask = size - 1;
	w->pages.hint = (PairsPageHint *) palloc(sizeof(PairsPageHint) * size);
	for (uint32 i = 0; i < size; i++)
	{
		w->pages.hint[i].block = InvalidBlockNumber;
		w->pages.hint[i].buffer = InvalidBuffer;
	}
	w->pages.checked = (uint8 *) palloc0(run->nblocks / 8 + 1);
}

/* The data page blkno, pinned and share-locked and checked (XX002 if it is not a sound data page). */
static Buffer
read_data_page(PairsWalk *w, BlockNumber blkno)
{
	PairsPages *pc = &w->pages;
	PairsPageHint *h = &pc->hint[blkno & pc->mask];
	Buffer		buf;

	/* the walk skips row ids beyond run->nrowids: blkno < run->nblocks */
	Assert(blkno < w->run->nblocks);
	if (h->block == blkno &&
		ReadRecentBuffer(MH_REL_LOCATOR(w->run->index), MAIN_FORKNUM, blkno, h->buffer))
		buf = h->buffer;
	else
	{
		buf = ReadBuffer(w->run->index, blkno);
		h->block = blkno;
		h->buffer = buf;
	}
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if ((pc->checked[blkno >> 3] & (1 << (blkno & 7))) == 0)
	{
		/* entries name allocated slots: anything but a sound data page is damage */
		const char *problem = blkno == LSH_METAPAGE_BLKNO ? "link to the metapage" :
			lsh_page_problem(BufferGetPage(buf), LSH_PAGE_DATA, 0, &w->run->params);

		if (problem != NULL)
			lsh_corrupted(w->run->index, problem, blkno);
		pc->checked[blkno >> 3] |= (uint8) (1 << (blkno & 7));
	}
	return buf;
}

/*
 * The slot of row id on its data page, checked (state, TID within the
 * table: emitting a pair fetches the heap tuple); NULL unless LIVE, since a
 * DEAD slot's TID may already name another tuple.
 */
static const LshSlotHeader *
live_slot(PairsWalk *w, Page page, uint32 id, BlockNumber blkno)
{
	PairsRun   *run = w->run;
	const LshSlotHeader *slot = LshDataSlot(page, lsh_rowid_slot(&run->params, id),
											run->params.num_perm);
	const char *problem = lsh_slot_problem(slot);

	if (problem != NULL)
		lsh_corrupted(run->index, problem, blkno);
	if (slot->state != LSH_SLOT_LIVE)
		return NULL;
	lsh_check_heap_tid(run->index, run->heap, &w->heap_nblocks, &slot->tid, blkno);
	return slot;
}

/*
 * Read the stored signatures of ids[0..n) (ascending, so each data page is
 * visited once) into c, keeping LIVE slots only: a DEAD slot's TID may
 * already name another tuple.
 */
static void
load_chunk(PairsWalk *w, const uint32 *ids, int n, PairsChunk *c)
{
	PairsRun   *run = w->run;
	const LshIndexParams *params = &run->params;
	int			k = params->num_perm;
	Buffer		buf = InvalidBuffer;
	BlockNumber cur = InvalidBlockNumber;

	c->n = 0;
	for (int i = 0; i < n; i++)
	{
		BlockNumber blkno = lsh_rowid_block(params, ids[i]);
		const LshSlotHeader *slot;

		if (blkno != cur)
		{
			if (BufferIsValid(buf))
				UnlockReleaseBuffer(buf);
			buf = read_data_page(w, blkno);
			cur = blkno;
		}
		slot = live_slot(w, BufferGetPage(buf), ids[i], blkno);
		if (slot == NULL)
			continue;
		c->ids[c->n] = ids[i];
		c->tids[c->n] = slot->tid;
		memcpy(c->sigs + (Size) c->n * k, LshSlotValues(slot), sizeof(uint32) * k);
		c->n++;
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/*
 * Is (a, b) a pair of this group to verify, and does it pass? Returns the
 * estimate, or with exact => true 0 for "passed on to the exact check"; -1
 * if not. Reads only the signatures.
 */
static inline double
verify(PairsWalk *w, const uint32 *sa, const uint32 *sb)
{
	PairsRun   *run = w->run;
	int			f = first_equal_band(sa, sb, run->params.bands, run->params.rows);
	double		sim;

	/* no band fully equal: the keys collided by chance (not a candidate) */
	if (f < 0 || band_key(sa, f, run->params.rows) != w->group.key)
		return -1;
	run->candidates++;
	if (run->args.exact)
		return 0;
	/* the % operator's own estimate, so results match a.sig % b.sig */
	sim = minhash::jaccard_estimate(sa, sb, run->params.num_perm);
	return sim < run->args.threshold ? -1 : sim;
}

/* A verified pair: emit it if both rows are visible (and, exact, similar enough). */
static void
emit_pair(PairsWalk *w, uint32 ida, ItemPointer tida, uint32 idb, ItemPointer tidb, double sim)
{
	PairsRun   *run = w->run;
	PairsRow   *a;
	PairsRow   *b;

	pairs_resolve(run, ida, tida, idb, tidb, &a, &b);
	if (a->status != PAIRS_ROW_VISIBLE || b->status != PAIRS_ROW_VISIBLE)
		return;
	if (run->args.exact)
	{
		if (a->text_isnull || b->text_isnull)
			return;
		sim = pairs_exact_jaccard(a->shingles, b->shingles);
		if (sim < run->args.threshold)
			return;
	}
	run->pairs++;
	if (pairs_compare_keys(run, a->key, b->key) > 0)
		w->emit(run, w->arg, b, a, sim);
	else
		w->emit(run, w->arg, a, b, sim);
}

static inline void
consider(PairsWalk *w, const PairsChunk *ca, int i, const PairsChunk *cb, int j)
{
	int			k = w->run->params.num_perm;
	double		sim = verify(w, ca->sigs + (Size) i * k, cb->sigs + (Size) j * k);

	if (sim >= 0)
		emit_pair(w, ca->ids[i], &ca->tids[i], cb->ids[j], &cb->tids[j], sim);
}

static void
compare_within(PairsWalk *w, const PairsChunk *c)
{
	for (int i = 0; i < c->n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		for (int j = i + 1; j < c->n; j++)
			consider(w, c, i, c, j);
	}
}

static void
compare_across(PairsWalk *w, const PairsChunk *ca, const PairsChunk *cb)
{
	for (int i = 0; i < ca->n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		for (int j = 0; j < cb->n; j++)
			consider(w, ca, i, cb, j);
	}
}

/*
 * A small group (most are two or three rows) is verified in place: its data
 * pages stay pinned and share-locked while the pairs are checked, so a
 * signature is read only as far as the check needs -- usually its first
 * band or two -- instead of being copied whole. Passing pairs are collected
 * and emitted once the pages are released (emitting fetches heap rows).
 */
static void
pairs_of_small_group(PairsWalk *w, const uint32 *ids, int n)
{
	PairsRun   *run = w->run;
	const LshIndexParams *params = &run->params;
	Buffer		bufs[PAIRS_SMALL_GROUP];
	const LshSlotHeader *slots[PAIRS_SMALL_GROUP];
	uint32		live_ids[PAIRS_SMALL_GROUP];
	ItemPointerData tids[PAIRS_SMALL_GROUP];
	int			nbufs = 0;
	int			m = 0;
	int			npassed = 0;

	for (int i = 0; i < n; i++)
	{
		BlockNumber blkno = lsh_rowid_block(params, ids[i]);
		const LshSlotHeader *slot;

		/* ids ascend, so a page repeats only as the last one taken */
		if (nbufs == 0 || BufferGetBlockNumber(bufs[nbufs - 1]) != blkno)
		{
			bufs[nbufs++] = read_data_page(w, blkno);
		}
		slot = live_slot(w, BufferGetPage(bufs[nbufs - 1]), ids[i], blkno);
		if (slot == NULL)
			continue;
		slots[m] = slot;
		live_ids[m] = ids[i];
		tids[m] = slot->tid;
		m++;
	}
	for (int i = 0; i < m; i++)
	{
		for (int j = i + 1; j < m; j++)
		{
			double		sim = verify(w, LshSlotValues(slots[i]), LshSlotValues(slots[j]));

			if (sim >= 0)
			{
				PairsPassed *p = &w->passed[npassed++];

				p->i = (uint8) i;
				p->j = (uint8) j;
				p->sim = sim;
			}
		}
	}
	for (int b = 0; b < nbufs; b++)
		UnlockReleaseBuffer(bufs[b]);
	for (int p = 0; p < npassed; p++)
	{
		const PairsPassed *pp = &w->passed[p];

		emit_pair(w, live_ids[pp->i], &tids[pp->i], live_ids[pp->j], &tids[pp->j], pp->sim);
	}
}

static int
reader_next(IdReader *r, uint32 *out, int max)
{
	int			n = 0;

	while (n < max)
	{
		uint32		id;

		if (r->g->spill != NULL)
		{
			Datum		d;
			bool		isnull;

			if (!mh_tuplesort_getdatum(r->g->spill, true, &d, &isnull))
				break;
			id = (uint32) DatumGetInt64(d);
		}
		else
		{
			if (r->pos >= r->g->n)
				break;
			id = r->g->ids[r->pos++];
		}
		if (r->have_last && id == r->last)
			continue;
		r->have_last = true;
		r->last = id;
		out[n++] = id;
	}
	return n;
}

static void
reader_mark(IdReader *r)
{
	if (r->g->spill != NULL)
		tuplesort_markpos(r->g->spill);
	r->mark_pos = r->pos;
	r->mark_have_last = r->have_last;
	r->mark_last = r->last;
}

static void
reader_restore(IdReader *r)
{
	if (r->g->spill != NULL)
		tuplesort_restorepos(r->g->spill);
	r->pos = r->mark_pos;
	r->have_last = r->mark_have_last;
	r->last = r->mark_last;
}

/*
 * All pairs of a large group, block against block: chunk A (the next ids in
 * order) against itself, then against every later chunk B. Two chunks are
 * in memory at a time.
 */
static void
pairs_of_large_group(PairsWalk *w)
{
	IdReader	r;

	memset(&r, 0, sizeof(r));
	r.g = &w->group;
	for (;;)
	{
		int			n = reader_next(&r, w->idbuf, w->chunk_cap);

		if (n == 0)
			break;
		reader_mark(&r);
		load_chunk(w, w->idbuf, n, &w->a);
		compare_within(w, &w->a);
		while ((n = reader_next(&r, w->idbuf, w->chunk_cap)) > 0)
		{
			load_chunk(w, w->idbuf, n, &w->b);
			compare_across(w, &w->a, &w->b);
		}
		reader_restore(&r);
	}
}

static void
finish_group(PairsWalk *w)
{
	PairsGroup *g = &w->group;
	PairsRun   *run = w->run;

	if (!g->open)
		return;
	g->open = false;
	if (g->spill != NULL)
	{
		run->groups++;
		run->spilled_groups++;
		tuplesort_performsort(g->spill);
		pairs_of_large_group(w);
		tuplesort_end(g->spill);
		g->spill = NULL;
		return;
	}
	if (g->n < 2)
		return;
	/* a group continued from the previous leaf is two sorted runs; a row may repeat (32-bit key collision of two of its bands) */
	g->n = sort_unique_ids(g->ids, g->n);
	if (g->n < 2)
		return;
	run->groups++;
	if (g->n <= PAIRS_SMALL_GROUP)
		pairs_of_small_group(w, g->ids, g->n);
	else if (g->n <= w->chunk_cap)
	{
		load_chunk(w, g->ids, g->n, &w->a);
		compare_within(w, &w->a);
	}
	else
		pairs_of_large_group(w);
}

static void
start_group(PairsWalk *w, uint32 key)
{
	w->group.open = true;
	w->group.key = key;
	w->group.n = 0;
}

static void
group_add(PairsWalk *w, const LshEntry *e, int n)
{
	PairsGroup *g = &w->group;
	PairsRun   *run = w->run;

	for (int i = 0; i < n; i++)
	{
		uint32		id = e[i].value;

		/* a row indexed after the walk began: invisible to the snapshot */
		if (id >= run->nrowids)
			continue;
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
			g->ids = (uint32 *) repalloc_huge(g->ids, sizeof(uint32) * g->cap);
		}
		g->ids[g->n++] = id;
	}
}

/*
 * Progress: band keys are uniform 32-bit hashes walked in order, so the
 * current key over 2^32 is the share of the walk done. A NOTICE every ten
 * seconds (none in a short run), DEBUG1 at every tenth.
 */
static void
report_progress(PairsRun *run, uint32 key)
{
	double		done = key / 4294967296.0;
	int			decile = (int) (done * 10);
	TimestampTz now = GetCurrentTimestamp();

	if (decile > run->last_decile)
	{
		run->last_decile = decile;
		elog(DEBUG1, "%s: %d%% of index \"%s\" walked, " UINT64_FORMAT " pairs so far",
			 run->args.funcname, decile * 10, RelationGetRelationName(run->index), run->pairs);
	}
	if (TimestampDifferenceExceeds(run->last_notice, now, 10000))
	{
		run->last_notice = now;
		ereport(NOTICE,
				(errmsg("%s: %.0f%% of index \"%s\" walked, " UINT64_FORMAT " pairs so far",
						run->args.funcname, done * 100, RelationGetRelationName(run->index),
						run->pairs)));
	}
}

/*
 * Ask the CPU for what verifying this leaf's groups will touch, before
 * touching it: each row's page hint, then (once the hints are in) its buffer
 * descriptor and slot. Reading a slot costs three cache misses that would
 * otherwise come one after another (pinning serialises them); fetched
 * together for the few hundred rows of a leaf's groups, they overlap. Only a
 * hint: a prefetch of an address that turns out stale is harmless.
 */
static void
prefetch_leaf(PairsWalk *w, const LshEntry *e, int n)
{
	const LshIndexParams *params = &w->run->params;
	PairsPages *pc = &w->pages;
	Size		slot_size = LSH_SLOT_SIZE(params->num_perm);

	for (int pass = 0; pass < 2; pass++)
	{
		for (int i = 0; i < n; i++)
		{
			uint32		id = e[i].value;
			PairsPageHint *h;

			/* rows in runs of two or more (a run may also continue an open group: not worth it) */
			if (!((i + 1 < n && e[i + 1].key == e[i].key) || (i > 0 && e[i - 1].key == e[i].key)))
				continue;
			if (id >= w->run->nrowids)
				continue;
			h = &pc->hint[lsh_rowid_block(params, id) & pc->mask];
			if (pass == 0)
				__builtin_prefetch(h);
			else if (h->block == lsh_rowid_block(params, id) && h->buffer > 0)
			{
				__builtin_prefetch(GetBufferDescriptor(h->buffer - 1));
				__builtin_prefetch((char *) BufferGetBlock(h->buffer) + LSH_CONTENT_START +
								   lsh_rowid_slot(params, id) * slot_size);
			}
		}
	}
}

void
pairs_walk(PairsRun *run, PairsEmitFn emit, void *arg)
{
	MemoryContext oldcxt;
	PairsWalk	w;
	LshWalk		lw;
	BufferAccessStrategy strategy;
	BlockNumber blkno = run->leftmost;
	int			k = run->params.num_perm;
	Size		per_row;

	if (k == 0 || blkno == InvalidBlockNumber)
		return;					/* nothing was ever inserted */

	oldcxt = MemoryContextSwitchTo(run->cxt);
	memset(&w, 0, sizeof(w));
	w.run = run;
	w.emit = emit;
	w.arg = arg;
	/* room for a full leaf of the narrower (7-byte) format */
	w.leaf = (LshEntry *) palloc(sizeof(LshEntry) * (LSH_CONTENT_SIZE / LSH_NARROW_ENTRY_SIZE + 1));
	/* two chunks of signatures (and their ids) in a quarter of work_mem */
	per_row = sizeof(uint32) * k + sizeof(ItemPointerData) + 2 * sizeof(uint32);
	w.chunk_cap = (int) Max(run->budget / 2 / per_row, (Size) 16);
	w.idbuf = (uint32 *) palloc(sizeof(uint32) * w.chunk_cap);
	chunk_alloc(&w.a, w.chunk_cap, k);
	chunk_alloc(&w.b, w.chunk_cap, k);
	pages_init(&w);
	w.group.cap = 1024;
	w.group.ids = (uint32 *) palloc(sizeof(uint32) * w.group.cap);
	/* a group's ids in memory: a sixteenth of work_mem (1024 ids at the minimum, 64kB) */
	w.group.max_ids = (int) Min(run->budget / 4 / sizeof(uint32), (Size) (MaxAllocHugeSize / sizeof(uint32) / 2));
	run->started = run->last_notice = GetCurrentTimestamp();
	run->last_decile = 0;

	/* leaves are read once: a ring buffer keeps them from evicting the data pages */
	strategy = GetAccessStrategy(BAS_BULKREAD);
	/* the same checked reads as scans; a right-link cycle ends at the block count */
	lsh_walk_init(&lw, run->index, strategy);
	lsh_walk_expect_low(&lw, true, 0);	/* the leftmost leaf's range starts at key 0 */
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page;
		LshPageOpaque opaque;
		int			n;
		bool		has_high;
		uint32		high;

		CHECK_FOR_INTERRUPTS();
		buf = lsh_walk_read(&lw, blkno, BUFFER_LOCK_SHARE, LSH_PAGE_LEAF, 0, NULL,
							InvalidBlockNumber, &page);
		opaque = LshPageGetOpaque(page);
		n = lsh_leaf_decode(page, w.leaf);
		has_high = (opaque->flags & LSH_HAS_HIGH) != 0;
		high = opaque->high;
		blkno = lsh_walk_right(&lw, page);
		UnlockReleaseBuffer(buf);

		run->leaves++;
		run->entries += n;
		sort_entries(w.leaf, n);
		prefetch_leaf(&w, w.leaf, n);
		for (int i = 0; i < n;)
		{
			uint32		key = w.leaf[i].key;
			int			j = i + 1;

			while (j < n && w.leaf[j].key == key)
				j++;
			if (!(w.group.open && w.group.key == key))
			{
				finish_group(&w);
				start_group(&w, key);
			}
			group_add(&w, w.leaf + i, j - i);
			i = j;
		}
		/* only a run reaching the high key may continue on the next leaf */
		if (w.group.open && !(has_high && w.group.key >= high))
			finish_group(&w);
		if (has_high)
			report_progress(run, high);
	}
	finish_group(&w);
	FreeAccessStrategy(strategy);

	elog(DEBUG1, "%s: " UINT64_FORMAT " leaves, " UINT64_FORMAT " entries, " UINT64_FORMAT
		 " groups (" UINT64_FORMAT " spilled), " UINT64_FORMAT " candidates, " UINT64_FORMAT
		 " pairs, " UINT64_FORMAT " heap fetches, " UINT64_FORMAT " row cache resets",
		 run->args.funcname, run->leaves, run->entries, run->groups, run->spilled_groups,
		 run->candidates, run->pairs, run->fetches, run->cache_resets);
	MemoryContextSwitchTo(oldcxt);
}
