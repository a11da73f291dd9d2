/*
 * Inserting into an lsh index: aminsert, and the tree insertion with splits
 * that the build does not need.
 *
 * An insert takes three steps, each crash-safe on its own (see lsh.h):
 *  1. under the metapage's EXCLUSIVE lock, store the signature in a free data
 *     slot (one WAL record: metapage + data page [+ a new root leaf]);
 *  2. under its SHARE lock, append the band entries to their leaves, up to
 *     four leaves per WAL record, locking leaves in block order;
 *  3. for entries whose leaf was full, retake the metapage EXCLUSIVE and
 *     insert with splits.
 * With fastupdate (lsh_pending_usable), step 1 is lsh_pending_insert: the
 * slot and the row's place on the pending list in one record; steps 2 and 3
 * wait for the list's merge.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"
#include "pg/lsh/lsh_pending.h"
#include "pg/lsh/lsh_wal.h"

extern "C" {
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
}

/*
 * Step 1: a slot for the signature (lsh_slots.cpp). Returns its row id. The
 * caller holds the metapage EXCLUSIVE; on an empty index this also fixes
 * the parameters and creates the root leaf. Everything that can fail
 * happens before the critical section of lsh_wal_begin; the record names
 * the bytes changed (lsh_wal.h): the slot, the data page's special space,
 * the metapage fields [, the new root leaf].
 */
static uint32
lsh_store_signature(Relation index, Buffer metabuf, const MinHashSig *sig, ItemPointer tid)
{
	LshMetaPage meta = LshPageGetMeta(BufferGetPage(metabuf));
	LshWalk		w;
	LshNewSlot	t;
	Buffer		rootbuf = InvalidBuffer;
	LshWalRecord r;
	int			m;

	lsh_walk_init(&w, index, NULL);
	lsh_slot_alloc(index, metabuf, sig, &w, &t);
	if (meta->root == InvalidBlockNumber)
		rootbuf = lsh_new_buffer(index);

	lsh_wal_begin(&r, index);
	m = lsh_wal_page(&r, metabuf, false);
	lsh_slot_store(&r, m, meta, &t, sig, tid);
	if (BufferIsValid(rootbuf))
	{
		Page		root = BufferGetPage(rootbuf);

		(void) lsh_wal_page(&r, rootbuf, true);
		lsh_init_page(root, LSH_PAGE_LEAF, 0);
		meta->root = BufferGetBlockNumber(rootbuf);
		meta->leftmost = meta->root;
		meta->height = 1;
		meta->nsplits++;
		lsh_wal_changed(&r, m, &meta->root, sizeof(meta->root));
		lsh_wal_changed(&r, m, &meta->leftmost, sizeof(meta->leftmost));
		lsh_wal_changed(&r, m, &meta->height, sizeof(meta->height));
		lsh_wal_changed(&r, m, &meta->nsplits, sizeof(meta->nsplits));
	}
	lsh_wal_finish(&r);
	UnlockReleaseBuffer(t.buf);
	if (BufferIsValid(rootbuf))
		UnlockReleaseBuffer(rootbuf);
	return t.rowid;
}

/* band numbers by the block of their leaf; arg is the leaf block of each band */
static int
band_by_leaf_cmp(const void *a, const void *b, void *arg)
{
	const BlockNumber *leaf = (const BlockNumber *) arg;
	BlockNumber x = leaf[*(const int *) a];
	BlockNumber y = leaf[*(const int *) b];

	return x < y ? -1 : (x > y ? 1 : 0);
}

#define LSH_LEAVES_PER_RECORD 4

/*
 * Step 2: append entries to leaves that have room, holding the metapage
 * SHARE. Returns the number of bands whose leaf was full, listed in full[],
 * for step 3.
 */
