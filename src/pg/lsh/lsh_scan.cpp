/*
 * Scanning an lsh index: % (similarity at least minhash.similarity_threshold)
 * and ORDER BY <%> (distance), through amgettuple and amgetbitmap.
 *
 * A scan works in one go on its first call: look up each of the query's
 * band keys (under the metapage SHARE lock, so the tree cannot split under
 * the lookup), collect the row ids of matching entries, verify each
 * candidate against its stored signature -- the same estimate the operators
 * compute, so no heap visit is spent on false candidates and the executor
 * need not recheck -- and sort the survivors by distance (ORDER BY) or by
 * heap TID (which helps the heap fetches).
 *
 * ORDER BY <%> returns only rows sharing a band with the query, closest
 * first: a LIMIT n may see fewer than n rows when fewer candidates exist.
 * minhash.lsh_min_candidates widens such a scan to every stored signature.
 *
 * A NULL ORDER BY argument (e.g. a parameter of a generic plan) makes every
 * distance NULL, as <%> is strict: a sequential scan and sort returns every
 * row then, in no particular order. So does the index, as GiST does: without
 * a % condition it returns every live row it holds (rows with a NULL
 * signature are not in the index), with xs_orderbynulls set. A NULL % argument
 * matches nothing, as the operator does.
 */
#include "pg/lsh/lsh.h"

#include <cstdlib>

#include "core/jaccard.h"

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
	LshResult  *results;
	int			nresults;
	int			cap;
	int			next;			/* next result amgettuple returns */
	double	   *dist;			/* norderbys distances per result */

	/* the current search */
	int			num_perm;
	int			nquals;
	MinHashSig **quals;			/* right-hand sides of % */
	int			norderbys;
	MinHashSig **orderbys;		/* right-hand sides of <%>; NULL for a NULL argument */
	double		threshold;
	BlockNumber heap_nblocks;	/* the table's known size, for checking stored TIDs */
} LshScanOpaqueData;

typedef LshScanOpaqueData *LshScanOpaque;

IndexScanDesc
lshbeginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	LshScanOpaque so = (LshScanOpaque) palloc0(sizeof(LshScanOpaqueData));

	so->cxt = AllocSetContextCreate(CurrentMemoryContext, "lsh scan", ALLOCSET_DEFAULT_SIZES);
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
	MemoryContextReset(so->cxt);
	so->searched = false;
	so->results = NULL;
	so->nresults = so->cap = so->next = 0;
	so->dist = NULL;
}

void
lshendscan(IndexScanDesc scan)
{
	LshScanOpaque so = (LshScanOpaque) scan->opaque;

	MemoryContextDelete(so->cxt);
	pfree(so);
	scan->opaque = NULL;
}

/* Does the stored signature pass every % qual? If so, keep it with its distances. */
static void
lsh_consider(IndexScanDesc scan, LshScanOpaque so, const LshSlotHeader *slot, BlockNumber blkno)
{
	const uint32 *values = LshSlotValues(slot);
	LshResult  *r;

	for (int i = 0; i < so->nquals; i++)
	{
		if (minhash::jaccard_estimate(values, so->quals[i]->values, so->num_perm) < so->threshold)
			return;
	}
	/*
	 * A result goes to the executor's heap fetch: it must name a block of the
	 * table. (A bitmap scan has no heap relation here; the bitmap heap scan
	 * itself ignores blocks past the table's end.)
	 */
	if (scan->heapRelation != NULL)
		lsh_check_heap_tid(scan->indexRelation, scan->heapRelation, &so->heap_nblocks, &slot->tid, blkno);
	if (so->nresults == so->cap)
	{
		so->cap = so->cap ? so->cap * 2 : 256;
		if (so->results == NULL)
		{
			so->results = (LshResult *) palloc(sizeof(LshResult) * so->cap);
			so->dist = (double *) palloc(sizeof(double) * so->cap * Max(so->norderbys, 1));
		}
		else
		{
			so->results = (LshResult *) repalloc_huge(so->results, sizeof(LshResult) * so->cap);
			so->dist = (double *) repalloc_huge(so->dist,
												sizeof(double) * so->cap * Max(so->norderbys, 1));
		}
	}
	r = &so->results[so->nresults];
	r->tid = slot->tid;
	r->pos = so->nresults;
	for (int j = 0; j < so->norderbys; j++)
		so->dist[(Size) r->pos * so->norderbys + j] = so->orderbys[j] == NULL ? 0.0 :
			1.0 - minhash::jaccard_estimate(values, so->orderbys[j]->values, so->num_perm);
	so->nresults++;
}

