/*
 * Scanning an lsh index: % (similarity at least minhash.similarity_threshold),
 * %>= (at least the threshold the query carries) and ORDER BY <%> (distance), through amgettuple and amgetbitmap.
 *
 * A scan works in one go on its first call: look up each of the query's
 * band keys (under the metapage SHARE lock, so the tree cannot split under
 * the lookup), collect the row ids of matching entries, verify each
 * candidate against its stored signature -- the same estimate the operators
 * compute, so no heap visit is spent on false candidates and the executor
 * need not recheck -- and sort the survivors by distance (ORDER BY) or by
 * heap TID (which helps the heap fetches).
 *
 * Probe depth (version-2 indexes, LSH Forest). Band keys preserve prefixes
 * (core/lsh_prefix.h), so the rows agreeing with the query on the first m
 * values of a band are one key range. A % scan at threshold t probes every
 * band at depth lsh_probe_depth(t) (lsh_probe.cpp: the one probe rule,
 * which the all-pairs walk and minhash_match follow too): the deepest m
 * whose S-curve 1 - (1 - s^m)^b reaches minhash.lsh_recall at s = t + 0.1
 * (or halfway to 1). At the index's design threshold that is r (the whole
 * band) for indexes built with the default weights; lower thresholds probe
 * shorter prefixes.
 *
 * ORDER BY <%> without a % condition widens iteratively: all bands at depth
 * r, then r - 1, ..., 1, then every signature not yet verified. After a stage
 * at depth m it returns, closest first, the rows whose distance is below
 * 1 - J_m, where J_m is the similarity a depth-m probe finds with
 * probability minhash.lsh_recall; the rest wait for the next stage. Widening
 * stops when minhash.lsh_max_scan_tuples signatures have been verified: the
 * scan then returns every row verified so far, closest first, and ends.
 * A version-1 index (built by minhash 1.0) probes whole bands only, as 1.0
 * did; minhash.lsh_min_candidates widens a scan with fewer results to every
 * stored signature.
 *
 * Compact slots (format 5, an index keeping fewer bits of each value than
 * its signatures have: verify_bits). A value's low 8 bits agree wherever its
 * low 16 do, so the slot's count of equal values is at least the
 * signature's: a row whose slot count is below what the threshold needs at
 * the signatures' width (bbit_min_matches) cannot match, and the rest are
 * returned with xs_recheck for the executor to decide on the stored
 * signature. ORDER BY distances are then 1 - the slot's share of equal
 * values, a lower bound of the operator's distance (the share is at least
 * the signatures' share, which is at least their corrected estimate), as
 * xs_recheckorderby requires: the executor computes the distance and
 * reorders.
 *
 * A NULL ORDER BY argument (e.g. a parameter of a generic plan) makes every
 * distance NULL, as <%> is strict: a sequential scan and sort returns every
 * row then, in no particular order. So does the index, as GiST does: without
 * a % condition it returns every live row it holds (rows with a NULL
 * signature are not in the index), with xs_orderbynulls set. A NULL % argument
 * matches nothing, as the operator does.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"
#include "pg/lsh/lsh_pending.h"

#include <cstdlib>

#include "core/bbit.h"

extern "C" {
#include "access/genam.h"
#include "access/relscan.h"
#include "access/table.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "utils/memutils.h"
#include "utils/rel.h"
}

typedef struct LshResult
{
	ItemPointerData tid;
	uint32		pos;			/* index of its distances in so->dist */
} LshResult;