static int
lsh_append_entries(Relation index, const uint32 *keys, int nkeys, uint32 rowid, int *full)
{
	LshMetaPage meta;
	Buffer		metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	BlockNumber *leaf = (BlockNumber *) palloc(sizeof(BlockNumber) * nkeys);
	bool	   *has_low = (bool *) palloc(sizeof(bool) * nkeys);
	uint32	   *low = (uint32 *) palloc(sizeof(uint32) * nkeys);
	int		   *order = (int *) palloc(sizeof(int) * nkeys);
	bool	   *fits = (bool *) palloc(sizeof(bool) * nkeys);
	int			nfull = 0;
	int			i = 0;
	LshWalk		w;

	lsh_walk_init(&w, index, NULL);
	for (int b = 0; b < nkeys; b++)
	{
		leaf[b] = lsh_find_leaf_low(index, meta, keys[b], false, &has_low[b], &low[b]);
		order[b] = b;
	}
	qsort_arg(order, nkeys, sizeof(int), band_by_leaf_cmp, leaf);

	while (i < nkeys)
	{
		Buffer		bufs[LSH_LEAVES_PER_RECORD];
		LocationIndex lower[LSH_LEAVES_PER_RECORD];
		int			nbufs = 0;
		int			first = i;
		int			nappend = 0;

		/* the next group: bands of up to four distinct leaves, ascending */
		while (i < nkeys)
		{
			if (nbufs == 0 || leaf[order[i]] != BufferGetBlockNumber(bufs[nbufs - 1]))
			{
				Page		page;

				if (nbufs == LSH_LEAVES_PER_RECORD)
					break;
				/* blocks ascend strictly, so none is held already; checked before the append trusts pd_lower */
				lsh_walk_chain(&w);
				lsh_walk_expect_low(&w, has_low[order[i]], low[order[i]]);
				bufs[nbufs] = lsh_walk_read(&w, leaf[order[i]], BUFFER_LOCK_EXCLUSIVE, LSH_PAGE_LEAF, 0,
											NULL, InvalidBlockNumber, &page);
				nbufs++;
			}
			lsh_check_key_in_leaf(index, BufferGetPage(bufs[nbufs - 1]), leaf[order[i]], keys[order[i]]);
			i++;
		}

		/* which bands fit, decided before the critical section */
		for (int g = first, j = -1, room = 0; g < i; g++)
		{
			int			b = order[g];

			if (j < 0 || leaf[b] != BufferGetBlockNumber(bufs[j]))
			{
				j++;
				room = lsh_leaf_capacity(BufferGetPage(bufs[j])) -
					lsh_leaf_count(BufferGetPage(bufs[j]));
				lower[j] = ((PageHeader) BufferGetPage(bufs[j]))->pd_lower;
			}
			fits[g - first] = room > 0;
			if (room > 0)
			{
				room--;
				nappend++;
			}
			else
				full[nfull++] = b;
		}
		if (nappend > 0)
		{
			LshWalRecord r;

			lsh_wal_begin(&r, index);
			for (int j = 0; j < nbufs; j++)
				(void) lsh_wal_page(&r, bufs[j], false);
			for (int g = first, j = -1; g < i; g++)
			{
				int			b = order[g];

				if (j < 0 || leaf[b] != BufferGetBlockNumber(bufs[j]))
					j++;
				if (fits[g - first])
					lsh_leaf_append(BufferGetPage(bufs[j]), keys[b], rowid);
			}
			for (int j = 0; j < nbufs; j++)
				lsh_wal_appended(&r, j, lower[j]);
			lsh_wal_finish(&r);
		}
		for (int j = 0; j < nbufs; j++)
			UnlockReleaseBuffer(bufs[j]);
	}
	UnlockReleaseBuffer(metabuf);
	pfree(leaf);
	pfree(has_low);
	pfree(low);
	pfree(order);
	pfree(fits);
	return nfull;
}

/*
 * Split the full tree page in buf (exclusively locked) whose parent (locked,
 * with room for one more entry) refers to it at parent_idx. The upper half
 * moves to a new right sibling; one WAL record covers metapage, parent, page
 * and sibling, so the tree is consistent before and after it. Returns the
 * separator; *sibling is the new page, exclusively locked.
 *
 * Both halves are first written into images of their own, where a failure is
 * still an ordinary error; the critical section copies them in and logs the
 * bytes that changed (lsh_wal.h): the split page from its first changed byte,
 * the parent from the new entry on, the sibling whole. A merge splits
 * thousands of leaves right after a build; GenericXLog would copy and compare
 * all four pages for each.
 */
