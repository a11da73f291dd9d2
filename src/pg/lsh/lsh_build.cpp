/*
 * Building an lsh index: ambuild and ambuildempty.
 *
 * The heap scan stores each signature in the next slot of a data page image;
 * a full image is appended to the index and the band entries of its rows,
 * one 64-bit sort key per band -- (key << 32 | row id) -- go to a tuplesort,
 * which spills to disk beyond maintenance_work_mem. The sorted stream then
 * fills leaves to the fillfactor option in key order and the internal levels are
 * built bottom-up. With parallel workers (lsh_build_parallel.cpp) every
 * process scans part of the table and sorts its part; this file's leader
 * code reads their merge. Pages go through shared buffers; each page is
 * final when written (a leaf's high key and right link are set before), so
 * the process that wrote it WAL-logs it then, as a full-page image, 32 to a
 * record (lsh_build_wal.cpp); the metapage, rewritten at the end, is logged
 * last. Logging the finished index instead (log_newpage_range) read it back,
 * from disk once it outgrew shared_buffers. No WAL when the index does not
 * need it (unlogged, or wal_level = minimal: the file is synced at commit).
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh_build.h"

extern "C" {
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"
}

void
lsh_build_state_init(LshBuildState *st, Relation index, const LshMetaPageData *meta,
					 LshBuildShared *shared)
{
	memset(st, 0, sizeof(LshBuildState));
	st->index = index;
	st->meta = *meta;
	st->shared = shared;
	st->buildctx = CurrentMemoryContext;
	st->tmpctx = AllocSetContextCreate(CurrentMemoryContext, "lsh build row",
									   ALLOCSET_DEFAULT_SIZES);
	/* a parallel participant logs if the leader does (its relcache may not know) */
	lsh_build_wal_init(&st->wal, shared ? lsh_shared_use_wal(shared) : RelationNeedsWAL(index));
}

/*
 * A serial build sorts the band entries by groups of adjacent bands, one
 * tuplesort per group: a version-2 key starts with its band number, so every
 * key of a group sorts before every key of the next, and reading the groups
 * in turn gives the one sorted stream a single tuplesort would, for less
 * work -- sorting g groups of n / g entries takes n log2(n / g) comparisons
 * instead of n log2 n (at a million rows of 30 bands, 30 groups: a fifth
 * fewer), in arrays a g-th the size. The memory is shared out by the groups'
 * bands; each group gets at least tuplesort's 64 kB, so there are no more
 * groups than maintenance_work_mem has 64 kB for (and at most
 * LSH_BUILD_MAX_GROUPS).
 */
#define LSH_BUILD_MAX_GROUPS 64

static void
lsh_build_begin_groups(LshBuildState *st)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(st->buildctx);
	int			bands = st->params.bands;
	int			ngroups = Min(Min(bands, LSH_BUILD_MAX_GROUPS), Max(1, maintenance_work_mem / 64));

	st->sorts = (Tuplesortstate **) palloc(sizeof(Tuplesortstate *) * ngroups);
	st->band_group = (int *) palloc(sizeof(int) * bands);
	for (int g = 0; g < ngroups; g++)
	{
		int			first = (int) ((int64) bands * g / ngroups);
		int			end = (int) ((int64) bands * (g + 1) / ngroups);
		int			mem = Max(64, (int) ((int64) maintenance_work_mem * (end - first) / bands));

		for (int b = first; b < end; b++)
			st->band_group[b] = g;
		st->sorts[g] = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
											 mem, NULL, TUPLESORT_NONE);
		st->nsorts = g + 1;
	}
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Append a page image to the index, at the block number expected; final: it
 * will not change again, so it goes to the WAL batch (the metapage is
 * rewritten at the end and logged then).
 */