typedef struct LshScanOpaqueData
{
	MemoryContext cxt;			/* everything of the current search; reset on rescan */
	bool		searched;
	MemoryContext keepcxt;		/* the scan's: results, dist and heap */

	/*
	 * The verified rows, in the order they were verified, with norderbys
	 * distances each; the pending (not yet returned) ones are a binary
	 * min-heap of their positions, by distance, then TID. A heap rather than
	 * a sort: an ORDER BY ... LIMIT k that widened to the last stage has up
	 * to minhash.lsh_max_scan_tuples rows verified and asks for k of them.
	 * The arrays live in keepcxt and keep their memory across rescans (a
	 * LATERAL join rescans per outer row), so that a scan does not pay for
	 * growing them and touching fresh pages every time.
	 */
	LshArray<LshResult> results;
	Size		next;			/* results returned so far */
	LshArray<double> dist;		/* norderbys distances per result */
	LshArray<uint32> heap;
	Size		heaped;			/* results[0, heaped) have been pushed */

	/* the current search */
	int			num_perm;
	int			nquals;
	MinHashSig **quals;			/* right-hand sides of % and %>= */
	double	   *thresholds;		/* each qual's threshold (see lsh_scan_quals) */
	int			norderbys;
	MinHashSig **orderbys;		/* right-hand sides of <%>; NULL for a NULL argument */
	double		threshold;		/* that of the qual whose bands are probed (quals[0]) */

	/* verification: the queries' values packed as the slots keep them */
	void	  **qpacked;		/* per qual */
	int		   *qneed;			/* per qual: the fewest equal values that can pass */
	void	  **opacked;		/* per ORDER BY (NULL for a NULL argument) */
	bool		recheck;		/* the slots keep fewer bits: the executor rechecks */

	/* probing */
	LshIndexParams params;
	uint32	   *keys;			/* the probe's band keys */
	LshWalk		walk;			/* checked reads: one block count for every band and candidate */
	BlockNumber heap_nblocks;	/* the table's known size, for checking stored TIDs */
	bool		iterative;		/* ORDER BY alone: widen stage by stage */
	bool		want_bitmap;	/* amgetbitmap: everything at once */
	int			depth;			/* depth of the last stage probed */
	bool		exhausted;		/* no stage left */
	double		bound;			/* pending results up to this distance may be returned */
	LshArray<uint32> seen;		/* sorted row ids verified so far (iterative) */

	LshScanCounters counters;
} LshScanOpaqueData;

typedef LshScanOpaqueData *LshScanOpaque;

IndexScanDesc
lshbeginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	LshScanOpaque so = (LshScanOpaque) palloc0(sizeof(LshScanOpaqueData));

	so->cxt = AllocSetContextCreate(CurrentMemoryContext, "lsh scan", ALLOCSET_DEFAULT_SIZES);
	so->keepcxt = CurrentMemoryContext;
	scan->opaque = so;
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = (Datum *) palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = (bool *) palloc(sizeof(bool) * norderbys);
		memset(scan->xs_orderbynulls, true, sizeof(bool) * norderbys);
	}
	return scan;
}

void
lshrescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	LshScanOpaque so = (LshScanOpaque) scan->opaque;

	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, sizeof(ScanKeyData) * scan->numberOfKeys);
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, sizeof(ScanKeyData) * scan->numberOfOrderBys);
	lsh_counters_report(scan->indexRelation, &so->counters, (uint64) so->next);
	memset(&so->counters, 0, sizeof(so->counters));
	MemoryContextReset(so->cxt);
	so->searched = false;
	so->results.clear();
	so->dist.clear();
	so->heap.clear();
	so->heaped = 0;
	so->next = 0;
	so->keys = NULL;
	so->seen = {};
	so->depth = 0;
	so->iterative = so->exhausted = false;
}

void
lshendscan(IndexScanDesc scan)
{
	LshScanOpaque so = (LshScanOpaque) scan->opaque;

	lsh_counters_report(scan->indexRelation, &so->counters, (uint64) so->next);
	MemoryContextDelete(so->cxt);
	so->results.free();
	so->dist.free();
	so->heap.free();
	pfree(so);
	scan->opaque = NULL;
}

/*
 * The distance of a stored signature to a query: the operator's, from the
 * equal values at the signatures' width; from compact slots narrower than
 * that, 1 - their share of equal values, a lower bound of it (see the top).
 */
static inline double
lsh_distance(const LshScanOpaque so, const void *values, const void *query)
{
	int			same = lsh_matching(&so->params, values, query);

	if (so->recheck)
		return 1.0 - (double) same / so->num_perm;
	return 1.0 - minhash::bbit_jaccard(same, so->num_perm, MINHASH_WIDTH_BITS(so->params.sig_width));
}

/* Does the stored signature pass every % qual? If so, keep it with its distances. */
static void
lsh_consider(IndexScanDesc scan, LshScanOpaque so, const LshSlotHeader *slot, BlockNumber blkno)
{
	const void *values = LshSlotValues(slot);
	LshResult	r;
	double	   *dist;

	so->counters.verified++;
	/* estimate >= t exactly when the count of equal values reaches qneed (bbit_min_matches) */
	for (int i = 0; i < so->nquals; i++)
	{
		if (lsh_matching(&so->params, values, so->qpacked[i]) < so->qneed[i])
			return;
	}
	/*
	 * A result goes to the executor's heap fetch: it must name a block of the
	 * table. (A bitmap scan has no heap relation here; the bitmap heap scan
	 * itself ignores blocks past the table's end.)
	 */
	if (scan->heapRelation != NULL)
		lsh_check_heap_tid(scan->indexRelation, scan->heapRelation, &so->heap_nblocks, &slot->tid, blkno);
	r.tid = slot->tid;
	r.pos = (uint32) so->results.n;
	so->results.push(r);
	dist = so->dist.extend(so->norderbys);
	for (int j = 0; j < so->norderbys; j++)
		dist[j] = so->orderbys[j] == NULL ? 0.0 : lsh_distance(so, values, so->opacked[j]);
}

