/*
 * The all-pairs walk: one pass along the leaf level of an lsh index's band
 * tree, in key order, where rows sharing a band are runs of equal keys (a
 * run may continue on the next leaf when it reaches the leaf's high key).
 *
 * For each run of two rows or more (a band group), every pair of its rows is
 * a candidate, as a % probe of either row would find the other. It is
 * verified only in the group of the first key the two stored signatures
 * share (lsh_probe_first_key, see pairs.h), so each pair is verified and
 * emitted once, without remembering pairs. Verification reads
 * the signatures from the index's data pages, never the heap; only pairs that
 * pass reach the row cache (visibility under the snapshot, keys). An index
 * whose slots keep fewer bits than its signatures (run->heap_verify) only
 * rules pairs out here: a slot agrees wherever the signature does, so fewer
 * equal slot values than the threshold needs (bbit_min_matches) rule a pair
 * out, and the rows' own signatures decide the rest (pairs_emit_verified).
 *
 * Memory: a group's signatures are read in chunks that fit a quarter of
 * work_mem and compared block against block, so a group of many thousands of
 * identical rows (m^2 / 2 pairs) costs time, not memory.
 *
 * The leaves come from the partition-cursor merge (pairs_merge.cpp): every
 * part's leaf level (the index, or each partition's index) and its pending
 * rows, in key order, gathered into band groups (a group's row ids spill to
 * a tuplesort beyond a sixteenth of work_mem) and handed here, those of two
 * rows or more, one at a time (pairs_verify_group).
 *
 * Key ranges: a walker may cover only keys [lo, hi] (pairs_walk_range), as
 * the parallel walk's participants do (pairs_parallel.cpp): the merge keeps
 * the entries of the range, and its verified pairs go to a callback (the
 * queue to the leader) instead of straight to the row cache.
 *
 * Concurrency: no metapage lock is held during the walk (see
 * pairs_merge.cpp for the leaves). Entries added or moved meanwhile belong
 * to rows the snapshot cannot see; entries of rows it can see are neither
 * removed nor re-slotted while it is held.
 */
#include "pg/pg_prelude.h"

#include <algorithm>

#include "core/bbit.h"
#include "core/jaccard.h"
#include "pg/pairs/pairs_merge.h"
#include "pg/pairs/pairs_pages.h"

extern "C" {
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "common/hashfn.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/tuplesort.h"
}

/* signatures of up to cap rows, read from the data pages */
typedef struct PairsChunk
{
	int			n;
	uint64	   *ids;
	ItemPointerData *tids;
	uint32	   *sigs;			/* n * num_perm values */
} PairsChunk;

/*
 * Groups up to this size are verified in place, their pages locked together
 * (within PostgreSQL's limit of 200 LWLocks held at once).
 */
#define PAIRS_SMALL_GROUP	16

/*
 * The classes of identical signatures of one large group (collapse_group):
 * class c's first row (smallest row id) and signature are sigs.ids[c],
 * sigs.tids[c] and sigs.sigs (the walk's second chunk, idle meanwhile),
 * found by a hash of the signature (open addressing, slot = class + 1).
 */
typedef struct PairsClasses
{
	PairsChunk *sigs;
	uint32	   *count;			/* live rows of each class */
	bool	   *members_due;	/* send the class's rows (PAIRS_SAME) */
	uint64	   *hash;
	int32	   *slot;
	uint32		mask;
	int			last;			/* the class the previous row fell into */
} PairsClasses;

/* a pair of a small group that passed verification */
typedef struct PairsPassed
{
	uint8		i;
	uint8		j;
	double		sim;
} PairsPassed;