static void
lsh_build_write(LshBuildState *st, Page image, BlockNumber expected, bool final)
{
	Buffer		buf = lsh_new_buffer(st->index);

	if (BufferGetBlockNumber(buf) != expected)
		elog(ERROR, "lsh build: expected to write block %u, got block %u",
			 expected, BufferGetBlockNumber(buf));
	memcpy(BufferGetPage(buf), image, BLCKSZ);
	MarkBufferDirty(buf);
	if (!final)
	{
		UnlockReleaseBuffer(buf);
		return;
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	lsh_build_wal_add(&st->wal, buf);
}

/*
 * A new page for a data page image. lsh_new_buffer skips the extension lock
 * for an index created in this transaction, which only this backend can see:
 * but parallel workers extend it too, so then every participant locks.
 */
static Buffer
lsh_build_new_data_buffer(LshBuildState *st)
{
	Buffer		buf;

	if (st->shared == NULL)
		return lsh_new_buffer(st->index);
	LockRelationForExtension(st->index, ExclusiveLock);
	buf = ReadBuffer(st->index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	UnlockRelationForExtension(st->index, ExclusiveLock);
	return buf;
}

/*
 * Append the data page image to the index, then give the sort the band
 * entries of its rows, whose row ids its block number now fixes. A page with
 * free slots (a participant's last one) goes on the free list.
 */
void
lsh_build_flush_data(LshBuildState *st)
{
	Page		page = (Page) st->data.data;
	LshPageOpaque opaque = LshPageGetOpaque(page);
	Buffer		buf;
	BlockNumber blkno;
	int			count = opaque->count;

	if (!st->have_data)
		return;
	st->have_data = false;
	if (count == 0)
		return;
	buf = lsh_build_new_data_buffer(st);
	blkno = BufferGetBlockNumber(buf);
	if (count < st->params.slots_per_page)
	{
		if (st->shared)
			lsh_shared_free_push(st->shared, page, blkno);
		else
		{
			opaque->flags |= LSH_IN_FREELIST;
			opaque->next = st->meta.free_head;
			st->meta.free_head = blkno;
		}
	}
	memcpy(BufferGetPage(buf), page, BLCKSZ);
	MarkBufferDirty(buf);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	lsh_build_wal_add(&st->wal, buf);

	if (st->band_groups)
	{
		/* the page's row ids are consecutive; the last one is checked */
		uint32		rowid0 = lsh_rowid(&st->params, blkno, 0);

		(void) lsh_rowid(&st->params, blkno, count - 1);
		if (st->nsorts == 0)
			lsh_build_begin_groups(st);
		for (int b = 0; b < st->params.bands; b++)
		{
			Tuplesortstate *sort = st->sorts[st->band_group[b]];
			const uint32 *keys = st->pagekeys + b;

			for (int slot = 0; slot < count; slot++, keys += st->params.bands)
				tuplesort_putdatum(sort, lsh_sort_datum(*keys, rowid0 + slot), false);
		}
	}
	else
		for (int slot = 0; slot < count; slot++)
		{
			uint32		rowid = lsh_rowid(&st->params, blkno, slot);
			const uint32 *keys = st->pagekeys + (Size) slot * st->params.bands;

			for (int b = 0; b < st->params.bands; b++)
				tuplesort_putdatum(st->sort, lsh_sort_datum(keys[b], rowid), false);
		}
	st->nentries += (int64) count * st->params.bands;
}

/* st->meta holds the index's parameters: derive the rest of the build's state */
static void
lsh_build_params_ready(LshBuildState *st, MemoryContext cxt)
{
	lsh_meta_params(&st->meta, &st->params);
	st->pagekeys = (uint32 *) MemoryContextAlloc(cxt, sizeof(uint32) *
												 st->params.bands * st->params.slots_per_page);
	st->have_params = true;
}

void
lsh_build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
				   bool tupleIsAlive, void *state)
{
	LshBuildState *st = (LshBuildState *) state;
	MemoryContext oldcxt;
	MinHashSig *sig;
	Page		page = (Page) st->data.data;
	LshSlotHeader *slot;
	int			slotno;

	if (isnull[0])
		return;					/* NULL signatures are not indexed: % and <%> are strict */

	oldcxt = MemoryContextSwitchTo(st->tmpctx);
	sig = DatumGetMinHashSig(values[0]);
	if (!st->have_params)
	{
		/* parallel: the first participant's parameters are everyone's */
		if (st->shared == NULL || !lsh_shared_take_params(st))
		{
			lsh_resolve_params(&st->meta, sig->num_perm, sig->seed, MinHashSigFamily(sig),
							   MinHashSigWidth(sig));
			if (st->shared)
				lsh_shared_adopt_params(st);
		}
		lsh_build_params_ready(st, oldcxt);
	}

	/*
	 * A row version that some snapshot may still see but that is deleted or
	 * replaced (tupleIsAlive false: the old versions of an UPDATE that
	 * changed the signatures' family, k, seed or width, while any
	 * transaction is open) is indexed only if it matches. One that does not
	 * cannot satisfy a scan of this index, whose query must match it, so
	 * leaving it out loses no answer; indexing it would fail the build.
	 */
	if (!tupleIsAlive && !lsh_signature_matches(&st->params, sig))
	{
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(st->tmpctx);
		return;
	}
	lsh_check_signature(index, &st->params, sig, "signature");

	if (st->have_data && LshPageGetOpaque(page)->count >= st->params.slots_per_page)
		lsh_build_flush_data(st);
	if (!st->have_data)
	{
		lsh_init_data_page(page, st->params.num_perm, st->params.slot_width);
		st->have_data = true;
	}
	slotno = LshPageGetOpaque(page)->count++;
	slot = LshDataSlot(page, slotno, st->params.slot_size);
	slot->tid = *tid;
	slot->state = LSH_SLOT_LIVE;
	lsh_pack_values(&st->params, sig->values, LshSlotValues(slot));
	st->meta.nslots++;

	lsh_sig_band_keys(&st->params, sig, st->pagekeys + (Size) slotno * st->params.bands);
	MemoryContextSwitchTo(oldcxt);
	st->index_tuples += 1;
	MemoryContextReset(st->tmpctx);
}

/* The (low key, block) references to the pages of one tree level */
typedef LshArray<LshEntry> LshLevel;

static void
lsh_level_add(LshLevel *lv, uint32 low, BlockNumber blkno)
{
	LshEntry	ref;

	ref.key = low;
	ref.value = blkno;
	lv->push(ref);
}

/*
 * Fill leaves from the sorted stream, to the index's fillfactor of the
 * capacity of the format each leaf can use: narrow when its key range (up to
 * the next leaf's first key) fits 24 bits, else wide. A leaf is closed at its
 * fill target even inside a run of equal keys: runs may span leaves.
 */
typedef struct LshLeafBuilder
{
	LshBuildState *st;
	LshLevel   *leaves;
	LshEntry   *pending;		/* entries not yet written, sorted */
	int			npending;
	uint32		low;			/* low key of the leaf being filled */
	BlockNumber blkno;			/* its block */
	int			wide_target;	/* entries a leaf takes, by format */
	int			narrow_target;
	PGAlignedBlock page;
} LshLeafBuilder;

/* entries of entry_size bytes that fill a leaf to fillfactor percent */
static int
lsh_leaf_target(int entry_size, int fillfactor)
{
	return Max(2, (int) (LSH_CONTENT_SIZE / entry_size) * fillfactor / 100);
}

/* Write the first n pending entries as a leaf; last: it is the rightmost one. */
static void
lsh_emit_leaf(LshLeafBuilder *lb, int n, bool last)
{
	Page		page = (Page) lb->page.data;
	LshPageOpaque opaque;

	lsh_init_page(page, LSH_PAGE_LEAF, 0);
	opaque = LshPageGetOpaque(page);
	opaque->low = lb->low;
	if (!last)
	{
		opaque->high = lb->pending[n].key;
		opaque->flags |= LSH_HAS_HIGH;
		opaque->next = lb->blkno + 1;	/* the next page written is the next leaf */
	}
	if (!lsh_leaf_write(page, lb->pending, n))
		elog(ERROR, "lsh build: %d entries do not fit a leaf", n);
	lsh_build_write(lb->st, page, lb->blkno, true);
	CHECK_FOR_INTERRUPTS();

	lb->npending -= n;
	memmove(lb->pending, lb->pending + n, sizeof(LshEntry) * lb->npending);
	if (!last)
	{
		lb->low = opaque->high;
		lb->blkno = lb->st->next_blkno++;
		lsh_level_add(lb->leaves, lb->low, lb->blkno);
	}
}

/* How many pending entries the next leaf takes (not the last leaf). */
static int
lsh_leaf_cut(LshLeafBuilder *lb)
{
	/* narrow if the range up to the entry after the narrow target fits */
	if (lb->pending[lb->narrow_target].key - lb->low <= LSH_NARROW_RANGE)
		return lb->narrow_target;
	return lb->wide_target;
}

/* The next entry of the sorted stream: the band groups' in turn, or the one sort's. */
static bool
lsh_build_next(LshBuildState *st, int *group, Datum *d)
{
	bool		isnull;

	if (st->nsorts == 0)
		return mh_tuplesort_getdatum(st->sort, true, d, &isnull);
	for (; *group < st->nsorts; (*group)++)
		if (mh_tuplesort_getdatum(st->sorts[*group], true, d, &isnull))
			return true;
	return false;
}

static void
lsh_build_leaves(LshBuildState *st, LshLevel *leaves)
{
	LshLeafBuilder lb;
	int64		done = 0;
	int			group = 0;
	Datum		d;
	uint32		run_key = 0;
	/*
	 * Runs of equal keys, and of equal key prefixes of each depth (version
	 * 2), for the cost estimate: a run is remembered by the entry number it
	 * starts at, so an entry that continues every run costs one comparison.
	 */
	int64		run_start = 0;
	int			ndepths = Min(st->params.layout.encoded, LSH_PREFIX_STATS);
	uint32		prefix_mask[LSH_PREFIX_STATS];
	int64		prefix_start[LSH_PREFIX_STATS];

	for (int m = 0; m < ndepths; m++)
	{
		int			bits = st->params.layout.prefix_bits[m + 1];

		prefix_mask[m] = bits >= 32 ? 0xFFFFFFFF : ~(0xFFFFFFFFu >> bits);
		prefix_start[m] = 0;
	}

	lb.st = st;
	lb.leaves = leaves;
	{
		const LshOptions *opts = (const LshOptions *) st->index->rd_options;
		int			ff = opts != NULL ? opts->fillfactor : LSH_DEFAULT_FILLFACTOR;

		lb.wide_target = lsh_leaf_target(LSH_WIDE_ENTRY_SIZE, ff);
		lb.narrow_target = lsh_leaf_target(LSH_NARROW_ENTRY_SIZE, ff);
	}
	lb.pending = (LshEntry *) palloc(sizeof(LshEntry) * (lb.narrow_target + 1));
	lb.npending = 0;
	lb.low = 0;
	lb.blkno = st->next_blkno++;
	lsh_level_add(leaves, 0, lb.blkno);

	while (lsh_build_next(st, &group, &d))
	{
		uint32		key;
		uint32		rowid;

		lsh_sort_pair(d, &key, &rowid);

		/* entry number done ends the runs its key does not continue */
		if (key != run_key && done > 0)
		{
			uint64		run = (uint64) (done - run_start);

			st->meta.build_sumsq += run * run;
			run_start = done;
			/* a prefix run ends where a longer one ends, and maybe earlier */
			for (int m = ndepths - 1; m >= 0 && ((key ^ run_key) & prefix_mask[m]) != 0; m--)
			{
				uint64		prun = (uint64) (done - prefix_start[m]);

				st->meta.build_prefix_sumsq[m] += prun * prun;
				prefix_start[m] = done;
			}
		}
		run_key = key;

		lb.pending[lb.npending].key = key;
		lb.pending[lb.npending].value = rowid;
		lb.npending++;
		/* one entry past the narrow target: the next leaf can be decided */
		if (lb.npending == lb.narrow_target + 1)
			lsh_emit_leaf(&lb, lsh_leaf_cut(&lb), false);
		if (++done % 65536 == 0)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
	}
	/* the last runs end with the stream */
	{
		uint64		run = (uint64) (done - run_start);

		st->meta.build_sumsq += run * run;
		for (int m = 0; m < ndepths; m++)
		{
			uint64		prun = (uint64) (done - prefix_start[m]);

			st->meta.build_prefix_sumsq[m] += prun * prun;
		}
	}
	st->meta.build_entries = done;

	/* the rest: the rightmost leaf, after wide ones if it cannot be narrow */
	while (PG_UINT32_MAX - lb.low > LSH_NARROW_RANGE && lb.npending > lb.wide_target)
		lsh_emit_leaf(&lb, lb.wide_target, false);
	lsh_emit_leaf(&lb, lb.npending, true);
	pfree(lb.pending);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, done);
}

