/*
 * VACUUM of an lsh index: ambulkdelete and amvacuumcleanup.
 *
 * Bulk delete runs in three passes so that a band entry never names a free
 * slot (which a later insert could hand to another row):
 *  1. data pages, in block order: slots whose TID the callback reports dead
 *     become DEAD (scans skip them); their row ids go into a bitmap. DEAD
 *     slots left by an interrupted earlier VACUUM join them.
 *  2. leaves, in key order along the right links: entries of DEAD rows are
 *     removed. Splits may run meanwhile, but they only move entries to the
 *     right, into pages this walk has yet to visit.
 *  3. the pages of pass 1: DEAD slots become FREE and the page joins the
 *     free-slot list, so later inserts reuse the space.
 * Pages left all-zero by a crash during relation extension become empty data
 * pages on the free list.
 *
 * Sorted leaves (format 4): entries inserted since a leaf was written are
 * appended after its sorted ones and compared one by one by every probe, until
 * a split or a rewrite. A leaf pass 2 rewrites (it visits them all) is
 * rewritten in key order, and so is one whose appended entries are an eighth
 * of it or more. An insert-only table gets no pass 2, so VACUUM's cleanup
 * samples leaves across the key space, and when appended entries are a fifth
 * of the sample or more, walks the leaves to rewrite those with long tails.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"
#include "pg/lsh/lsh_pending.h"

extern "C" {
#include "postmaster/autovacuum.h"
#include "access/genam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
}

#define DEAD_SET(bits, id)	((bits)[(id) >> 3] |= (uint8) (1 << ((id) & 7)))
#define DEAD_TEST(bits, nbits, id) \
	((uint64) (id) < (nbits) && ((bits)[(id) >> 3] & (1 << ((id) & 7))) != 0)

/* Pass 1 on one data page: returns the number of slots newly marked DEAD. */
static int
lsh_mark_dead(Relation index, Buffer buf, const LshIndexParams *params,
			  IndexBulkDeleteCallback callback, void *callback_state,
			  uint8 *dead, int *ndead)
{
	GenericXLogState *state = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(state, buf, 0);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	int			marked = 0;

	*ndead = 0;
	for (int s = 0; s < params->slots_per_page; s++)
	{
		LshSlotHeader *slot = lsh_slot_read(index, page, params, s, blkno);

		if (slot->state == LSH_SLOT_LIVE && callback(&slot->tid, callback_state))
		{
			slot->state = LSH_SLOT_DEAD;
			marked++;
		}
		if (slot->state == LSH_SLOT_DEAD)
		{
			uint32		id = lsh_rowid(params, blkno, s);

			DEAD_SET(dead, id);
			(*ndead)++;
		}
	}
	if (marked > 0)
		GenericXLogFinish(state);
	else
		GenericXLogAbort(state);
	return marked;
}

/* Are a leaf's appended (unsorted) entries long enough to sort? */
static bool
lsh_leaf_tail_long(Page page, uint32 version)
{
	int			n = lsh_leaf_count(page);
	int			tail = n - lsh_leaf_sorted(page, version);

	return version >= LSH_VERSION_SORTED && tail > 0 && tail >= Max(8, n / 8);
}

/*
 * Pass 2 on one leaf (dead: the rows to drop, NULL for none): rewrites it
 * without them, in key order, if it holds any of them or its appended entries
 * are long (lsh_leaf_tail_long). Returns whether it was rewritten.
 */
static bool
lsh_rewrite_leaf(Relation index, Buffer buf, const uint8 *dead, uint64 nbits, uint32 version)
{
	Page		page = BufferGetPage(buf);
	int			n = lsh_leaf_count(page);
	bool		any = false;
	GenericXLogState *state;
	LshEntry   *e;
	int			kept = 0;

	for (int i = 0; dead != NULL && i < n && !any; i++)
		any = DEAD_TEST(dead, nbits, lsh_leaf_rowid(page, i));
	if (!any && !lsh_leaf_tail_long(page, version))
		return false;

	e = (LshEntry *) palloc(sizeof(LshEntry) * n);
	lsh_leaf_decode(page, e);
	for (int i = 0; i < n; i++)
	{
		if (dead == NULL || !DEAD_TEST(dead, nbits, e[i].value))
			e[kept++] = e[i];
	}
	/* rewritten in key order: appended entries join the sorted prefix (lsh_leaf_sorted) */
	lsh_sort_entries(e, kept);
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buf, 0);
	/* no more entries than the page held, in its own key range: always fits */
	if (!lsh_leaf_write(page, e, kept))
		elog(ERROR, "lsh leaf %u: %d entries do not fit when rewritten", BufferGetBlockNumber(buf), kept);
	GenericXLogFinish(state);
	pfree(e);
	return true;
}

/*
 * Pass 2, or the cleanup's pass (dead NULL): every leaf in key order,
 * EXCLUSIVE, each under the metapage SHARE lock (lock order: metapage first).
 * Rewriting a leaf rebuilds it from its entries: the cursor's checks keep it
 * from rewriting a damaged one. A cycle ends at the walk's bound; interrupts
 * are served between leaves. Splits may run meanwhile, but they only move
 * entries to the right, into pages this walk has yet to visit. Returns the
 * number of leaves rewritten.
 */