struct PairsWalk
{
	PairsRun   *run;
	PairsPages	pages;
	PairsVerifiedFn verified;	/* where a verified pair goes */
	void	   *arg;
	PairsMerge *merge;			/* the parts' leaves in key order (pairs_merge.cpp) */
	PairsGroup *group;			/* the group being verified */
	int			chunk_cap;
	uint64	   *idbuf;			/* chunk_cap ids read from a group */
	PairsChunk	a;
	PairsChunk	b;
	PairsPassed passed[PAIRS_SMALL_GROUP * (PAIRS_SMALL_GROUP - 1) / 2];
	PairsClasses classes;		/* run->collapse: a large group's identical signatures */
	int			need;			/* equal values a pair needs at the threshold (bbit_min_matches) */
	bool		heap_verify;	/* compact slots: rule out only (a worker's run has no row cache) */
	uint32	   *small;			/* compact slots: a small group's values widened to 32 bits */
};

/* Where a group reader is: the next in-memory id, the last id returned. */
typedef struct IdReaderPos
{
	int			pos;
	bool		have_last;
	uint64		last;
} IdReaderPos;

/* A group reader: the unique ids of a group in ascending order, rewindable to a mark. */
typedef struct IdReader
{
	PairsGroup *g;
	IdReaderPos at;
	IdReaderPos mark;
} IdReader;

/* sorts and removes duplicates; returns the new count */
static int
sort_unique_ids(uint64 *ids, int n) noexcept
{
	std::sort(ids, ids + n);
	return (int) (std::unique(ids, ids + n) - ids);
}

static void
chunk_alloc(PairsChunk *c, int cap, int num_perm)
{
	c->n = 0;
	c->ids = (uint64 *) palloc(sizeof(uint64) * cap);
	c->tids = (ItemPointerData *) palloc(sizeof(ItemPointerData) * cap);
	c->sigs = (uint32 *) palloc_extended(sizeof(uint32) * (Size) cap * num_perm, MCXT_ALLOC_HUGE);
}

void
pairs_pages_init(PairsRun *run, PairsPages *pages)
{
	Size		max_entries = Max((Size) work_mem * 1024 / 16 / sizeof(LshBufferHint), 1024);
	uint32		size = 1024;
	uint64		nblocks = 0;

	for (int p = 0; p < run->nparts; p++)
	{
		nblocks += run->parts[p].nblocks;
		run->parts[p].checked = (uint8 *) palloc0(run->parts[p].nblocks / 8 + 1);
	}
	while (size < nblocks && (Size) size * 2 <= max_entries)
		size *= 2;
	pages->mask = size - 1;
	pages->hint = (LshBufferHint *) palloc0(sizeof(LshBufferHint) * size);
}

/*
 * Read the stored signatures of ids[0..n) (ascending, so each data page is
 * visited once) into c, keeping LIVE slots only: a DEAD slot's TID may
 * already name another tuple.
 */