/* Build the internal levels above leaves; returns the root and sets *height. */
static BlockNumber
lsh_build_internal(LshBuildState *st, LshLevel *leaves, uint16 *height)
{
	LshLevel	cur = *leaves;
	int			target = Max(2, (int) (LSH_TREE_CAPACITY * LSH_BUILD_FILL));
	uint16		level = 0;
	PGAlignedBlock buf;
	Page		page = (Page) buf.data;

	while (cur.n > 1)
	{
		LshLevel	up = {};
		int			npages = (int) ((cur.n + target - 1) / target);

		level++;
		/* spread the children evenly so the last page is not nearly empty */
		for (int p = 0; p < npages; p++)
		{
			int			from = (int) ((int64) cur.n * p / npages);
			int			to = (int) ((int64) cur.n * (p + 1) / npages);
			BlockNumber blkno = st->next_blkno++;
			LshPageOpaque opaque;

			lsh_init_page(page, LSH_PAGE_INTERNAL, level);
			opaque = LshPageGetOpaque(page);
			memcpy(LshTreeEntries(page), cur.data + from, sizeof(LshEntry) * (to - from));
			LshTreeSetCount(page, to - from);
			opaque->low = cur.data[from].key;
			if (p + 1 < npages)
			{
				opaque->high = cur.data[to].key;
				opaque->flags |= LSH_HAS_HIGH;
				opaque->next = blkno + 1;
			}
			lsh_build_write(st, page, blkno, true);
			lsh_level_add(&up, opaque->low, blkno);
		}
		if (cur.data != leaves->data)
			cur.free();
		cur = up;
	}
	*height = level + 1;
	return cur.data[0].value;
}