static uint32
lsh_split(Relation index, Buffer metabuf, Buffer parentbuf, int parent_idx, Buffer buf,
		  Buffer *sibling)
{
	Buffer		sbuf = lsh_new_buffer(index);
	LshMetaPage meta = LshPageGetMeta(BufferGetPage(metabuf));
	Page		parent = BufferGetPage(parentbuf);
	Page		page = BufferGetPage(buf);
	LshPageOpaque opaque = LshPageGetOpaque(page);
	bool		leaf = opaque->level == 0;
	LshEntry   *pe = LshTreeEntries(parent);
	int			np = LshTreeCount(parent);
	LocationIndex old_lower = ((PageHeader) page)->pd_lower;
	LocationIndex new_lower;
	Page		left = (Page) palloc(BLCKSZ);
	Page		right = (Page) palloc(BLCKSZ);
	LshPageOpaque lopaque;
	LshPageOpaque ropaque;
	LshEntry   *e;
	int			n;
	int			mid;
	uint32		sep;
	int			first;
	BlockNumber sblkno = BufferGetBlockNumber(sbuf);
	LshWalRecord r;
	int			w;

	if (leaf)
	{
		/* leaves are unsorted and may be narrow: decode and sort a copy */
		e = (LshEntry *) palloc(sizeof(LshEntry) * lsh_leaf_count(page));
		n = lsh_leaf_decode(page, e);
		lsh_sort_entries(e, n);
	}
	else
	{
		e = LshTreeEntries(page);
		n = LshTreeCount(page);
	}
	mid = n / 2;
	sep = e[mid].key;

	memcpy(left, page, BLCKSZ);
	lopaque = LshPageGetOpaque(left);
	lsh_init_page(right, LshPageType(page), opaque->level);
	ropaque = LshPageGetOpaque(right);
	ropaque->low = sep;
	ropaque->high = opaque->high;
	ropaque->flags |= opaque->flags & LSH_HAS_HIGH;
	ropaque->next = opaque->next;
	lopaque->high = sep;
	lopaque->flags |= LSH_HAS_HIGH;
	lopaque->next = sblkno;
	if (leaf)
	{
		/* each half takes the narrow format if its (smaller) range allows */
		if (!lsh_leaf_write(right, e + mid, n - mid) || !lsh_leaf_write(left, e, mid))
			elog(ERROR, "lsh split: half a leaf does not fit a page");
		pfree(e);
	}
	else
	{
		memcpy(LshTreeEntries(right), e + mid, sizeof(LshEntry) * (n - mid));
		LshTreeSetCount(right, n - mid);
		LshTreeSetCount(left, mid);
	}
	/* the entries that moved out leave a hole of zeroes, as replay makes it */
	new_lower = ((PageHeader) left)->pd_lower;
	if (new_lower < old_lower)
		memset(left + new_lower, 0, old_lower - new_lower);
	/* the first byte the split changes: eight at a time, then one */
	first = LSH_CONTENT_START;
	while (first + 8 <= new_lower && memcmp(left + first, page + first, 8) == 0)
		first += 8;
	while (first < new_lower && left[first] == page[first])
		first++;

	lsh_wal_begin(&r, index);
	w = lsh_wal_page(&r, metabuf, false);
	meta->nsplits++;
	lsh_wal_changed(&r, w, &meta->nsplits, sizeof(meta->nsplits));

	/* the separator goes right after the split page's entry in the parent */
	w = lsh_wal_page(&r, parentbuf, false);
	memmove(pe + parent_idx + 2, pe + parent_idx + 1, sizeof(LshEntry) * (np - parent_idx - 1));
	pe[parent_idx + 1].key = sep;
	pe[parent_idx + 1].value = sblkno;
	LshTreeSetCount(parent, np + 1);
	lsh_wal_changed(&r, w, pe + parent_idx + 1, sizeof(LshEntry) * (np - parent_idx));
	lsh_wal_changed(&r, w, &((PageHeader) parent)->pd_lower, sizeof(LocationIndex));

	w = lsh_wal_page(&r, buf, false);
	memcpy(page, left, BLCKSZ);
	lsh_wal_changed(&r, w, page + first, new_lower - first);
	lsh_wal_changed(&r, w, &((PageHeader) page)->pd_lower, sizeof(LocationIndex));
	lsh_wal_changed(&r, w, opaque, sizeof(LshPageOpaqueData));

	(void) lsh_wal_page(&r, sbuf, true);
	memcpy(BufferGetPage(sbuf), right, BLCKSZ);
	lsh_wal_finish(&r);

	pfree(left);
	pfree(right);
	*sibling = sbuf;
	return sep;
}

/*
 * Give the tree a new root above the current one (which is full). The old
 * root becomes the new root's only child; the caller splits it next.
 */
static Buffer
lsh_grow_root(Relation index, Buffer metabuf, Buffer rootbuf)
{
	Buffer		nbuf = lsh_new_buffer(index);
	GenericXLogState *state = GenericXLogStart(index);
	LshMetaPage wmeta = LshPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	Page		npage = GenericXLogRegisterBuffer(state, nbuf, GENERIC_XLOG_FULL_IMAGE);
	LshPageOpaque old = LshPageGetOpaque(BufferGetPage(rootbuf));

	lsh_init_page(npage, LSH_PAGE_INTERNAL, old->level + 1);
	LshTreeEntries(npage)[0].key = old->low;
	LshTreeEntries(npage)[0].value = BufferGetBlockNumber(rootbuf);
	LshTreeSetCount(npage, 1);
	LshPageGetOpaque(npage)->low = old->low;
	wmeta->root = BufferGetBlockNumber(nbuf);
	wmeta->height++;
	wmeta->nsplits++;
	GenericXLogFinish(state);
	return nbuf;
}

/*
 * Step 3: insert one entry, splitting full pages on the way down (top-down,
 * so a parent always has room for the separator of its child's split). The
 * caller holds the metapage EXCLUSIVE: no one else is in the tree.
 */