static inline void
lsh_collect_add(uint32 **ids, int *nids, int *capids, uint32 rowid)
{
	if (*nids == *capids)
	{
		*capids *= 2;
		*ids = (uint32 *) repalloc_huge(*ids, sizeof(uint32) * *capids);
	}
	(*ids)[(*nids)++] = rowid;
}

/*
 * Collect the row ids of entries with this key, starting at the leftmost leaf
 * that may hold it and following right links through a run of equal keys.
 */
static void
lsh_collect(Relation index, LshWalk *w, const LshMetaPageData *meta, uint32 key,
			uint32 **ids, int *nids, int *capids)
{
	bool		has_low;
	uint32		low;
	BlockNumber blkno = lsh_find_leaf_low(index, meta, key, true, &has_low, &low);
	BlockNumber first = blkno;

	/* the metapage lock holds off interrupts: the walk's bound ends a cycle */
	lsh_walk_chain(w);
	lsh_walk_expect_low(w, has_low, low);
	while (blkno != InvalidBlockNumber)
	{
		Page		page;
		Buffer		buf = lsh_walk_read(w, blkno, BUFFER_LOCK_SHARE, LSH_PAGE_LEAF, 0, NULL,
										InvalidBlockNumber, &page);
		LshPageOpaque opaque = LshPageGetOpaque(page);
		int			n;
		bool		more;

		if (blkno == first)
			lsh_check_key_in_leaf(index, page, blkno, key);

		n = lsh_leaf_count(page);
		if (!(opaque->flags & LSH_NARROW))
		{
			const LshEntry *e = (const LshEntry *) ((char *) page + LSH_CONTENT_START);

			for (int i = 0; i < n; i++)
			{
				if (e[i].key == key)
					lsh_collect_add(ids, nids, capids, e[i].value);
			}
		}
		else if (key - opaque->low <= LSH_NARROW_RANGE)
		{
			/* compare the 3 stored bytes of key - low */
			uint32		off = key - opaque->low;
			const uint8 *p = (const uint8 *) page + LSH_CONTENT_START;

			for (int i = 0; i < n; i++, p += LSH_NARROW_ENTRY_SIZE)
			{
#ifndef WORDS_BIGENDIAN
				uint32		w;

				/* one 4-byte load: the 4th byte (the row id's first) is masked off */
				memcpy(&w, p, sizeof(w));
				if ((w & 0xFFFFFF) == off)
#else
				if ((p[0] | ((uint32) p[1] << 8) | ((uint32) p[2] << 16)) == off)
#endif
					lsh_collect_add(ids, nids, capids, lsh_leaf_rowid(page, i));
			}
		}
		more = (opaque->flags & LSH_HAS_HIGH) && opaque->high <= key;
		blkno = more ? lsh_walk_right(w, page) : InvalidBlockNumber;
		UnlockReleaseBuffer(buf);
	}
}