static uint64
lsh_rewrite_leaves(Relation index, BufferAccessStrategy strategy, BlockNumber leftmost,
				   const uint8 *dead, uint64 nbits, uint32 version)
{
	LshWalk		w;
	LshCursor	cur;
	uint64		rewritten = 0;

	lsh_walk_init(&w, index, strategy);
	lsh_cursor_level(&cur, &w, leftmost, BUFFER_LOCK_EXCLUSIVE, 0);
	for (;;)
	{
		LshMetaPage meta;
		Buffer		metabuf;
		bool		more;

		mh_vacuum_delay_point();
		metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
		more = lsh_cursor_next(&cur);
		if (more && lsh_rewrite_leaf(index, cur.buf, dead, nbits, version))
			rewritten++;
		lsh_cursor_release(&cur);
		UnlockReleaseBuffer(metabuf);
		if (!more)
			break;
	}
	return rewritten;
}

/* Pass 3 on one data page: DEAD slots become FREE; returns how many. */
static int
lsh_free_dead(Relation index, BlockNumber blkno, const LshIndexParams *params)
{
	LshMetaPage meta;
	Buffer		metabuf = lsh_read_meta(index, BUFFER_LOCK_EXCLUSIVE, &meta);
	GenericXLogState *state;
	LshMetaPage wmeta;
	Page		page;
	LshPageOpaque opaque;
	int			freed = 0;
	LshWalk		w;
	Buffer		buf;

	lsh_walk_init(&w, index, NULL);
	buf = lsh_walk_read(&w, blkno, BUFFER_LOCK_EXCLUSIVE, LSH_PAGE_DATA, 0, params,
						InvalidBlockNumber, &page);
	state = GenericXLogStart(index);
	wmeta = LshPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	page = GenericXLogRegisterBuffer(state, buf, 0);
	opaque = LshPageGetOpaque(page);
	for (int s = 0; s < params->slots_per_page; s++)
	{
		LshSlotHeader *slot = lsh_slot_read(index, page, params, s, blkno);

		if (slot->state == LSH_SLOT_DEAD)
		{
			memset(slot, 0, params->slot_size);	/* state = FREE */
			freed++;
		}
	}
	if (freed > 0)
	{
		opaque->count -= freed;
		wmeta->nslots -= freed;
		lsh_free_list_push(&wmeta->free_head, page, blkno);
		GenericXLogFinish(state);
	}
	else
		GenericXLogAbort(state);
	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(metabuf);
	return freed;
}

/*
 * An all-zero page (a crash or an error came between extending the relation
 * and logging the page) becomes an empty data page on the free list. Under
 * the metapage EXCLUSIVE no extension is in progress: every extension happens
 * under it, so a page still zero now is garbage.
 */
static void
lsh_reclaim_new_page(Relation index, BlockNumber blkno)
{
	LshMetaPage meta;
	Buffer		metabuf = lsh_read_meta(index, BUFFER_LOCK_EXCLUSIVE, &meta);
	Buffer		buf = ReadBuffer(index, blkno);

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (PageIsNew(BufferGetPage(buf)) && meta->num_perm > 0)
	{
		GenericXLogState *state = GenericXLogStart(index);
		LshMetaPage wmeta = LshPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		Page		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);

		LshIndexParams params;

		lsh_meta_params(wmeta, &params);
		lsh_init_data_page(page, params.num_perm, params.slot_width);
		lsh_free_list_push(&wmeta->free_head, page, blkno);
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(metabuf);
}

IndexBulkDeleteResult *
lshbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	LshMetaPage meta;
	Buffer		metabuf;
	LshIndexParams params;
	BlockNumber leftmost;
	BlockNumber nblocks;
	uint64		nbits;
	uint8	   *dead;
	LshArray<BlockNumber> dead_pages = {};
	LshArray<BlockNumber> new_pages = {};

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/*
	 * Merge the pending list first, so that no dead row's entries are on it
	 * (rows pending later were inserted after the table scan that found the
	 * dead ones: their TIDs are not dead). See lsh_pending.h.
	 */
	(void) lsh_pending_merge(index, true, true);

	metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	lsh_meta_params(meta, &params);
	leftmost = meta->leftmost;
	UnlockReleaseBuffer(metabuf);
	if (params.num_perm == 0)
		return stats;			/* nothing was ever inserted */

	/* rows added after this point live beyond nbits: never dead in this pass */
	nblocks = RelationGetNumberOfBlocks(index);
	nbits = (uint64) nblocks * params.slots_per_page;
	dead = (uint8 *) palloc_extended(nbits / 8 + 1, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);

	for (BlockNumber blkno = LSH_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;

		mh_vacuum_delay_point();
		/* checked: never rewrite a damaged page as if it were sound */
		buf = lsh_read_block(index, blkno, BUFFER_LOCK_EXCLUSIVE, info->strategy, &params, &page);
		if (PageIsNew(page))
			new_pages.push(blkno);
		else if (LshPageType(page) == LSH_PAGE_DATA)
		{
			int			ndead;

			stats->tuples_removed += lsh_mark_dead(index, buf, &params, callback,
												   callback_state, dead, &ndead);
			if (ndead > 0)
				dead_pages.push(blkno);
		}
		UnlockReleaseBuffer(buf);
	}

	if (dead_pages.n > 0 && leftmost != InvalidBlockNumber)
	{
		(void) lsh_rewrite_leaves(index, info->strategy, leftmost, dead, nbits, params.version);

		for (Size i = 0; i < dead_pages.n; i++)
		{
			mh_vacuum_delay_point();
			lsh_free_dead(index, dead_pages.data[i], &params);
		}
	}

	for (Size i = 0; i < new_pages.n; i++)
		lsh_reclaim_new_page(index, new_pages.data[i]);

	pfree(dead);
	return stats;
}