/* The first live row's signature parameters (lsh_build_live_params) */
typedef struct LshFirstLive
{
	bool		found;
	int			num_perm;
	uint64		seed;
	int			family;
	int			width;
} LshFirstLive;

static void
first_live_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
					bool tupleIsAlive, void *state)
{
	LshFirstLive *fl = (LshFirstLive *) state;
	MinHashSig *sig;

	if (fl->found || isnull[0] || !tupleIsAlive)
		return;
	sig = DatumGetMinHashSig(values[0]);
	fl->num_perm = sig->num_perm;
	fl->seed = sig->seed;
	fl->family = MinHashSigFamily(sig);
	fl->width = MinHashSigWidth(sig);
	fl->found = true;
}

/*
 * A build (not CONCURRENTLY) also indexes row versions that are deleted or
 * replaced but may still be seen by some snapshot, and they come first in
 * the table: an UPDATE writes the new versions after them. The index takes
 * its parameters from the first live row instead, so that the old versions
 * of an UPDATE that changed the signatures (another family, k or width) do
 * not decide them. The table is read from its start in growing block ranges
 * (1, 2, 4, ... up to 1024 blocks) until a live row is met: a few blocks,
 * unless many old versions precede it. Without a live row, the first row
 * indexed decides, as before; so it does for an expression index.
 */