/* Verify candidates (sorted row ids) against their stored signatures. */
static void
lsh_verify(IndexScanDesc scan, Relation index, LshWalk *w, LshScanOpaque so,
		   const LshIndexParams *params, const uint32 *ids, int nids)
{
	int			i = 0;

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
			const LshSlotHeader *slot = LshDataSlot(page, lsh_rowid_slot(params, ids[i]),
													params->num_perm);
			const char *problem = lsh_slot_problem(slot);

			if (problem != NULL)
				lsh_corrupted(index, problem, blkno);
			/* DEAD: removed by VACUUM, its TID may already name another tuple */
			if (slot->state == LSH_SLOT_LIVE)
				lsh_consider(scan, so, slot, blkno);
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

/* Verify every stored signature: the widened, exact search. */
static void
lsh_verify_all(IndexScanDesc scan, Relation index, LshScanOpaque so, const LshIndexParams *params)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	for (BlockNumber blkno = LSH_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf = ReadBuffer(index, blkno);
		Page		page;
		const char *problem;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		/* all-zero pages are left by a crash during extension; any other must be sound */
		problem = PageIsNew(page) ? NULL : lsh_page_problem(page, LSH_PAGE_ANY & ~LSH_PAGE_META, -1, params);
		if (problem != NULL)
			lsh_corrupted(index, problem, blkno);
		if (!PageIsNew(page) && LshPageType(page) == LSH_PAGE_DATA)
		{
			for (int s = 0; s < params->slots_per_page; s++)
			{
				const LshSlotHeader *slot = LshDataSlot(page, s, params->num_perm);

				problem = lsh_slot_problem(slot);
				if (problem != NULL)
					lsh_corrupted(index, problem, blkno);
				if (slot->state == LSH_SLOT_LIVE)
					lsh_consider(scan, so, slot, blkno);
			}
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

static LshScanOpaque sort_so;

static int
lsh_result_cmp(const void *a, const void *b)
{
	const LshResult *x = (const LshResult *) a;
	const LshResult *y = (const LshResult *) b;

	for (int j = 0; j < sort_so->norderbys; j++)
	{
		double		dx = sort_so->dist[(Size) x->pos * sort_so->norderbys + j];
		double		dy = sort_so->dist[(Size) y->pos * sort_so->norderbys + j];

		/* a NULL argument's distances are all NULL, hence equal */
		if (sort_so->orderbys[j] != NULL && dx != dy)
			return dx < dy ? -1 : 1;
	}
	return ItemPointerCompare((ItemPointer) &x->tid, (ItemPointer) &y->tid);
}

static void
lsh_search(IndexScanDesc scan)
{
	Relation	index = scan->indexRelation;
	LshScanOpaque so = (LshScanOpaque) scan->opaque;
	MemoryContext oldcxt = MemoryContextSwitchTo(so->cxt);
	LshMetaPage meta;
	Buffer		metabuf;
	LshIndexParams params;
	const MinHashSig *probe = NULL;
	uint32	   *keys;
	uint32	   *ids;
	int			nids = 0;
	int			capids = 1024;
	int			nuniq = 0;
	LshWalk		w;				/* one block count for every band and the candidates */

	if (scan->numberOfKeys == 0 && scan->numberOfOrderBys == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("an lsh index scan needs a %% condition or an ORDER BY <%%>")));
	mh_count_index_search(scan);

	/* A NULL query matches nothing: the operators are strict */
	so->nquals = scan->numberOfKeys;
	so->quals = (MinHashSig **) palloc(sizeof(MinHashSig *) * Max(so->nquals, 1));
	for (int i = 0; i < so->nquals; i++)
	{
		ScanKey		sk = &scan->keyData[i];

		if (sk->sk_flags & SK_ISNULL)
			goto done;
		if (sk->sk_strategy != LSH_SIMILAR_STRATEGY)
			elog(ERROR, "unexpected strategy %d in an lsh index scan", sk->sk_strategy);
		so->quals[i] = DatumGetMinHashSig(sk->sk_argument);
	}
	so->norderbys = scan->numberOfOrderBys;
	so->orderbys = (MinHashSig **) palloc(sizeof(MinHashSig *) * Max(so->norderbys, 1));
	for (int j = 0; j < so->norderbys; j++)
	{
		ScanKey		sk = &scan->orderByData[j];

		if (sk->sk_strategy != LSH_DISTANCE_STRATEGY)
			elog(ERROR, "unexpected ordering strategy %d in an lsh index scan", sk->sk_strategy);
		so->orderbys[j] = (sk->sk_flags & SK_ISNULL) ? NULL : DatumGetMinHashSig(sk->sk_argument);
	}
	so->threshold = minhash_similarity_threshold;

	metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	lsh_meta_params(meta, &params);
	UnlockReleaseBuffer(metabuf);
	if (params.num_perm == 0)
		goto done;				/* nothing was ever inserted */
	so->num_perm = params.num_perm;
	for (int i = 0; i < so->nquals; i++)
		lsh_check_signature(index, &params, so->quals[i], "query signature");
	for (int j = 0; j < so->norderbys; j++)
	{
		if (so->orderbys[j] != NULL)
			lsh_check_signature(index, &params, so->orderbys[j], "query signature");
	}

	/* Candidates come from the first % query, else from the first non-NULL ORDER BY query */
	if (so->nquals > 0)
		probe = so->quals[0];
	for (int j = 0; probe == NULL && j < so->norderbys; j++)
		probe = so->orderbys[j];
	if (probe == NULL)
	{
		/* ORDER BY <%> NULL alone: every row qualifies, at a NULL distance */
		lsh_verify_all(scan, index, so, &params);
		goto sort;
	}
	keys = (uint32 *) palloc(sizeof(uint32) * params.bands);
	lsh_band_keys(&params, probe->values, keys);
	ids = (uint32 *) palloc(sizeof(uint32) * capids);

	/*
	 * One band at a time under the metapage lock, so that a query with a huge
	 * candidate set can be cancelled and does not hold off splits for long.
	 * Bands need not see the same tree: a row is found through any band.
	 */
	lsh_walk_init(&w, index, NULL);
	metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	for (int b = 0; b < params.bands; b++)
	{
		if (b > 0)
			LockBuffer(metabuf, BUFFER_LOCK_SHARE);	/* still pinned */
		if (meta->root != InvalidBlockNumber)
			lsh_collect(index, &w, meta, keys[b], &ids, &nids, &capids);
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
		CHECK_FOR_INTERRUPTS();
	}
	ReleaseBuffer(metabuf);

	/* one visit per candidate, data pages in block order */
	qsort(ids, nids, sizeof(uint32), lsh_uint32_cmp);
	for (int i = 0; i < nids; i++)
	{
		if (nuniq == 0 || ids[nuniq - 1] != ids[i])
			ids[nuniq++] = ids[i];
	}
	lsh_verify(scan, index, &w, so, &params, ids, nuniq);

	if (so->nresults < lsh_min_candidates)
	{
		so->nresults = 0;
		lsh_verify_all(scan, index, so, &params);
	}

sort:
	sort_so = so;
	qsort(so->results, so->nresults, sizeof(LshResult), lsh_result_cmp);

done:
	so->searched = true;
	MemoryContextSwitchTo(oldcxt);
}

bool
lshgettuple(IndexScanDesc scan, ScanDirection dir)
{
	LshScanOpaque so = (LshScanOpaque) scan->opaque;
	LshResult  *r;

	if (!ScanDirectionIsForward(dir))
		elog(ERROR, "lsh index scans only go forward");
	if (!so->searched)
		lsh_search(scan);
	if (so->next >= so->nresults)
		return false;

	r = &so->results[so->next++];
	scan->xs_heaptid = r->tid;
	scan->xs_recheck = false;
	scan->xs_recheckorderby = false;
	for (int j = 0; j < so->norderbys; j++)
	{
		scan->xs_orderbyvals[j] = Float8GetDatum(so->dist[(Size) r->pos * so->norderbys + j]);
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
	if (!so->searched)
		lsh_search(scan);
	for (int i = 0; i < so->nresults; i++)
		tbm_add_tuples(tbm, &so->results[i].tid, 1, false);
	return so->nresults;
}