/*
 * Each band's first leaf, looked up (in the cached internal levels) before
 * any is read, so that the misses of all of them overlap (lsh_prefetch.cpp):
 * first every descent, asking for each leaf's hint in the cached levels, then
 * every hint, asking for each leaf's first lines;
 * the band loop reads them in order, through these descents while the tree
 * has not split since (the metapage's nsplits, root and height unchanged).
 */
typedef struct LshBandLeaf
{
	BlockNumber blkno;
	bool		has_low;
	uint32		low;
	int			hint;			/* its entry in the cached levels (lsh_leaf_hint) */
	Buffer		recent;			/* a hint: unpinned */
} LshBandLeaf;

static void
lsh_find_band_leaves(Relation index, LshScanOpaque so, const LshMetaPageData *meta, const uint32 *lo,
					 int nbands, LshBandLeaf *leaves)
{
	for (int b = 0; b < nbands; b++)
	{
		LshBandLeaf *l = &leaves[b];

		l->has_low = false;
		l->low = 0;
		l->hint = -1;
		l->blkno = meta->root == InvalidBlockNumber ? InvalidBlockNumber :
			lsh_find_leaf_hinted(index, meta, lo[b], true, &l->has_low, &l->low, &l->hint);
		lsh_leaf_hint_prefetch(index, l->hint);
	}
	for (int b = 0; b < nbands; b++)
	{
		LshBandLeaf *l = &leaves[b];

		/* the buffer the leaf was in last time, else a lookup in the buffer table */
		const LshBufferHint *h = lsh_leaf_hint(index, l->hint);

		l->recent = h != NULL ? lsh_hint_buffer(h, index, l->blkno) : InvalidBuffer;
		if (BufferIsValid(l->recent))
			lsh_prefetch_head(l->recent);
		else
			l->recent = lsh_walk_prefetch(&so->walk, l->blkno);
	}
}

/*
 * Collect the row ids of entries with keys in [lo, hi]: the leaves of a
 * range cursor, through the scan's checked walk (bounded, type-checked; the
 * metapage lock holds off interrupts, so the walk's bound ends a cycle).
 * The buffer of the band's first leaf is remembered for the next scan.
 */
static void
lsh_collect(Relation index, uint32 version, LshCursor *cur, uint32 lo, uint32 hi,
			const LshBandLeaf *leaf, LshArray<uint32> *ids)
{
	bool		first = true;

	while (lsh_cursor_next(cur))
	{
		if (first && leaf != NULL && cur->blkno == leaf->blkno)
		{
			LshBufferHint *h = lsh_leaf_hint(index, leaf->hint);

			if (h != NULL)
				lsh_hint_remember(h, index, cur->blkno, cur->buf);
		}
		first = false;
		lsh_leaf_collect(cur->page, lsh_leaf_sorted(cur->page, version), lo, hi, ids);
	}
}