static void
lsh_build_live_params(LshBuildState *st, Relation heap, Relation index, IndexInfo *indexInfo)
{
	LshFirstLive fl = {};
	BlockNumber nblocks;
	BlockNumber start = 0;
	BlockNumber len = 1;

	if (indexInfo->ii_Concurrent)
		return;					/* its snapshot shows live rows only */
	/*
	 * An expression (minhash(body, ...)) gives the old versions signatures
	 * of the same kind as the live ones; only a column keeps older kinds.
	 * (Nor does the leader then run the expression, which a parallel build
	 * leaves to its participants.)
	 */
	if (indexInfo->ii_IndexAttrNumbers[0] == 0)
		return;
	nblocks = RelationGetNumberOfBlocks(heap);
	while (start < nblocks && !fl.found)
	{
		BlockNumber n = Min(len, nblocks - start);

		CHECK_FOR_INTERRUPTS();
		table_index_build_range_scan(heap, index, indexInfo, false, false, false, start, n,
									 first_live_callback, &fl, NULL);
		start += n;
		len = Min(len * 2, 1024);
	}
	if (!fl.found)
		return;
	lsh_resolve_params(&st->meta, fl.num_perm, fl.seed, fl.family, fl.width);
	lsh_build_params_ready(st, CurrentMemoryContext);
}