static void
load_chunk(PairsWalk *w, const uint64 *ids, int n, PairsChunk *c)
{
	PairsRun   *run = w->run;
	const LshIndexParams *params = &run->params;
	int			k = params->num_perm;
	Buffer		buf = InvalidBuffer;
	BlockNumber cur = InvalidBlockNumber;
	int			curpart = -1;

	c->n = 0;
	for (int i = 0; i < n; i++)
	{
		int			part = pairs_part_of(run, ids[i]);
		uint32		rowid = (uint32) (ids[i] - run->parts[part].base);
		BlockNumber blkno = lsh_rowid_block(params, rowid);
		const LshSlotHeader *slot;

		if (blkno != cur || part != curpart)
		{
			if (BufferIsValid(buf))
				UnlockReleaseBuffer(buf);
			buf = pairs_read_data_page(w->run, &w->pages, part, blkno);
			cur = blkno;
			curpart = part;
		}
		slot = pairs_live_slot(w->run, part, BufferGetPage(buf), rowid, blkno);
		if (slot == NULL)
			continue;
		c->ids[c->n] = ids[i];
		c->tids[c->n] = slot->tid;
		/* compact slots are compared widened to 32 bits (their band keys are computed so too) */
		lsh_slot_values32(params, slot, c->sigs + (Size) c->n * k);
		c->n++;
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/* the band of the group being verified (version-2 keys carry it in their top bits) */
static inline int
group_band(const PairsWalk *w)
{
	int			bb = w->run->params.layout.band_bits;

	return bb == 0 ? 0 : (int) (w->group->key >> (32 - bb));
}

/*
 * Is (a, b) a pair of this group to verify: is the group's key the first key
 * the two signatures share at the probe depth (lsh_probe_first_key)? Each
 * pair is verified in one group only. Reads only the signatures.
 */
static inline bool
verified_here(const PairsWalk *w, const uint32 *sa, const uint32 *sb)
{
	const PairsRun *run = w->run;

	return lsh_probe_first_key(&run->params, run->depth, sa, sb, w->group->key);
}

/*
 * Is (a, b) a pair of this group to verify, and does it pass? Returns the
 * estimate (with exact => true unfiltered: the exact check decides), or
 * pairs_in_band for compact slots; -1 if not. Reads only the signatures.
 */
static inline double
verify(PairsWalk *w, const uint32 *sa, const uint32 *sb)
{
	PairsRun   *run = w->run;
	int			k = run->params.num_perm;
	int			same;
	double		sim;

	if (w->heap_verify)
	{
		/*
		 * Compact slots: the group's key is the signatures' (a candidate, as
		 * a % probe finds it), but whether it is the pair's first shared key
		 * needs the signatures' values, which the slots do not keep. A slot
		 * agrees wherever the signature does, so too few equal slot values
		 * rule the pair out; the rows' signatures decide the rest
		 * (pairs_emit_verified), with the exact check when exact => true.
		 */
		run->candidates++;
		if (!run->args.exact && minhash::matching_values(sa, sb, k) < w->need)
			return -1;
		return pairs_in_band(group_band(w));
	}
	if (!verified_here(w, sa, sb))
		return -1;
	run->candidates++;
	/* the % operator's own estimate (b-bit corrected for compact signatures), so results match a.sig % b.sig */
	same = minhash::matching_values(sa, sb, k);
	sim = minhash::bbit_jaccard(same, k, MINHASH_WIDTH_BITS(run->params.sig_width));
	/* exact: the shingles decide, or this estimate for a row too large for them */
	if (run->args.exact)
		return sim;
	return same < w->need ? -1 : sim;
}

/*
 * A verified pair: emit it if both rows are visible (and, exact, similar
 * enough). The serial walk calls this for each pair it verifies; a parallel
 * walk's leader for each pair its workers send (pairs_parallel.cpp).
 */
void
pairs_emit_verified(PairsRun *run, PairsEmitFn emit, void *arg, uint64 ida, ItemPointer tida,
					uint64 idb, ItemPointer tidb, double sim)
{
	PairsRow   *a;
	PairsRow   *b;

	if (run->deferred != NULL)
	{
		pairs_table_order_add(run, ida, tida, idb, tidb, sim);
		return;
	}
	pairs_resolve(run, ida, tida, idb, tidb, &a, &b);
	if (sim < 0)
	{
		/* a class record of a collapsing walk: a first, visible or not */
		emit(run, arg, a, b, sim);
		return;
	}
	if (a->status != PAIRS_ROW_VISIBLE || b->status != PAIRS_ROW_VISIBLE)
		return;
	if (pairs_is_in_band(sim))
	{
		const LshIndexParams *p = &run->params;
		uint32		va[MINHASH_MAX_NUM_PERM];
		uint32		vb[MINHASH_MAX_NUM_PERM];

		/*
		 * The slots only ruled the pair in: on the rows' signatures, is the
		 * group's band the first whose key the two share (the probe rule,
		 * lsh_probe_first_key; else another group emits the pair), and does
		 * the % operator's estimate pass?
		 */
		if (a->sig == NULL || b->sig == NULL)
			return;
		minhash::widen_values(a->sig, p->num_perm, (minhash::ValueWidth) p->sig_width, va);
		minhash::widen_values(b->sig, p->num_perm, (minhash::ValueWidth) p->sig_width, vb);
		if (!lsh_probe_first_key(p, run->depth, va, vb, pairs_in_band_key(p, pairs_in_band_band(sim))))
			return;
		sim = minhash::bbit_jaccard(minhash::matching_values(va, vb, p->num_perm), p->num_perm,
									MINHASH_WIDTH_BITS(p->sig_width));
		if (!run->args.exact && sim < run->args.threshold)
			return;
	}
	if (run->args.exact)
	{
		if (a->text_isnull || b->text_isnull)
			return;
		/* no shingles: too many for work_mem (pairs_rows.cpp), the estimate stands */
		if (a->shingles != NULL && b->shingles != NULL)
			sim = pairs_exact_jaccard(a->shingles, b->shingles);
		if (sim < run->args.threshold)
			return;
	}
	run->pairs++;
	if (pairs_compare_keys(run, a->key, b->key) > 0)
		emit(run, arg, b, a, sim);
	else
		emit(run, arg, a, b, sim);
}

static inline void
emit_pair(PairsWalk *w, uint64 ida, ItemPointer tida, uint64 idb, ItemPointer tidb, double sim)
{
	w->verified(w->run, w->arg, ida, tida, idb, tidb, sim);
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
pairs_of_small_group(PairsWalk *w, const uint64 *ids, int n)
{
	PairsRun   *run = w->run;
	const LshIndexParams *params = &run->params;
	Buffer		bufs[PAIRS_SMALL_GROUP];
	int			bufparts[PAIRS_SMALL_GROUP];
	const uint32 *values[PAIRS_SMALL_GROUP];
	uint64		live_ids[PAIRS_SMALL_GROUP];
	ItemPointerData tids[PAIRS_SMALL_GROUP];
	int			nbufs = 0;
	int			m = 0;
	int			npassed = 0;

	for (int i = 0; i < n; i++)
	{
		int			part = pairs_part_of(run, ids[i]);
		uint32		rowid = (uint32) (ids[i] - run->parts[part].base);
		BlockNumber blkno = lsh_rowid_block(params, rowid);
		const LshSlotHeader *slot;

		/* ids ascend (part, then row id), so a page repeats only as the last one taken */
		if (nbufs == 0 || bufparts[nbufs - 1] != part ||
			BufferGetBlockNumber(bufs[nbufs - 1]) != blkno)
		{
			bufparts[nbufs] = part;
			bufs[nbufs++] = pairs_read_data_page(w->run, &w->pages, part, blkno);
		}
		slot = pairs_live_slot(w->run, part, BufferGetPage(bufs[nbufs - 1]), rowid, blkno);
		if (slot == NULL)
			continue;
		/* 32-bit slots are read in place; compact ones widened (as their band keys were computed) */
		if (w->small != NULL)
		{
			uint32	   *wide = w->small + (Size) m * params->num_perm;

			lsh_slot_values32(params, slot, wide);
			values[m] = wide;
		}
		else
			values[m] = (const uint32 *) LshSlotValues(slot);
		live_ids[m] = ids[i];
		tids[m] = slot->tid;
		m++;
	}
	for (int i = 0; i < m; i++)
	{
		for (int j = i + 1; j < m; j++)
		{
			double		sim = verify(w, values[i], values[j]);

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
reader_next(IdReader *r, uint64 *out, int max)
{
	int			n = 0;

	while (n < max)
	{
		uint64		id;

		if (r->g->spill != NULL)
		{
			Datum		d;
			bool		isnull;

			if (!mh_tuplesort_getdatum(r->g->spill, true, &d, &isnull))
				break;
			id = (uint64) DatumGetInt64(d);
		}
		else
		{
			if (r->at.pos >= r->g->n)
				break;
			id = r->g->ids[r->at.pos++];
		}
		if (r->at.have_last && id == r->at.last)
			continue;
		r->at.have_last = true;
		r->at.last = id;
		out[n++] = id;
	}
	return n;
}

static void
reader_mark(IdReader *r)
{
	if (r->g->spill != NULL)
		tuplesort_markpos(r->g->spill);
	r->mark = r->at;
}

static void
reader_restore(IdReader *r)
{
	if (r->g->spill != NULL)
		tuplesort_restorepos(r->g->spill);
	r->at = r->mark;
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
	r.g = w->group;
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

/* back to the group's first id */
static void
reader_rewind(IdReader *r)
{
	if (r->g->spill != NULL)
		tuplesort_rescan(r->g->spill);
	memset(&r->at, 0, sizeof(r->at));
}

static void
classes_alloc(PairsWalk *w)
{
	PairsClasses *cl = &w->classes;
	uint32		size = 16;

	while (size < (uint32) w->chunk_cap * 2)
		size *= 2;
	cl->sigs = &w->b;
	cl->count = (uint32 *) palloc(sizeof(uint32) * w->chunk_cap);
	cl->members_due = (bool *) palloc(sizeof(bool) * w->chunk_cap);
	cl->hash = (uint64 *) palloc(sizeof(uint64) * w->chunk_cap);
	cl->slot = (int32 *) palloc(sizeof(int32) * size);
	cl->mask = size - 1;
}

static void
classes_reset(PairsClasses *cl)
{
	cl->sigs->n = 0;
	cl->last = -1;
	memset(cl->slot, 0, sizeof(int32) * (cl->mask + 1));
}

/*
 * The class of a signature; with add, a new class for an unseen one (row id
 * and TID its first row), or -1 when there is no room for another.
 */
static int
class_of(PairsWalk *w, const uint32 *sig, uint64 id, const ItemPointerData *tid, bool add)
{
	PairsClasses *cl = &w->classes;
	PairsChunk *c = cl->sigs;
	Size		bytes = sizeof(uint32) * w->run->params.num_perm;
	uint64		h;
	uint32		i;

	/* a run of identical rows (the case this is for) needs no hashing */
	if (cl->last >= 0 && memcmp(c->sigs + (Size) cl->last * w->run->params.num_perm, sig, bytes) == 0)
		return cl->last;
	h = DatumGetUInt64(hash_any_extended((const unsigned char *) sig, (int) bytes, 0));
	for (i = (uint32) h & cl->mask;; i = (i + 1) & cl->mask)
	{
		int			k = cl->slot[i] - 1;

		if (k < 0)
			break;
		if (cl->hash[k] == h && memcmp(c->sigs + (Size) k * w->run->params.num_perm, sig, bytes) == 0)
			return cl->last = k;
	}
	if (!add || c->n == w->chunk_cap)
		return -1;
	c->ids[c->n] = id;
	c->tids[c->n] = *tid;
	memcpy(c->sigs + (Size) c->n * w->run->params.num_perm, sig, bytes);
	cl->hash[c->n] = h;
	cl->count[c->n] = 0;
	cl->members_due[c->n] = false;
	cl->slot[i] = c->n + 1;
	return cl->last = c->n++;
}

/*
 * minhash_clusters (run->collapse): a large group made linear in its size
 * where it is made of identical signatures. Every pair of rows with the same
 * signature is similar, and a row similar to one of them is similar to all,
 * so the group reduces to its classes of identical signatures:
 *  - each pair of classes is verified once, by their first rows, and sent as
 *    a class edge (pairs_class_edge) when similar;
 *  - each class of two rows or more sends its rows (PAIRS_SAME: its first
 *    row and another) in the group where identical rows are verified (their
 *    first band), and in any group where it has a class edge.
 * minhash_clusters resolves them and expands them into what the pairs would
 * have given (pairs_clusters.cpp). The work is linear in the group's rows
 * plus quadratic in its classes; false (the caller compares the pairs) when
 * the classes do not fit the chunk budget.
 */
static bool
collapse_group(PairsWalk *w)
{
	PairsRun   *run = w->run;
	PairsClasses *cl = &w->classes;
	PairsChunk *c;
	int			k = run->params.num_perm;
	IdReader	r;
	int			n;
	bool		any_due = false;

	/* classes need whole signatures: compact slots compare pairs, their rows decide */
	if (w->heap_verify)
		return false;
	memset(&r, 0, sizeof(r));
	r.g = w->group;
	if (cl->slot == NULL)
		classes_alloc(w);
	classes_reset(cl);
	c = cl->sigs;
	while ((n = reader_next(&r, w->idbuf, w->chunk_cap)) > 0)
	{
		load_chunk(w, w->idbuf, n, &w->a);
		for (int i = 0; i < w->a.n; i++)
		{
			int			cls = class_of(w, w->a.sigs + (Size) i * k, w->a.ids[i], &w->a.tids[i], true);

			if (cls < 0)
			{
				reader_rewind(&r);
				return false;
			}
			cl->count[cls]++;
		}
		CHECK_FOR_INTERRUPTS();
	}
	reader_rewind(&r);

	for (int i = 0; i < c->n; i++)
	{
		const uint32 *si = c->sigs + (Size) i * k;

		if (cl->count[i] >= 2 && verified_here(w, si, si))
			cl->members_due[i] = any_due = true;
		CHECK_FOR_INTERRUPTS();
		for (int j = i + 1; j < c->n; j++)
		{
			const uint32 *sj = c->sigs + (Size) j * k;
			double		sim;

			if (!verified_here(w, si, sj))
				continue;
			run->candidates++;
			/* the % operator's own estimate, as for a pair */
			sim = minhash::bbit_jaccard(minhash::matching_values(si, sj, k), k,
										MINHASH_WIDTH_BITS(run->params.sig_width));
			if (sim < run->args.threshold)
				continue;
			emit_pair(w, c->ids[i], &c->tids[i], c->ids[j], &c->tids[j], pairs_class_edge(sim));
			if (cl->count[i] >= 2)
				cl->members_due[i] = any_due = true;
			if (cl->count[j] >= 2)
				cl->members_due[j] = any_due = true;
		}
	}

	while (any_due && (n = reader_next(&r, w->idbuf, w->chunk_cap)) > 0)
	{
		load_chunk(w, w->idbuf, n, &w->a);
		for (int i = 0; i < w->a.n; i++)
		{
			int			cls = class_of(w, w->a.sigs + (Size) i * k, 0, NULL, false);

			Assert(cls >= 0);
			if (cl->members_due[cls] && w->a.ids[i] != c->ids[cls])
				emit_pair(w, c->ids[cls], &c->tids[cls], w->a.ids[i], &w->a.tids[i], PAIRS_SAME);
		}
		CHECK_FOR_INTERRUPTS();
	}
	run->collapsed_groups++;
	return true;
}

/*
 * Verify the pairs of a band group the merge gathered (pairs_merge.cpp):
 * two rows or more, or spilled to its tuplesort, which ends here.
 */
void
pairs_verify_group(PairsWalk *w, PairsGroup *g)
{
	PairsRun   *run = w->run;

	w->group = g;
	if (g->spill != NULL)
	{
		run->groups++;
		run->spilled_groups++;
		tuplesort_performsort(g->spill);
		if (!run->collapse || !collapse_group(w))
			pairs_of_large_group(w);
		tuplesort_end(g->spill);
		g->spill = NULL;
		return;
	}
	/* a group continued from the previous leaf is two sorted runs; a row may repeat (32-bit key collision of two of its bands) */
	g->n = sort_unique_ids(g->ids, g->n);
	if (g->n < 2)
		return;
	run->groups++;
	if (g->n <= PAIRS_SMALL_GROUP)
		pairs_of_small_group(w, g->ids, g->n);
	else if (run->collapse && collapse_group(w))
		return;
	else if (g->n <= w->chunk_cap)
	{
		load_chunk(w, g->ids, g->n, &w->a);
		compare_within(w, &w->a);
	}
	else
		pairs_of_large_group(w);
}

/*
 * Progress: band keys are uniform 32-bit hashes walked in order, so the
 * current key over 2^32 is the share of the walk done (a parallel walk's
 * leader passes the share of its key ranges done). A NOTICE every ten
 * seconds (none in a short run), DEBUG1 at every tenth.
 */
void
pairs_report_progress(PairsRun *run, double done)
{
	int			decile = (int) (done * 10);
	TimestampTz now = GetCurrentTimestamp();

	if (decile > run->last_decile)
	{
		run->last_decile = decile;
		elog(DEBUG1, "%s: %d%% of index \"%s\" walked, " UINT64_FORMAT " pairs so far",
			 run->args.funcname, decile * 10, run->indexname, run->pairs + run->deferred_pairs);
	}
	if (TimestampDifferenceExceeds(run->last_notice, now, 10000))
	{
		run->last_notice = now;
		ereport(NOTICE,
				(errmsg("%s: %.0f%% of index \"%s\" walked, " UINT64_FORMAT " pairs so far",
						run->args.funcname, done * 100, run->indexname,
						run->pairs + run->deferred_pairs)));
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
void
pairs_prefetch_leaf(PairsWalk *w, int part, const LshEntry *e, int n)
{
	const LshIndexParams *params = &w->run->params;
	const PairsPart *pt = &w->run->parts[part];
	PairsPages *pc = &w->pages;
	Size		slot_size = params->slot_size;

	for (int pass = 0; pass < 2; pass++)
	{
		for (int i = 0; i < n; i++)
		{
			uint32		id = e[i].value;
			BlockNumber blkno;
			LshBufferHint *h;
			Buffer		recent;

			/* rows in runs of two or more (a run may also continue an open group: not worth it) */
			if (!((i + 1 < n && ((e[i + 1].key ^ e[i].key) & w->run->key_mask) == 0) ||
				  (i > 0 && ((e[i - 1].key ^ e[i].key) & w->run->key_mask) == 0)))
				continue;
			if (id >= pt->nrowids)
				continue;
			blkno = lsh_rowid_block(params, id);
			h = PAIRS_HINT(pc, part, blkno);
			if (pass == 0)
			{
				__builtin_prefetch(h);
				continue;
			}
			/* a shared buffer (a local one has no descriptor there) */
			recent = lsh_hint_buffer(h, pt->index, blkno);
			if (recent > 0)
			{
				__builtin_prefetch(GetBufferDescriptor(recent - 1));
				__builtin_prefetch((char *) BufferGetBlock(recent) + LSH_CONTENT_START +
								   lsh_rowid_slot(params, id) * slot_size);
			}
		}
	}
}

/*
 * A walker: its memory in run->cxt (bounded by work_mem as described in
 * docs/pairs.md), and its merge of the parts' leaves (pairs_merge.cpp).
 * ranged: it will walk key ranges (pairs_walk_range) rather than every
 * leaf from the leftmost.
 */
PairsWalk *
pairs_walk_begin(PairsRun *run, PairsVerifiedFn verified, void *arg, bool ranged)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(run->cxt);
	PairsWalk  *w = (PairsWalk *) palloc0(sizeof(PairsWalk));
	int			k = run->params.num_perm;
	Size		per_row;

	w->run = run;
	w->verified = verified;
	w->arg = arg;
	/* two chunks of signatures (and their ids) in a quarter of work_mem */
	per_row = sizeof(uint32) * k + sizeof(ItemPointerData) + 2 * sizeof(uint64);
	w->chunk_cap = (int) Max(run->budget / 2 / per_row, (Size) 16);
	w->idbuf = (uint64 *) palloc(sizeof(uint64) * w->chunk_cap);
	chunk_alloc(&w->a, w->chunk_cap, k);
	chunk_alloc(&w->b, w->chunk_cap, k);
	w->need = minhash::bbit_min_matches(k, MINHASH_WIDTH_BITS(run->params.sig_width), run->args.threshold);
	w->heap_verify = !lsh_verifies_exactly(&run->params);
	if (run->params.slot_width != MINHASH_WIDTH_32)
		w->small = (uint32 *) palloc(sizeof(uint32) * PAIRS_SMALL_GROUP * k);
	pairs_pages_init(run, &w->pages);
	run->started = run->last_notice = GetCurrentTimestamp();
	run->last_decile = 0;

	w->merge = pairs_merge_begin(run, w, ranged);
	MemoryContextSwitchTo(oldcxt);
	return w;
}

/*
 * The band groups of keys in [lo, hi] of every part (a ranged walker; see
 * pairs_merge_range).
 */
void
pairs_walk_range(PairsWalk *w, uint32 lo, uint32 hi)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(w->run->cxt);

	pairs_merge_range(w->merge, lo, hi);
	MemoryContextSwitchTo(oldcxt);
}

void
pairs_walk_end(PairsWalk *w)
{
	pairs_merge_end(w->merge);
}

/* the DEBUG1 summary of a walk */
void
pairs_walk_summary(PairsRun *run)
{
	char		collapsed[64] = "";

	/* minhash_clusters' groups of identical signatures (collapse_group), when there were any */
	if (run->collapsed_groups > 0)
		snprintf(collapsed, sizeof(collapsed), ", " UINT64_FORMAT " reduced to classes",
				 run->collapsed_groups);
	elog(DEBUG1, "%s: " UINT64_FORMAT " leaves, " UINT64_FORMAT " entries, " UINT64_FORMAT
		 " groups (" UINT64_FORMAT " spilled%s), " UINT64_FORMAT " candidates, " UINT64_FORMAT
		 " pairs, " UINT64_FORMAT " heap fetches, " UINT64_FORMAT " row cache resets",
		 run->args.funcname, run->leaves, run->entries, run->groups, run->spilled_groups,
		 collapsed, run->candidates, run->pairs, run->fetches, run->cache_resets);
}

/* pairs found in this backend go straight to the row cache */
void
pairs_direct_verified(PairsRun *run, void *arg, uint64 ida, ItemPointer tida, uint64 idb,
					  ItemPointer tidb, double sim)
{
	PairsDirectOut *out = (PairsDirectOut *) arg;

	pairs_emit_verified(run, out->emit, out->arg, ida, tida, idb, tidb, sim);
}

/*
 * Every pair of the run's index, to emit: by parallel workers when they pay
 * (pairs_parallel.cpp), else in this process along every part's leaf level
 * from its leftmost leaf.
 */
void
pairs_walk(PairsRun *run, PairsEmitFn emit, void *arg)
{
	PairsDirectOut out = {emit, arg};
	PairsWalk  *w;
	MemoryContext oldcxt;

	if (run->params.num_perm == 0)
		return;					/* nothing was ever inserted */
	if (run->nparts > 1)
		elog(DEBUG1, "%s: merging the leaves of %d partitions' indexes of \"%s\"",
			 run->args.funcname, run->nparts, run->indexname);
	pairs_table_order_begin(run);
	if (pairs_parallel_walk(run, emit, arg))
	{
		pairs_table_order_finish(run, emit, arg);
		pairs_walk_summary(run);
		return;
	}

	oldcxt = MemoryContextSwitchTo(run->cxt);
	w = pairs_walk_begin(run, pairs_direct_verified, &out, false);
	pairs_merge_all(w->merge);
	pairs_walk_end(w);
	pairs_table_order_finish(run, emit, arg);
	pairs_walk_summary(run);
	MemoryContextSwitchTo(oldcxt);
}