/*
 * The share of appended (unsorted) entries in LSH_TAIL_SAMPLE leaves spread
 * over the key space: the leaf of the key at the middle of each of as many
 * equal slices (leaves hold about equal numbers of entries, and band keys
 * are uniform within each band's range). 0 for an empty tree.
 */
#define LSH_TAIL_SAMPLE 64
#define LSH_TAIL_SHARE 0.20

static double
lsh_sampled_tail_share(Relation index, BufferAccessStrategy strategy, uint32 version)
{
	uint64		entries = 0;
	uint64		tail = 0;

	for (int i = 0; i < LSH_TAIL_SAMPLE; i++)
	{
		uint32		key = (uint32) (((uint64) (2 * i + 1) << 32) / (2 * LSH_TAIL_SAMPLE));
		LshMetaPage meta;
		Buffer		metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
		LshWalk		w;
		LshCursor	cur;

		if (meta->root == InvalidBlockNumber)
		{
			UnlockReleaseBuffer(metabuf);
			break;
		}
		lsh_walk_init(&w, index, strategy);
		lsh_cursor_range(&cur, &w, meta, key, key);
		if (lsh_cursor_next(&cur))
		{
			int			n = lsh_leaf_count(cur.page);

			entries += (uint64) n;
			tail += (uint64) (n - lsh_leaf_sorted(cur.page, version));
		}
		lsh_cursor_release(&cur);
		UnlockReleaseBuffer(metabuf);
		mh_vacuum_delay_point();
	}
	return entries > 0 ? (double) tail / (double) entries : 0.0;
}

/*
 * An insert-only table's VACUUM: rewrite the leaves whose appended entries
 * have grown long, when a sample says they are a fifth of the entries
 * (LSH_TAIL_SHARE): rewriting a leaf costs about its size in WAL.
 */
static void
lsh_sort_appended(IndexVacuumInfo *info)
{
	LshMetaPage meta;
	Buffer		metabuf = lsh_read_meta(info->index, BUFFER_LOCK_SHARE, &meta);
	uint32		version = meta->version;
	BlockNumber leftmost = meta->leftmost;
	double		share;
	uint64		rewritten;

	UnlockReleaseBuffer(metabuf);
	if (version < LSH_VERSION_SORTED || leftmost == InvalidBlockNumber)
		return;
	share = lsh_sampled_tail_share(info->index, info->strategy, version);
	ereport(DEBUG2,
			(errmsg_internal("lsh index \"%s\": %.1f%% of a sample of leaves were appended entries",
							 RelationGetRelationName(info->index), share * 100.0)));
	if (share < LSH_TAIL_SHARE)
		return;
	rewritten = lsh_rewrite_leaves(info->index, info->strategy, leftmost, NULL, 0, version);
	ereport(DEBUG1,
			(errmsg_internal("lsh index \"%s\": %.0f%% of a sample of leaves were appended entries; " UINT64_FORMAT " leaves rewritten in key order",
							 RelationGetRelationName(info->index), share * 100.0, rewritten)));
}

IndexBulkDeleteResult *
lshvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	LshMetaPage meta;
	Buffer		metabuf;

	/*
	 * As GIN: a VACUUM that removed nothing (insert-only tables, which
	 * autovacuum visits by its insert threshold) still merges the pending
	 * list, and so does autovacuum's ANALYZE.
	 */
	if (info->analyze_only)
	{
		if (mh_is_autovacuum_worker())
			(void) lsh_pending_merge(info->index, true, true);
		return stats;
	}
	if (stats == NULL)
	{
		(void) lsh_pending_merge(info->index, true, true);
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	}
	lsh_sort_appended(info);

	/* the slot count is exact: every slot allocation and release updates it */
	metabuf = lsh_read_meta(info->index, BUFFER_LOCK_SHARE, &meta);
	stats->num_index_tuples = (double) meta->nslots;
	UnlockReleaseBuffer(metabuf);
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	stats->estimated_count = false;
	return stats;
}