IndexBuildResult *
lshbuild(Relation heap, Relation index, struct IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	LshBuildState *st;
	LshBuildLeader *leader;
	LshOptions *opts = (LshOptions *) index->rd_options;
	int32		typmod = TupleDescAttr(RelationGetDescr(index), 0)->atttypmod;
	double		reltuples;
	PGAlignedBlock metabuf;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
	lsh_require_signatures(heap, index, indexInfo);
	/* an approximate index would let conflicting rows through */
	if (indexInfo->ii_ExclusionOps != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lsh indexes cannot enforce exclusion constraints"),
				 errdetail("An lsh index finds similar rows with high probability, not with certainty.")));

	lsh_init_metapage((Page) metabuf.data, opts);
	st = (LshBuildState *) palloc(sizeof(LshBuildState));
	lsh_build_state_init(st, index, LshPageGetMeta((Page) metabuf.data), NULL);

	/*
	 * With a typmod, k and the width are known now: reject impossible bands *
	 * rows, or verify_bits beyond the width, before scanning
	 */
	if (typmod > 0)
	{
		LshMetaPageData probe = st->meta;

		lsh_resolve_params(&probe, MinHashTypmodNumPerm(typmod), 0, MINHASH_FAMILY_NATIVE,
						   MinHashTypmodWidth(typmod) < MINHASH_NUM_WIDTHS ? MinHashTypmodWidth(typmod)
						   : MINHASH_WIDTH_32);
	}

	lsh_build_write(st, (Page) metabuf.data, LSH_METAPAGE_BLKNO, false);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, LSH_PHASE_SCAN);
	lsh_build_live_params(st, heap, index, indexInfo);
	/* parallel workers if plan_create_index_workers grants some and they start */
	leader = lsh_parallel_begin(heap, index, indexInfo, &st->meta, st->have_params);
	if (leader != NULL)
		reltuples = lsh_parallel_scan(leader, st, indexInfo);
	else
	{
		/* version-2 keys begin with their band: the sorts can be per band group */
		st->band_groups = st->meta.version != LSH_VERSION_EXACT;
		if (!st->band_groups)
			st->sort = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
											 maintenance_work_mem, NULL, TUPLESORT_NONE);
		reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
										   lsh_build_callback, st, NULL);
		lsh_build_flush_data(st);
	}
	/* the band tree follows the data pages */
	st->next_blkno = RelationGetNumberOfBlocks(index);

	if (st->index_tuples > 0)
	{
		LshLevel	leaves = {};
		const int	params[] = {PROGRESS_CREATEIDX_SUBPHASE, PROGRESS_CREATEIDX_TUPLES_TOTAL};
		int64		vals[] = {LSH_PHASE_SORT, st->nentries};

		pgstat_progress_update_multi_param(2, params, vals);
		if (st->nsorts == 0)
			tuplesort_performsort(st->sort);
		for (int g = 0; g < st->nsorts; g++)
			tuplesort_performsort(st->sorts[g]);

		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, LSH_PHASE_LOAD);
		lsh_build_leaves(st, &leaves);
		st->meta.leftmost = leaves.data[0].value;
		st->meta.root = lsh_build_internal(st, &leaves, &st->meta.height);
	}
	/* else: no rows; the first insert creates the root leaf */
	if (st->sort != NULL)
		tuplesort_end(st->sort);
	for (int g = 0; g < st->nsorts; g++)
		tuplesort_end(st->sorts[g]);
	if (leader != NULL)
		lsh_parallel_end(leader);

	/* the metapage now describes the tree */
	{
		Buffer		buf = ReadBuffer(index, LSH_METAPAGE_BLKNO);

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		*LshPageGetMeta(BufferGetPage(buf)) = st->meta;
		MarkBufferDirty(buf);
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		lsh_build_wal_add(&st->wal, buf);
	}
	lsh_build_wal_flush(&st->wal);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = st->index_tuples;
	MemoryContextDelete(st->tmpctx);
	return result;
}

/* The init fork of an unlogged index: just a metapage, as after an empty build. */
void
lshbuildempty(Relation index)
{
	PGAlignedBlock buf;
	Page		page = (Page) buf.data;

	lsh_init_metapage(page, (LshOptions *) index->rd_options);
	PageSetChecksumInplace(page, LSH_METAPAGE_BLKNO);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, LSH_METAPAGE_BLKNO, (char *) page, true);
	log_newpage(&MH_SMGR_LOCATOR(RelationGetSmgr(index)), INIT_FORKNUM,
				LSH_METAPAGE_BLKNO, page, true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
}