void
lsh_tree_insert(Relation index, Buffer metabuf, uint32 key, uint32 rowid)
{
	LshMetaPage meta = LshPageGetMeta(BufferGetPage(metabuf));
	Buffer		parentbuf = InvalidBuffer;
	int			parent_idx = 0;
	BlockNumber blkno = meta->root;
	int			level = meta->height - 1;
	LshWalk		w;

	lsh_walk_init(&w, index, NULL);
	for (;;)
	{
		Page		page;
		Buffer		buf;
		LshPageOpaque opaque;

		/* one level down each time, never into the parent we hold */
		buf = lsh_walk_read(&w, blkno, BUFFER_LOCK_EXCLUSIVE, level == 0 ? LSH_PAGE_LEAF : LSH_PAGE_INTERNAL,
							level, NULL,
							BufferIsValid(parentbuf) ? BufferGetBlockNumber(parentbuf) : InvalidBlockNumber,
							&page);
		opaque = LshPageGetOpaque(page);

		if (opaque->level == 0 ? lsh_leaf_count(page) >= lsh_leaf_capacity(page)
			: LshTreeCount(page) >= LSH_TREE_CAPACITY)
		{
			Buffer		sbuf;
			uint32		sep;

			if (!BufferIsValid(parentbuf))
			{
				parentbuf = lsh_grow_root(index, metabuf, buf);
				parent_idx = 0;
			}
			sep = lsh_split(index, metabuf, parentbuf, parent_idx, buf, &sbuf);
			/* continue in the half that takes key (the right one on a tie, as inserts do) */
			if (key >= sep)
			{
				UnlockReleaseBuffer(buf);
				buf = sbuf;
				parent_idx++;
			}
			else
				UnlockReleaseBuffer(sbuf);
			page = BufferGetPage(buf);
			opaque = LshPageGetOpaque(page);
		}
		if (BufferIsValid(parentbuf))
			UnlockReleaseBuffer(parentbuf);

		if (opaque->level == 0)
		{
			LshWalRecord r;
			LocationIndex lower = ((PageHeader) page)->pd_lower;

			lsh_check_key_in_leaf(index, page, BufferGetBlockNumber(buf), key);
			lsh_wal_begin(&r, index);
			(void) lsh_wal_page(&r, buf, false);
			lsh_leaf_append(page, key, rowid);
			lsh_wal_appended(&r, 0, lower);
			lsh_wal_finish(&r);
			UnlockReleaseBuffer(buf);
			return;
		}
		parent_idx = lsh_child_index(page, key, false);
		blkno = LshTreeEntries(page)[parent_idx].value;
		lsh_walk_expect_low(&w, true, LshTreeEntries(page)[parent_idx].key);
		parentbuf = buf;
		level--;
	}
}

bool
lshinsert(Relation index, Datum *values, bool *isnull, ItemPointer heap_tid,
		  Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
		  struct IndexInfo *indexInfo)
{
	MemoryContext tmpcxt;
	MemoryContext oldcxt;
	MinHashSig *sig;
	LshMetaPage meta;
	Buffer		metabuf;
	LshIndexParams params;
	uint32		rowid;
	uint32	   *keys;
	int		   *full;			/* the bands whose leaf was full (step 3) */
	int			nfull;

	if (isnull[0])
		return false;			/* NULLs are not indexed: % and <%> are strict */

	tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "lsh insert", ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(tmpcxt);
	sig = DatumGetMinHashSig(values[0]);

	metabuf = lsh_read_meta(index, BUFFER_LOCK_EXCLUSIVE, &meta);
	if (lsh_pending_usable(index, meta))
	{
		bool		over;

		/* fastupdate: one WAL record; the band entries wait for the merge */
		lsh_pending_insert(index, metabuf, sig, heap_tid);
		over = lsh_pending_over_limit(index, meta);
		UnlockReleaseBuffer(metabuf);
		/* over the limit: merge (unless someone else is merging already) */
		if (over)
			(void) lsh_pending_merge(index, false, false);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextDelete(tmpcxt);
		return false;
	}
	rowid = lsh_store_signature(index, metabuf, sig, heap_tid);
	lsh_meta_params(meta, &params);
	UnlockReleaseBuffer(metabuf);

	keys = (uint32 *) palloc(sizeof(uint32) * params.bands);
	full = (int *) palloc(sizeof(int) * params.bands);
	lsh_sig_band_keys(&params, sig, keys);
	nfull = lsh_append_entries(index, keys, params.bands, rowid, full);
	if (nfull > 0)
	{
		metabuf = lsh_read_meta(index, BUFFER_LOCK_EXCLUSIVE, &meta);
		for (int i = 0; i < nfull; i++)
			lsh_tree_insert(index, metabuf, keys[full[i]], rowid);
		UnlockReleaseBuffer(metabuf);
	}

	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(tmpcxt);
	return false;
}