/* Verify candidates (sorted row ids) against their stored signatures. */
static void
lsh_verify(IndexScanDesc scan, Relation index, LshScanOpaque so, const LshIndexParams *params,
		   const uint32 *ids, Size nids)
{
	LshWalk    *w = &so->walk;
	Size		i = 0;

	while (i < nids)
	{
		BlockNumber blkno = lsh_rowid_block(params, ids[i]);
		Page		page;
		Buffer		buf;

		/* entries name allocated slots: anything but a sound data page is damage */
		lsh_walk_chain(w);
		buf = lsh_walk_read(w, blkno, BUFFER_LOCK_SHARE, LSH_PAGE_DATA, 0, params,
							InvalidBlockNumber, &page);
		for (; i < nids && lsh_rowid_block(params, ids[i]) == blkno; i++)
		{
			const LshSlotHeader *slot = lsh_slot_read(index, page, params,
													  lsh_rowid_slot(params, ids[i]), blkno);

			/* DEAD: removed by VACUUM, its TID may already name another tuple */
			if (slot->state == LSH_SLOT_LIVE)
				lsh_consider(scan, so, slot, blkno);
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

static bool
lsh_budget_left(const LshScanOpaque so)
{
	return lsh_max_scan_tuples < 0 || so->counters.verified < (uint64) lsh_max_scan_tuples;
}

/*
 * Verify every stored signature, except the rows in so->seen (sorted); with
 * bounded, stop once minhash.lsh_max_scan_tuples signatures have been
 * verified in this scan. The walk reads each block once, in order.
 */
static void
lsh_verify_all(IndexScanDesc scan, Relation index, LshScanOpaque so, const LshIndexParams *params,
			   bool bounded)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	Size		seenpos = 0;

	for (BlockNumber blkno = LSH_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;

		if (bounded && !lsh_budget_left(so))
			break;
		buf = lsh_read_block(index, blkno, BUFFER_LOCK_SHARE, NULL, params, &page);
		if (!PageIsNew(page) && LshPageType(page) == LSH_PAGE_DATA)
		{
			for (int s = 0; s < params->slots_per_page; s++)
			{
				const LshSlotHeader *slot = lsh_slot_read(index, page, params, s, blkno);
				uint32		rowid = (uint32) ((uint64) blkno * params->slots_per_page + s);

				while (seenpos < so->seen.n && so->seen.data[seenpos] < rowid)
					seenpos++;
				if (seenpos < so->seen.n && so->seen.data[seenpos] == rowid)
					continue;
				if (slot->state == LSH_SLOT_LIVE)
					lsh_consider(scan, so, slot, blkno);
			}
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Does result a come before result b: by distance (each ORDER BY in turn; a
 * NULL argument's distances are all NULL, hence equal), then by heap TID
 * (which also orders a scan without ORDER BY for its heap fetches).
 */
static inline bool
lsh_result_before(const LshScanOpaqueData *so, uint32 a, uint32 b)
{
	const ItemPointerData *x = &so->results.data[a].tid;
	const ItemPointerData *y = &so->results.data[b].tid;
	BlockNumber bx;
	BlockNumber by;

	for (int j = 0; j < so->norderbys; j++)
	{
		double		dx = so->dist.data[(Size) a * so->norderbys + j];
		double		dy = so->dist.data[(Size) b * so->norderbys + j];

		if (so->orderbys[j] != NULL && dx != dy)
			return dx < dy;
	}
	bx = ItemPointerGetBlockNumberNoCheck(x);
	by = ItemPointerGetBlockNumberNoCheck(y);
	if (bx != by)
		return bx < by;
	return ItemPointerGetOffsetNumberNoCheck(x) < ItemPointerGetOffsetNumberNoCheck(y);
}

static void
lsh_heap_sift_down(LshScanOpaque so, Size i)
{
	uint32	   *h = so->heap.data;
	Size		n = so->heap.n;
	uint32		v = h[i];

	for (;;)
	{
		Size		c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && lsh_result_before(so, h[c + 1], h[c]))
			c++;
		if (!lsh_result_before(so, h[c], v))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = v;
}

/* Take the first pending result off the heap: its position in results. */
static uint32
lsh_pop_pending(LshScanOpaque so)
{
	uint32		top = so->heap.data[0];

	so->heap.data[0] = so->heap.data[--so->heap.n];
	if (so->heap.n > 0)
		lsh_heap_sift_down(so, 0);
	return top;
}

/*
 * The % and %>= quals: each one's query signature and threshold. This is
 * where the threshold of a query reaches the scan: % takes the GUC
 * minhash.similarity_threshold, %>= (the index condition of the IMMUTABLE
 * minhash_similar(sig, q, t), see lsh_support.cpp) the t its right side
 * carries. Returns false if a qual can match nothing (a NULL argument).
 */
static bool
lsh_scan_quals(IndexScanDesc scan, LshScanOpaque so)
{
	so->nquals = scan->numberOfKeys;
	so->quals = (MinHashSig **) palloc(sizeof(MinHashSig *) * Max(so->nquals, 1));
	so->thresholds = (double *) palloc(sizeof(double) * Max(so->nquals, 1));
	for (int i = 0; i < so->nquals; i++)
	{
		ScanKey		sk = &scan->keyData[i];

		if (sk->sk_flags & SK_ISNULL)
			return false;
		if (sk->sk_strategy == LSH_SIMILAR_STRATEGY)
		{
			so->quals[i] = DatumGetMinHashSig(sk->sk_argument);
			so->thresholds[i] = minhash_threshold();
		}
		else if (sk->sk_strategy == LSH_SIMILAR_T_STRATEGY)
		{
			Datum		q;
			double		t;

			if (!minhash_query_fields(sk->sk_argument, &q, &t))
				return false;
			so->quals[i] = DatumGetMinHashSig(q);
			so->thresholds[i] = t;
		}
		else
			elog(ERROR, "unexpected strategy %d in an lsh index scan", sk->sk_strategy);
	}
	so->threshold = so->nquals > 0 ? so->thresholds[0] : minhash_threshold();
	return true;
}

/*
 * Make the results verified since the last call pending: add them to the
 * heap and restore its order (Floyd's bottom-up build, linear in the heap's
 * size; a scan has at most r + 1 stages).
 */
static void
lsh_sort_pending(LshScanOpaque so)
{
	MemoryContext oldcxt;

	if (so->results.n <= so->heaped)
		return;
	oldcxt = MemoryContextSwitchTo(so->keepcxt);
	for (Size i = so->heaped; i < so->results.n; i++)
		so->heap.push((uint32) i);
	MemoryContextSwitchTo(oldcxt);
	so->heaped = so->results.n;
	for (Size i = so->heap.n / 2; i-- > 0;)
		lsh_heap_sift_down(so, i);
}

/*
 * Collect: probe every band at depth m (all its values for a version-1
 * index) and return the distinct row ids found, ascending (so that data
 * pages are visited once each, in block order), less those in so->seen.
 */
static LshArray<uint32>
lsh_collect_stage(Relation index, LshScanOpaque so, int m)
{
	const LshIndexParams *params = &so->params;
	LshMetaPage meta;
	Buffer		metabuf;
	LshArray<uint32> ids = {};
	Size		nuniq = 0;
	Size		nnew = 0;
	Size		j = 0;
	uint32	   *lo;
	uint32	   *hi;
	LshBandLeaf *leaves;
	uint64		nsplits;
	BlockNumber root;
	uint16		height;

	so->depth = m;
	so->counters.depth = minhash::prefix_effective_depth(params->layout, m);
	if (params->version == LSH_VERSION_EXACT || m >= params->rows)
		so->counters.depth = m;
	ids.reserve(1024);
	/*
	 * One band at a time under the metapage lock, so that a query with a huge
	 * candidate set can be cancelled and does not hold off splits for long.
	 * Bands need not see the same tree: a row is found through any band.
	 */
	/* each band's key range at depth m: its whole key, or a prefix's range */
	lo = (uint32 *) palloc(sizeof(uint32) * params->bands);
	hi = (uint32 *) palloc(sizeof(uint32) * params->bands);
	for (int b = 0; b < params->bands; b++)
	{
		lsh_probe_range(params, so->keys[b], m, &lo[b], &hi[b]);
	}
	leaves = (LshBandLeaf *) palloc(sizeof(LshBandLeaf) * params->bands);
	metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	nsplits = meta->nsplits;
	root = meta->root;
	height = meta->height;
	lsh_find_band_leaves(index, so, meta, lo, params->bands, leaves);
	/*
	 * Pending rows (fastupdate) whose band keys fall in these ranges, as the
	 * tree's would; read before the tree (lsh_pending.h), from the head in
	 * this same metapage read; the metapage stays pinned, unlocked.
	 */
	if (lsh_pending_collect(index, &so->walk, metabuf, &ids, params, lo, hi))
		so->counters.pending_copied++;
	for (int b = 0; b < params->bands; b++)
	{
		LshCursor	cur;

		LockBuffer(metabuf, BUFFER_LOCK_SHARE);	/* still pinned */
		/* the next band's leaf comes in while this one is scanned */
		if (b + 1 < params->bands)
		{
			if (params->version >= LSH_VERSION_SORTED)
				lsh_prefetch_leaf_at(leaves[b + 1].recent, lo[b + 1]);
			else
				lsh_prefetch_lines(leaves[b + 1].recent);
		}
		if (meta->nsplits == nsplits && meta->root == root && meta->height == height)
		{
			lsh_walk_recent(&so->walk, leaves[b].blkno, leaves[b].recent);
			lsh_cursor_range_from(&cur, &so->walk, leaves[b].blkno, leaves[b].has_low, leaves[b].low,
								  lo[b], hi[b]);
			lsh_collect(index, params->version, &cur, lo[b], hi[b], &leaves[b], &ids);
		}
		else
		{
			lsh_cursor_range(&cur, &so->walk, meta, lo[b], hi[b]);
			lsh_collect(index, params->version, &cur, lo[b], hi[b], NULL, &ids);
		}
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
		so->counters.bands_probed++;
		CHECK_FOR_INTERRUPTS();
	}
	ReleaseBuffer(metabuf);
	pfree(leaves);
	pfree(lo);
	pfree(hi);

	qsort(ids.data, ids.n, sizeof(uint32), lsh_uint32_cmp);
	for (Size i = 0; i < ids.n; i++)
	{
		if (nuniq == 0 || ids.data[nuniq - 1] != ids.data[i])
			ids.data[nuniq++] = ids.data[i];
	}
	/* drop the rows verified by earlier stages (both sorted) */
	for (Size i = 0; i < nuniq; i++)
	{
		while (j < so->seen.n && so->seen.data[j] < ids.data[i])
			j++;
		if (j < so->seen.n && so->seen.data[j] == ids.data[i])
			continue;
		ids.data[nnew++] = ids.data[i];
	}
	ids.n = nnew;
	return ids;
}

/* Merge the (sorted, new) row ids just verified into so->seen. */
static void
lsh_remember(LshScanOpaque so, const LshArray<uint32> *ids)
{
	LshArray<uint32> merged = {};
	Size		i = 0;
	Size		j = 0;

	if (ids->n == 0)
		return;
	merged.reserve(so->seen.n + ids->n);
	while (i < so->seen.n || j < ids->n)
	{
		if (j >= ids->n || (i < so->seen.n && so->seen.data[i] < ids->data[j]))
			merged.push(so->seen.data[i++]);
		else
			merged.push(ids->data[j++]);
	}
	so->seen.free();
	so->seen = merged;
}

/*
 * One stage: collect the rows of every band probed at depth m, then verify
 * those not verified before (when remember is set, so->seen keeps the
 * verified ones for later stages).
 */
static void
lsh_probe_stage(IndexScanDesc scan, Relation index, LshScanOpaque so, int m, bool remember)
{
	LshArray<uint32> ids = lsh_collect_stage(index, so, m);

	so->counters.candidates += ids.n;
	lsh_verify(scan, index, so, &so->params, ids.data, ids.n);
	if (remember)
		lsh_remember(so, &ids);
	ids.free();
}

/* The next stage of an iterative ORDER BY scan; sets bound and exhausted. */
static void
lsh_widen(IndexScanDesc scan)
{
	Relation	index = scan->indexRelation;
	LshScanOpaque so = (LshScanOpaque) scan->opaque;
	const LshIndexParams *params = &so->params;
	MemoryContext oldcxt = MemoryContextSwitchTo(so->cxt);
	int			eff = minhash::prefix_effective_depth(params->layout, so->depth);

	if (!lsh_budget_left(so))
		so->exhausted = true;
	else if (eff > 1)
	{
		/* the next shorter prefix that is encoded differently */
		int			m = eff - 1;

		lsh_probe_stage(scan, index, so, m, true);
		so->bound = 1.0 - minhash::depth_complete_similarity(m, params->bands, lsh_recall);
	}
	else
	{
		/* past depth 1 of every band: whatever remains, bounded */
		so->depth = 0;
		so->counters.depth = 0;
		lsh_verify_all(scan, index, so, params, true);
		so->exhausted = true;
	}
	lsh_sort_pending(so);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Read keys: the % and %>= quals (lsh_scan_quals), the ORDER BY arguments
 * and the index's parameters, checking every query signature against them;
 * *probe is the signature whose bands are probed: the first % query, else
 * the first non-NULL ORDER BY query, else NULL. False if the scan returns
 * nothing: a NULL % argument (the operators are strict), or an index that
 * never saw a signature.
 */
static bool
lsh_read_keys(IndexScanDesc scan, LshScanOpaque so, const MinHashSig **probe)
{
	Relation	index = scan->indexRelation;
	LshIndexParams *params = &so->params;
	LshMetaPage meta;
	Buffer		metabuf;

	*probe = NULL;
	if (!lsh_scan_quals(scan, so))
		return false;
	so->norderbys = scan->numberOfOrderBys;
	so->orderbys = (MinHashSig **) palloc(sizeof(MinHashSig *) * Max(so->norderbys, 1));
	for (int j = 0; j < so->norderbys; j++)
	{
		ScanKey		sk = &scan->orderByData[j];

		if (sk->sk_strategy != LSH_DISTANCE_STRATEGY)
			elog(ERROR, "unexpected ordering strategy %d in an lsh index scan", sk->sk_strategy);
		so->orderbys[j] = (sk->sk_flags & SK_ISNULL) ? NULL : DatumGetMinHashSig(sk->sk_argument);
	}

	metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	lsh_meta_params(meta, params);
	UnlockReleaseBuffer(metabuf);
	lsh_walk_init(&so->walk, index, NULL);
	if (params->num_perm == 0)
		return false;			/* nothing was ever inserted */
	so->num_perm = params->num_perm;
	for (int i = 0; i < so->nquals; i++)
		lsh_check_signature(index, params, so->quals[i], "query signature");
	for (int j = 0; j < so->norderbys; j++)
	{
		if (so->orderbys[j] != NULL)
			lsh_check_signature(index, params, so->orderbys[j], "query signature");
	}

	/* the queries as the slots keep their values, and what each qual needs of them */
	so->recheck = !lsh_verifies_exactly(params);
	so->qpacked = (void **) palloc(sizeof(void *) * Max(so->nquals, 1));
	so->qneed = (int *) palloc(sizeof(int) * Max(so->nquals, 1));
	for (int i = 0; i < so->nquals; i++)
	{
		so->qpacked[i] = palloc(params->slot_size);
		lsh_pack_values(params, so->quals[i]->values, so->qpacked[i]);
		so->qneed[i] = minhash::bbit_min_matches(params->num_perm, MINHASH_WIDTH_BITS(params->sig_width),
												 so->thresholds[i]);
	}
	so->opacked = (void **) palloc(sizeof(void *) * Max(so->norderbys, 1));
	for (int j = 0; j < so->norderbys; j++)
	{
		so->opacked[j] = NULL;
		if (so->orderbys[j] != NULL)
		{
			so->opacked[j] = palloc(params->slot_size);
			lsh_pack_values(params, so->orderbys[j]->values, so->opacked[j]);
		}
	}

	if (so->nquals > 0)
		*probe = so->quals[0];
	for (int j = 0; *probe == NULL && j < so->norderbys; j++)
		*probe = so->orderbys[j];
	return true;
}

/*
 * The first stage of a search: collect the candidates of probe's bands and
 * verify them (lsh_probe_stage), or verify every stored signature when
 * there is nothing to probe or the probe found too few rows.
 */
static void
lsh_first_stage(IndexScanDesc scan, LshScanOpaque so, const MinHashSig *probe)
{
	Relation	index = scan->indexRelation;
	const LshIndexParams *params = &so->params;

	if (probe == NULL)
	{
		/* ORDER BY <%> NULL alone: every row qualifies, at a NULL distance */
		so->counters.depth = 0;
		lsh_verify_all(scan, index, so, params, false);
		return;
	}
	so->keys = (uint32 *) palloc(sizeof(uint32) * params->bands);
	lsh_sig_band_keys(params, probe, so->keys);

	if (params->version == LSH_VERSION_EXACT &&
		(so->nquals == 0 ||
		 lsh_prefix_depth(params, so->threshold) < params->rows))
		lsh_notice_format1(index);
	/*
	 * ORDER BY alone on a version-2 index through amgettuple: widen stage by
	 * stage, from whole bands down, as rows are asked for.
	 */
	so->iterative = so->nquals == 0 && so->norderbys == 1 && so->orderbys[0] != NULL &&
		params->version != LSH_VERSION_EXACT &&
		lsh_min_candidates == 0 && !so->want_bitmap;
	if (so->iterative)
	{
		lsh_probe_stage(scan, index, so, params->rows, true);
		so->bound = 1.0 - minhash::depth_complete_similarity(
			minhash::prefix_effective_depth(params->layout, params->rows), params->bands, lsh_recall);
		so->exhausted = false;
		return;
	}

	lsh_probe_stage(scan, index, so, so->nquals > 0 ? lsh_probe_depth(params, so->threshold) : params->rows,
					false);
	if (so->results.n < (Size) Max(lsh_min_candidates, 0))
	{
		so->results.clear();
		so->dist.clear();
		so->heaped = 0;
		so->depth = 0;
		so->counters.depth = 0;
		lsh_verify_all(scan, index, so, params, false);
	}
}

/* The search, on the first amgettuple or amgetbitmap call: read keys -> collect -> verify, then sort. */
static void
lsh_search(IndexScanDesc scan)
{
	LshScanOpaque so = (LshScanOpaque) scan->opaque;
	MemoryContext oldcxt = MemoryContextSwitchTo(so->cxt);
	const MinHashSig *probe;

	so->exhausted = true;
	if (scan->numberOfKeys == 0 && scan->numberOfOrderBys == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("an lsh index scan needs a %% condition or an ORDER BY <%%>")));

	/* pg_stat_*_indexes.idx_scan: what tells an lsh index in use from an unused one */
	mh_count_index_search(scan);
	/*
	 * The result arrays are the scan's (keepcxt), kept across rescans: first
	 * allocated there, they grow there (repalloc keeps a chunk's context).
	 */
	if (so->results.data == NULL)
	{
		MemoryContextSwitchTo(so->keepcxt);
		so->results.reserve(256);
		so->dist.reserve(256 * (Size) Max(scan->numberOfOrderBys, 1));
		so->heap.reserve(256);
		MemoryContextSwitchTo(so->cxt);
	}
	if (lsh_read_keys(scan, so, &probe))
	{
		lsh_first_stage(scan, so, probe);
		if (!so->want_bitmap)
			lsh_sort_pending(so);
	}
	so->searched = true;
	so->counters.scans = 1;
	MemoryContextSwitchTo(oldcxt);
}

bool
lshgettuple(IndexScanDesc scan, ScanDirection dir)
{
	LshScanOpaque so = (LshScanOpaque) scan->opaque;
	LshResult  *r;
	uint32		pos;

	if (!ScanDirectionIsForward(dir))
		elog(ERROR, "lsh index scans only go forward");
	if (!so->searched)
		lsh_search(scan);
	for (;;)
	{
		/* an iterative scan has one ORDER BY: dist holds one distance per result */
		if (so->heap.n > 0 &&
			(so->exhausted || so->dist.data[so->heap.data[0]] <= so->bound))
			break;
		if (so->exhausted)
			return false;
		lsh_widen(scan);
	}

	pos = lsh_pop_pending(so);
	so->next++;
	r = &so->results.data[pos];
	scan->xs_heaptid = r->tid;
	/* compact slots: the index ruled out what cannot match, the executor decides the rest */
	scan->xs_recheck = so->recheck;
	scan->xs_recheckorderby = so->recheck && so->norderbys > 0;
	for (int j = 0; j < so->norderbys; j++)
	{
		scan->xs_orderbyvals[j] = Float8GetDatum(so->dist.data[(Size) r->pos * so->norderbys + j]);
		scan->xs_orderbynulls[j] = so->orderbys[j] == NULL;
	}
	return true;
}

/*
 * A bitmap scan without any % condition (count(*) over the table, or a
 * partial index whose predicate the query implies): the index holds no
 * answer to that, and no NULL signature at all, so it returns every page of
 * the table as lossy, which the Bitmap Heap Scan reads and rechecks like a
 * sequential scan. Such a path costs infinity and is never chosen, except
 * from PostgreSQL 18 on when enable_seqscan = off: a Bitmap Heap Scan there
 * does not count its index path's disabled nodes (see mh_disable_index_path).
 */
static int64
lsh_bitmap_all_pages(IndexScanDesc scan, TIDBitmap *tbm)
{
	Relation	heap = table_open(scan->indexRelation->rd_index->indrelid, AccessShareLock);
	BlockNumber nblocks = RelationGetNumberOfBlocks(heap);

	table_close(heap, AccessShareLock);
	for (BlockNumber blkno = 0; blkno < nblocks; blkno++)
	{
		CHECK_FOR_INTERRUPTS();
		tbm_add_page(tbm, blkno);
	}
	mh_count_index_search(scan);
	/* no row is known: what is counted is the lossy pages */
	return (int64) nblocks;
}

int64
lshgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	LshScanOpaque so = (LshScanOpaque) scan->opaque;

	if (scan->numberOfKeys == 0 && scan->numberOfOrderBys == 0)
		return lsh_bitmap_all_pages(scan, tbm);
	so->want_bitmap = true;
	if (!so->searched)
		lsh_search(scan);
	for (Size i = 0; i < so->results.n; i++)
		tbm_add_tuples(tbm, &so->results.data[i].tid, 1, so->recheck);
	so->next = so->results.n;
	return (int64) so->results.n;
}
