/*
 * The pending list of fast inserts (see lsh_pending.h for the layout and the
 * protocol): appending, merging in bulk, and reading it for scans, the pairs
 * walk and minhash_lsh_check.
 */
#include "pg/pg_prelude.h"

#include "core/lsh_prefix.h"
#include "pg/citus/citus.h"
#include "pg/lsh/lsh_pending.h"
#include "pg/lsh/lsh_pending_cache.h"
#include "pg/lsh/lsh_wal.h"
#include "pg/compat.h"

#include <algorithm>
#include <climits>

extern "C" {
#include "access/table.h"
#include "access/xlog.h"
#include "access/genam.h"
#include "catalog/pg_class.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "postmaster/autovacuum.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(minhash_lsh_clean_pending_list);
}

/*
 * minhash.lsh_pending_list_limit (kB): the pending rows, each counted at the
 * size of a 32-bit signature's slot (8 + 4k bytes, whatever the slots keep:
 * a scan's cost is per pending row), beyond which an insert merges the list.
 * A larger list makes the merge write more entries per leaf (a merge of a
 * 1M-row index's list reaches most of its leaves whatever the list's size);
 * a scan filters every pending row, until its backend has a copy of the
 * list (lsh_pending_cache.h), after which a larger list costs it little.
 * 4MB (~8,000 rows at k = 128), as GIN's gin_pending_list_limit
 * (BENCHMARKS.md, "Fast ingest").
 */
int			lsh_pending_list_limit = 4096;

void
lsh_pending_init(void)
{
	DefineCustomIntVariable("minhash.lsh_pending_list_limit",
							"Size of the signatures in an lsh index's pending list that triggers its merge.",
							"Rows inserted with fastupdate wait in the pending list; every scan compares their band keys.",
							&lsh_pending_list_limit,
							4096, 64, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
}

int
lsh_pending_keyed_bands(const LshIndexParams *params)
{
	return params->bands >= 1 && params->bands <= LSH_PENDING_MAX_BANDS ? params->bands : 0;
}

bool
lsh_pending_usable(Relation index, const LshMetaPageData *meta)
{
	const LshOptions *opts = (const LshOptions *) index->rd_options;
	bool		fastupdate = opts != NULL ? opts->fastupdate : LSH_DEFAULT_FASTUPDATE;
	LshIndexParams params;

	/* the first insert creates the root and fixes the parameters the direct way */
	if (!LSH_HAS_PENDING(meta->version) || meta->num_perm == 0 ||
		meta->root == InvalidBlockNumber || !fastupdate)
		return false;
	/*
	 * The merge takes a row's band keys from its pending page, or recomputes
	 * them from its slot: one of them must hold them (an index of more bands
	 * than a keyed page takes, with slots narrower than its signatures,
	 * inserts directly).
	 */
	lsh_meta_params(meta, &params);
	return lsh_pending_keyed_bands(&params) > 0 || lsh_verifies_exactly(&params);
}

Size
lsh_pending_limit_bytes(Relation index)
{
	const LshOptions *opts = (const LshOptions *) index->rd_options;
	int			kb = (opts != NULL && opts->pending_list_limit > 0) ? opts->pending_list_limit
		: lsh_pending_list_limit;

	return (Size) kb * 1024;
}

/*
 * Lock the pending page an insert appends to (the metapage is locked
 * EXCLUSIVE): the tail if it has room and is not closed, else *newbuf, a page
 * from the pending free list or a new one, which becomes the tail. Returns
 * the tail's buffer (InvalidBuffer when the list is empty).
 */
static Buffer
pending_prepare(Relation index, LshMetaPage meta, Buffer *newbuf, LshWalk *w, int keyed_bands)
{
	Buffer		tailbuf = InvalidBuffer;
	Page		page;

	*newbuf = InvalidBuffer;
	/* the insert's walk: its block count is already known (no second lseek) */
	lsh_walk_chain(w);
	if (meta->pending_tail != InvalidBlockNumber)
	{
		tailbuf = lsh_walk_read(w, meta->pending_tail, BUFFER_LOCK_EXCLUSIVE, LSH_PAGE_PENDING, 0,
								NULL, InvalidBlockNumber, &page);
		LshPageOpaque opaque = LshPageGetOpaque(page);
		int			tail_bands = (opaque->flags & LSH_PENDING_KEYED) ? opaque->count : 0;

		/* a plain tail (1.1's) is closed to keyed rows: they start a keyed page */
		if (!(opaque->flags & LSH_PENDING_CLOSED) && tail_bands == keyed_bands &&
			lsh_pending_count(page) < lsh_pending_capacity(page))
			return tailbuf;
	}
	if (meta->pending_free != InvalidBlockNumber)
	{
		lsh_walk_chain(w);
		*newbuf = lsh_walk_read(w, meta->pending_free, BUFFER_LOCK_EXCLUSIVE, LSH_PAGE_PENDING, 0,
								NULL, BufferIsValid(tailbuf) ? BufferGetBlockNumber(tailbuf)
								: InvalidBlockNumber, &page);
	}
	else
		*newbuf = lsh_new_buffer(index);
	return tailbuf;
}

/*
 * Append rowid within the caller's WAL record (its critical section: nothing
 * here can fail), naming each byte range changed; m is the metapage's page in
 * the record. The caller releases the pending buffers.
 */
static void
pending_add(LshWalRecord *r, int m, LshMetaPage meta, Buffer tailbuf, Buffer newbuf,
			uint32 rowid, const uint32 *keys, int keyed_bands)
{
	Page		page;
	int			p;
	uint32	   *slot;

	if (BufferIsValid(newbuf))
	{
		BlockNumber nblk = BufferGetBlockNumber(newbuf);

		if (nblk == meta->pending_free)
			meta->pending_free = LshPageGetOpaque(BufferGetPage(newbuf))->next;
		if (BufferIsValid(tailbuf))
		{
			LshPageOpaque tail = LshPageGetOpaque(BufferGetPage(tailbuf));

			tail->next = nblk;
			lsh_wal_changed(r, lsh_wal_page(r, tailbuf, false), &tail->next, sizeof(tail->next));
		}
		else
			meta->pending_head = nblk;
		p = lsh_wal_page(r, newbuf, true);
		page = BufferGetPage(newbuf);
		lsh_init_page(page, LSH_PAGE_PENDING, 0);
		if (keyed_bands > 0)
		{
			LshPageGetOpaque(page)->flags |= LSH_PENDING_KEYED;
			LshPageGetOpaque(page)->count = (uint16) keyed_bands;
		}
		meta->pending_tail = nblk;
		meta->pending_pages++;
		lsh_wal_changed(r, m, &meta->pending_free, sizeof(meta->pending_free));
		lsh_wal_changed(r, m, &meta->pending_head, sizeof(meta->pending_head));
		lsh_wal_changed(r, m, &meta->pending_tail, sizeof(meta->pending_tail));
		lsh_wal_changed(r, m, &meta->pending_pages, sizeof(meta->pending_pages));
	}
	else
	{
		p = lsh_wal_page(r, tailbuf, false);
		page = BufferGetPage(tailbuf);
	}
	slot = lsh_pending_row(page, lsh_pending_count(page));
	slot[0] = rowid;
	if (keyed_bands > 0)
		memcpy(slot + 1, keys, sizeof(uint32) * keyed_bands);
	((PageHeader) page)->pd_lower += lsh_pending_row_size(page);
	lsh_wal_changed(r, p, slot, lsh_pending_row_size(page));
	lsh_wal_changed(r, p, &((PageHeader) page)->pd_lower, sizeof(LocationIndex));
	meta->pending_rows++;
	lsh_wal_changed(r, m, &meta->pending_rows, sizeof(meta->pending_rows));
}

/*
 * An insert with fastupdate (the caller holds the metapage EXCLUSIVE): the
 * signature in a data slot (lsh_slots.cpp) and its row id, with its band
 * keys on a keyed page, at the list's tail, in one WAL record: metapage,
 * data page, the tail [and a new tail]. Its band entries wait for the merge.
 */
void
lsh_pending_insert(Relation index, Buffer metabuf, const MinHashSig *sig, ItemPointer tid)
{
	LshMetaPage meta = LshPageGetMeta(BufferGetPage(metabuf));
	LshWalk		w;
	LshNewSlot	t;
	int			keyed_bands;
	uint32	   *keys = NULL;
	Buffer		tailbuf;
	Buffer		newbuf;
	LshWalRecord r;
	int			m;

	/* one walk for the slot and the tail: its block count is known once */
	lsh_walk_init(&w, index, NULL);
	lsh_slot_alloc(index, metabuf, sig, &w, &t);
	keyed_bands = lsh_pending_keyed_bands(&t.params);
	if (keyed_bands > 0)
	{
		keys = (uint32 *) palloc(sizeof(uint32) * t.params.bands);
		lsh_sig_band_keys(&t.params, sig, keys);
	}
	tailbuf = pending_prepare(index, meta, &newbuf, &w, keyed_bands);

	lsh_wal_begin(&r, index);
	m = lsh_wal_page(&r, metabuf, false);
	lsh_slot_store(&r, m, meta, &t, sig, tid);
	pending_add(&r, m, meta, tailbuf, newbuf, t.rowid, keys, keyed_bands);
	lsh_wal_finish(&r);
	UnlockReleaseBuffer(t.buf);
	if (BufferIsValid(tailbuf))
		UnlockReleaseBuffer(tailbuf);
	if (BufferIsValid(newbuf))
		UnlockReleaseBuffer(newbuf);
	if (keys != NULL)
		pfree(keys);
}

/* ---------------------------------------------------------------- merge */

/*
 * Leaves a merge visits along the leaf level from one descent, holding the
 * metapage's share lock (released only to split): inserts wait for that
 * lock, so a run is kept to some hundred microseconds. A merge of the default list puts ~60,000 sorted entries into ~27,000
 * leaves, so the next entry's leaf is nearly always the current one's right
 * sibling or the one after: following right links costs one buffer read per
 * leaf where a descent costs the metapage, the cached descent and the leaf.
 */
#define LSH_MERGE_RUN_LEAVES	256
/* leaves passed over without an entry before a descent is cheaper */
#define LSH_MERGE_MAX_SKIP		4

/*
 * Append the entries of e[*i..n) that belong in leaf page, as many as fit,
 * in one WAL record. An entry belongs in the rightmost leaf whose low key is
 * at most its key, where a descent takes it (a key equal to the leaf's high
 * key, its right sibling's low key, goes right), whichever way the merge
 * reached the leaf. Advances *i past what it appended; returns true if the
 * next entry belongs here but the leaf is full.
 */
static bool
merge_into_leaf(Relation index, Buffer buf, Page page, const LshEntry *e, int n, int *i, int *todo)
{
	LshPageOpaque opaque = LshPageGetOpaque(page);
	bool		has_high = (opaque->flags & LSH_HAS_HIGH) != 0;
	uint32		high = opaque->high;
	int			room = lsh_leaf_capacity(page) - lsh_leaf_count(page);
	int			j = *i;
	int			appended = 0;

	/* what goes in, decided before the critical section */
	while (j < n && (!has_high || e[j].key < high))
	{
		if (appended >= room)
			break;
		todo[appended++] = j;
		j++;
	}
	if (appended > 0)
	{
		LshWalRecord r;
		LocationIndex lower = ((PageHeader) page)->pd_lower;

		lsh_wal_begin(&r, index);
		(void) lsh_wal_page(&r, buf, false);
		for (int t = 0; t < appended; t++)
			lsh_leaf_append(page, e[todo[t]].key, e[todo[t]].value);
		lsh_wal_appended(&r, 0, lower);
		lsh_wal_finish(&r);
	}
	*i = j;
	return j < n && (!has_high || e[j].key < high);
}

/*
 * After a merge that crashed or failed half-way (the metapage's merge_upto
 * set): drop from e (sorted by key, then row id) the entries it put in the
 * tree, looked for in every leaf that may hold their key, since a run of
 * equal keys spans leaves and a split since may have moved an entry to
 * either side of where a merge would put it now. Returns the entries left.
 */
static int
drop_entries_in_tree(Relation index, LshEntry *e, int n)
{
	LshWalk		w;
	bool	   *present = (bool *) palloc0(sizeof(bool) * Max(n, 1));
	int			kept = 0;

	lsh_walk_init(&w, index, NULL);
	for (int i = 0; i < n;)
	{
		uint32		key = e[i].key;
		int			j = i;
		LshMetaPage meta;
		Buffer		metabuf;
		LshCursor	cur;

		while (j < n && e[j].key == key)
			j++;
		metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
		lsh_cursor_range(&cur, &w, meta, key, key);
		while (lsh_cursor_next(&cur))
		{
			int			cnt = lsh_leaf_count(cur.page);

			for (int x = 0; x < cnt; x++)
			{
				uint32		rowid;
				LshEntry   *p;

				if (lsh_leaf_key(cur.page, x) != key)
					continue;
				rowid = lsh_leaf_rowid(cur.page, x);
				p = std::lower_bound(e + i, e + j, rowid,
									 [](const LshEntry &a, uint32 v) { return a.value < v; });
				if (p < e + j && p->value == rowid)
					present[p - e] = true;
			}
		}
		lsh_cursor_release(&cur);
		UnlockReleaseBuffer(metabuf);
		CHECK_FOR_INTERRUPTS();
		i = j;
	}
	for (int i = 0; i < n; i++)
		if (!present[i])
			e[kept++] = e[i];
	pfree(present);
	return kept;
}

/*
 * Append sorted entries to their leaves: every entry of one leaf in one WAL
 * record, moving right along the leaf level from one descent (see
 * LSH_MERGE_RUN_LEAVES). The metapage's share lock keeps the tree's shape
 * (splits take it exclusively), so the right links followed are those a
 * descent would find. A full leaf is split by lsh_tree_insert (one entry);
 * the run then goes on from the leaf's left half, whose right link leads to
 * the new one, instead of a new descent (a merge right after a build splits
 * nearly every leaf). Descents leave a stale copy of the internal levels
 * as it is (lsh_find_leaf_keep_copy): every split makes it stale.
 */
static void
merge_into_tree(Relation index, const LshEntry *e, int n)
{
	LshWalk		w;
	int			i = 0;
	/* indexes into e of one leaf's appends: at most a leaf's capacity */
	int		   *todo = (int *) palloc(sizeof(int) * (LSH_CONTENT_SIZE / sizeof(uint32) + 1));

	lsh_walk_init(&w, index, NULL);
	while (i < n)
	{
		LshMetaPage meta;
		Buffer		metabuf;
		bool		has_low;
		uint32		low;
		BlockNumber leaf;
		bool		descended = true;
		int			skipped = 0;

		/* before the metapage's lock: under a buffer lock interrupts are held off */
		CHECK_FOR_INTERRUPTS();
		metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
		leaf = lsh_find_leaf_keep_copy(index, meta, e[i].key, false, &has_low, &low);
		lsh_walk_chain(&w);
		lsh_walk_expect_low(&w, has_low, low);
		for (int run = 0;; run++)
		{
			Page		page;
			Buffer		buf = lsh_walk_read(&w, leaf, BUFFER_LOCK_EXCLUSIVE, LSH_PAGE_LEAF, 0, NULL,
											InvalidBlockNumber, &page);
			int			before = i;
			BlockNumber next;

			/*
			 * A descent must reach the key's leaf; after a split the key is
			 * at or right of the left half (a right move checked the low key).
			 */
			if (descended)
				lsh_check_key_in_leaf(index, page, leaf, e[i].key);
			else if (e[i].key < LshPageGetOpaque(page)->low)
				lsh_corrupted(index, "leaf split by a merge holds keys above the next entry's", leaf);
			descended = false;
			if (merge_into_leaf(index, buf, page, e, n, &i, todo))
			{
				/* the leaf is full: split it on the way in, under the metapage EXCLUSIVE */
				UnlockReleaseBuffer(buf);
				LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
				LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
				lsh_tree_insert(index, metabuf, e[i].key, e[i].value);
				i++;
				LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
				LockBuffer(metabuf, BUFFER_LOCK_SHARE);
				if (i >= n || run + 1 >= LSH_MERGE_RUN_LEAVES)
					break;
				lsh_walk_chain(&w);
				skipped = 0;
				continue;		/* the same leaf, now the left half */
			}
			skipped = i == before ? skipped + 1 : 0;
			if (i >= n || run + 1 >= LSH_MERGE_RUN_LEAVES || skipped >= LSH_MERGE_MAX_SKIP)
			{
				UnlockReleaseBuffer(buf);
				break;
			}
			next = lsh_walk_right(&w, page);
			UnlockReleaseBuffer(buf);
			if (next == InvalidBlockNumber)
				lsh_corrupted(index, "leaf without a right sibling below an entry's key", leaf);
			leaf = next;
		}
		UnlockReleaseBuffer(metabuf);
	}
	pfree(todo);
}

/*
 * A pending row as the merge and the pairs walk read it: its row id and
 * where its band keys are in the keys read from keyed pages (NO_KEYS: a
 * plain page's row, whose keys are recomputed from its slot).
 */
typedef struct PendingRow
{
	uint32		rowid;
	uint32		keys;
} PendingRow;

#define NO_KEYS		PG_UINT32_MAX

/* Append page's rows (and, keyed, their band keys) to rows and keys. */
static void
pending_rows_of_page(Relation index, Page page, BlockNumber blkno, const LshIndexParams *params,
					 LshArray<PendingRow> *rows, LshArray<uint32> *keys)
{
	int			n = lsh_pending_count(page);
	bool		keyed = (LshPageGetOpaque(page)->flags & LSH_PENDING_KEYED) != 0;

	if (keyed && LshPageGetOpaque(page)->count != params->bands)
		lsh_corrupted(index, "pending list page with another number of band keys than the index's bands",
					  blkno);
	for (int i = 0; i < n; i++)
	{
		const uint32 *r = lsh_pending_row(page, i);
		PendingRow	row;

		row.rowid = r[0];
		row.keys = NO_KEYS;
		if (keyed)
		{
			row.keys = (uint32) keys->n;
			memcpy(keys->extend(params->bands), r + 1, sizeof(uint32) * params->bands);
		}
		rows->push(row);
	}
}

static bool
pending_row_before(const PendingRow &a, const PendingRow &b)
{
	return a.rowid < b.rowid;
}

/*
 * The band entries of the LIVE slots among rows (sorted by row id), appended
 * to *out: the keys their pending page holds, or (a plain page's row) those
 * of the slot's values, which then hold every bit of the signature (plain
 * pages exist only in indexes of 32-bit slots).
 */
static int
entries_of_rows(Relation index, const LshIndexParams *params, const PendingRow *rows, int nrows,
				const uint32 *pagekeys, LshEntry *out)
{
	LshWalk		w;
	uint32	   *keys = (uint32 *) palloc(sizeof(uint32) * params->bands);
	int			n = 0;
	int			i = 0;

	lsh_walk_init(&w, index, NULL);
	while (i < nrows)
	{
		BlockNumber blkno = lsh_rowid_block(params, rows[i].rowid);
		Page		page;
		Buffer		buf;

		CHECK_FOR_INTERRUPTS();
		lsh_walk_chain(&w);
		buf = lsh_walk_read(&w, blkno, BUFFER_LOCK_SHARE, LSH_PAGE_DATA, 0, params,
							InvalidBlockNumber, &page);
		for (; i < nrows && lsh_rowid_block(params, rows[i].rowid) == blkno; i++)
		{
			int			slotno = lsh_rowid_slot(params, rows[i].rowid);
			const LshSlotHeader *slot;
			const uint32 *k;

			if (slotno >= params->slots_per_page)
				lsh_corrupted(index, "pending list names a row id beyond its data page", blkno);
			slot = LshDataSlot(page, slotno, params->slot_size);
			/* DEAD: VACUUM removes it (and no entry may name it after its sweep); FREE: gone */
			if (slot->state != LSH_SLOT_LIVE)
				continue;
			if (rows[i].keys != NO_KEYS)
				k = pagekeys + rows[i].keys;
			else if (lsh_verifies_exactly(params))
			{
				lsh_slot_band_keys(params, slot, keys);
				k = keys;
			}
			else
				lsh_corrupted(index, "pending row without band keys in an index whose slots cannot give them",
							  blkno);
			for (int b = 0; b < params->bands; b++)
			{
				out[n].key = k[b];
				out[n].value = rows[i].rowid;
				n++;
			}
		}
		UnlockReleaseBuffer(buf);
	}
	pfree(keys);
	return n;
}

/*
 * One round: close the tail, read the list from its head (up to budget bytes
 * of entries), put those rows' entries into the tree, then unlink their
 * pages. Returns the rows merged, -1 when the list is empty.
 */
static int64
merge_round(Relation index, Size budget)
{
	LshMetaPage meta;
	Buffer		metabuf = lsh_read_meta(index, BUFFER_LOCK_EXCLUSIVE, &meta);
	LshIndexParams params;
	BlockNumber head = meta->pending_head;
	BlockNumber tail = meta->pending_tail;
	BlockNumber upto_before = meta->merge_upto;
	bool		checked = upto_before != InvalidBlockNumber;
	BlockNumber *pages;
	int			npages = 0;
	int			cappages = 64;
	LshArray<PendingRow> rows = {};
	LshArray<uint32> pagekeys = {};
	int			nrows;
	LshEntry   *entries;
	int			nentries;
	BlockNumber blkno;
	BlockNumber last = InvalidBlockNumber;
	LshWalk		w;
	Page		page;
	Buffer		buf;
	GenericXLogState *state;
	bool		upto_seen = false;
	Size		per_row;

	if (!LSH_HAS_PENDING(meta->version) || head == InvalidBlockNumber)
	{
		UnlockReleaseBuffer(metabuf);
		return -1;
	}
	lsh_meta_params(meta, &params);
	if (params.num_perm == 0)
		lsh_corrupted(index, "pending list in an index without parameters", LSH_METAPAGE_BLKNO);
	per_row = (sizeof(LshEntry) + sizeof(uint32)) * params.bands + sizeof(PendingRow);

	/* close the tail: from now on the pages head..tail do not change (but the tail's link) */
	lsh_walk_init(&w, index, NULL);
	buf = lsh_walk_read(&w, tail, BUFFER_LOCK_EXCLUSIVE, LSH_PAGE_PENDING, 0, NULL,
						InvalidBlockNumber, &page);
	if (!(LshPageGetOpaque(page)->flags & LSH_PENDING_CLOSED))
	{
		state = GenericXLogStart(index);
		GenericXLogRegisterBuffer(state, metabuf, 0);
		page = GenericXLogRegisterBuffer(state, buf, 0);
		LshPageGetOpaque(page)->flags |= LSH_PENDING_CLOSED;
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(buf);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	/* read the closed pages from the head; no other merge runs (the merge lock) */
	pages = (BlockNumber *) palloc(sizeof(BlockNumber) * cappages);
	lsh_walk_chain(&w);
	blkno = head;
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		buf = lsh_walk_read(&w, blkno, BUFFER_LOCK_SHARE, LSH_PAGE_PENDING, 0, NULL,
							InvalidBlockNumber, &page);
		if (npages == cappages)
		{
			cappages *= 2;
			pages = (BlockNumber *) repalloc(pages, sizeof(BlockNumber) * cappages);
		}
		pages[npages++] = blkno;
		pending_rows_of_page(index, page, blkno, &params, &rows, &pagekeys);
		last = blkno;
		blkno = LshPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
		if (last == upto_before)
			upto_seen = true;
		if (last == tail || rows.n * per_row >= budget)
			break;
		if (blkno == InvalidBlockNumber)
			lsh_corrupted(index, "pending list ends before its tail", last);
	}

	/*
	 * A crash from here to the unlink leaves entries of these rows in the
	 * tree: the mark must cover them. After an earlier merge stopped
	 * half-way it covers the rows that merge read; a round that reads past
	 * them (a larger budget) moves it to its own last page, or an
	 * interrupted round would leave entries of rows beyond the mark, which
	 * the next round to reach the mark clears, and a later one would add
	 * them again.
	 */
	if (!checked || (upto_seen && last != upto_before))
	{
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(index);
		LshPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0))->merge_upto = last;
		GenericXLogFinish(state);
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
	}

	nrows = (int) rows.n;
	std::sort(rows.data, rows.data + rows.n, pending_row_before);
	entries = (LshEntry *) palloc_extended(sizeof(LshEntry) * Max((Size) nrows * params.bands, 1),
										   MCXT_ALLOC_HUGE);
	nentries = entries_of_rows(index, &params, rows.data, nrows, pagekeys.data, entries);
	lsh_sort_entries(entries, nentries);
	if (checked)
		nentries = drop_entries_in_tree(index, entries, nentries);
	merge_into_tree(index, entries, nentries);

	/*
	 * Unlink the merged pages. Scans walk the list with lock coupling; taking
	 * each merged page's lock once, in list order, with the metapage held
	 * (no scan enters at the old head any more), waits until every scan in
	 * those pages has moved past the last of them, so none follows the link
	 * the last page gets onto the free list.
	 */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	for (int p = 0; p < npages - 1; p++)
	{
		lsh_walk_chain(&w);
		buf = lsh_walk_read(&w, pages[p], BUFFER_LOCK_EXCLUSIVE, LSH_PAGE_PENDING, 0, NULL,
							InvalidBlockNumber, &page);
		UnlockReleaseBuffer(buf);
	}
	lsh_walk_chain(&w);
	buf = lsh_walk_read(&w, last, BUFFER_LOCK_EXCLUSIVE, LSH_PAGE_PENDING, 0, NULL,
						InvalidBlockNumber, &page);
	state = GenericXLogStart(index);
	meta = LshPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	page = GenericXLogRegisterBuffer(state, buf, 0);
	meta->pending_head = LshPageGetOpaque(page)->next;
	if (meta->pending_head == InvalidBlockNumber)
		meta->pending_tail = InvalidBlockNumber;
	LshPageGetOpaque(page)->next = meta->pending_free;
	meta->pending_free = head;
	meta->pending_pages = meta->pending_pages >= (uint32) npages ? meta->pending_pages - npages : 0;
	meta->pending_rows = meta->pending_rows >= (uint64) nrows ? meta->pending_rows - nrows : 0;
	meta->pending_merges++;		/* backends' copies of the list are stale (lsh_pending_cache.h) */
	if (!checked || upto_seen)
		meta->merge_upto = InvalidBlockNumber;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(metabuf);
	return nrows;
}

int64
lsh_pending_merge(Relation index, bool wait, bool use_maintenance_mem)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	int64		total = 0;
	Size		budget = (Size) (use_maintenance_mem ? maintenance_work_mem : work_mem) * 1024;

	if (RecoveryInProgress())
		return 0;
	if (wait)
		LockPage(index, LSH_METAPAGE_BLKNO, ExclusiveLock);
	else if (!ConditionalLockPage(index, LSH_METAPAGE_BLKNO, ExclusiveLock))
		return 0;
	cxt = AllocSetContextCreate(CurrentMemoryContext, "lsh pending merge", ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);
	for (;;)
	{
		int64		n = merge_round(index, budget);

		if (n < 0)
			break;
		total += n;
		MemoryContextReset(cxt);
		CHECK_FOR_INTERRUPTS();
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
	UnlockPage(index, LSH_METAPAGE_BLKNO, ExclusiveLock);
	return total;
}

bool
lsh_pending_over_limit(Relation index, const LshMetaPageData *meta)
{
	return LSH_HAS_PENDING(meta->version) && meta->num_perm > 0 &&
		meta->pending_rows * LSH_SLOT_SIZE(meta->num_perm) > lsh_pending_limit_bytes(index);
}

/* ---------------------------------------------------------------- readers */

/*
 * Call fn for every pending page from first (the head, or a page a backend's
 * copy of the list ends on: lsh_pending_cache.h) to the tail, with lock
 * coupling (the merge's unlink relies on it) and a bounded, checked walk.
 */
template <typename Fn>
static void
pending_walk_from(LshWalk *w, Buffer metabuf, BlockNumber first, Fn fn)
{
	LshMetaPage meta = LshPageGetMeta(BufferGetPage(metabuf));
	BlockNumber blkno = first;
	BlockNumber tail = meta->pending_tail;
	Buffer		buf;
	Page		page;

	if (!LSH_HAS_PENDING(meta->version) || blkno == InvalidBlockNumber)
	{
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
		return;
	}
	lsh_walk_chain(w);
	buf = lsh_walk_read(w, blkno, BUFFER_LOCK_SHARE, LSH_PAGE_PENDING, 0, NULL, InvalidBlockNumber,
						&page);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
	for (;;)
	{
		BlockNumber next = LshPageGetOpaque(page)->next;
		Buffer		nbuf;

		fn(page, blkno);
		if (blkno == tail || next == InvalidBlockNumber)
			break;
		CHECK_FOR_INTERRUPTS();
		nbuf = lsh_walk_read(w, next, BUFFER_LOCK_SHARE, LSH_PAGE_PENDING, 0, NULL, blkno, &page);
		UnlockReleaseBuffer(buf);
		buf = nbuf;
		blkno = next;
	}
	UnlockReleaseBuffer(buf);
}

template <typename Fn>
static void
pending_walk(LshWalk *w, Buffer metabuf, Fn fn)
{
	pending_walk_from(w, metabuf, LshPageGetMeta(BufferGetPage(metabuf))->pending_head, fn);
}

/* a keyed page must carry the index's bands: the keys a scan compares */
static void
check_keyed_page(Relation index, Page page, BlockNumber blkno, const LshIndexParams *params)
{
	if ((LshPageGetOpaque(page)->flags & LSH_PENDING_KEYED) && LshPageGetOpaque(page)->count != params->bands)
		lsh_corrupted(index, "pending list page with another number of band keys than the index's bands",
					  blkno);
}

/*
 * Add the row ids of rows [from, count) of a pending page to ids: on a keyed
 * page those with a key in its band's range (lo NULL: all), on a plain page
 * all. Returns the rows looked at.
 */
static int
pending_page_rows(Relation index, Page page, BlockNumber blkno, int from, LshArray<uint32> *ids,
				  const LshIndexParams *params, const uint32 *lo, const uint32 *width)
{
	int			n = lsh_pending_count(page) - from;
	uint32	   *out;

	if (n <= 0)
		return 0;
	check_keyed_page(index, page, blkno, params);
	out = ids->extend(n);
	if (lo == NULL || !(LshPageGetOpaque(page)->flags & LSH_PENDING_KEYED))
	{
		for (int i = 0; i < n; i++)
			out[i] = lsh_pending_row(page, from + i)[0];
		return n;
	}
	ids->n -= n - minhash::rows_in_key_ranges(lsh_pending_row(page, from), n, lsh_pending_row_words(page),
											   params->bands, lo, width, out);
	return n;
}

/*
 * A scan with a backend's copy of the list's first rows: those from the
 * copy, the rows appended since from the list. False (metapage unlocked,
 * the copy forgotten) if the page the copy ends on does not hold the copy's
 * last row where it was: the list is not the one copied.
 */
static bool
collect_with_cache(Relation index, LshWalk *walk, Buffer metabuf, LshPendingCache *cache,
				   LshArray<uint32> *ids, const LshIndexParams *params, const uint32 *lo, const uint32 *hi,
				   const uint32 *width)
{
	LshMetaPage meta = LshPageGetMeta(BufferGetPage(metabuf));
	int			last_count;
	uint32		last_rowid;
	BlockNumber last = lsh_pending_cache_last(cache, &last_count, &last_rowid);
	bool		first = true;
	bool		continues = true;
	uint64		filtered = 0;
	Page		head;
	Buffer		headbuf;

	/* the list still begins with the copy's first row */
	lsh_walk_chain(walk);
	headbuf = lsh_walk_read(walk, meta->pending_head, BUFFER_LOCK_SHARE, LSH_PAGE_PENDING, 0, NULL,
							InvalidBlockNumber, &head);
	continues = lsh_pending_count(head) > 0 && lsh_pending_row(head, 0)[0] == lsh_pending_cache_first(cache);
	UnlockReleaseBuffer(headbuf);
	if (!continues)
	{
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
		lsh_pending_cache_forget(cache);
		return false;
	}
	pending_walk_from(walk, metabuf, last, [&](Page page, BlockNumber blkno) {
		int			from = first ? last_count : 0;

		if (first && (lsh_pending_count(page) < last_count ||
					  lsh_pending_row(page, last_count - 1)[0] != last_rowid))
			continues = false;
		first = false;
		if (continues)
			filtered += pending_page_rows(index, page, blkno, from, ids, params, lo, width);
	});
	if (!continues)
	{
		lsh_pending_cache_forget(cache);
		return false;
	}
	lsh_pending_cache_probe(cache, lo, hi, ids);
	lsh_pending_cache_count(cache, filtered);
	return true;
}

bool
lsh_pending_collect(Relation index, LshWalk *walk, Buffer metabuf, LshArray<uint32> *ids,
					const LshIndexParams *params, const uint32 *lo, const uint32 *hi)
{
	LshMetaPage meta = LshPageGetMeta(BufferGetPage(metabuf));
	uint32	   *width = NULL;
	LshPendingCache *cache = NULL;
	bool		build = false;
	uint64		filtered = 0;

	if (lo != NULL)
	{
		/* each band's range as lo + width: one unsigned comparison a key */
		width = (uint32 *) palloc(sizeof(uint32) * params->bands);
		for (int b = 0; b < params->bands; b++)
			width[b] = hi[b] - lo[b];
		if (LSH_HAS_PENDING(meta->version) && meta->pending_head != InvalidBlockNumber)
		{
			cache = lsh_pending_cache_for(index, meta);
			if (lsh_pending_cache_built(cache, params))
			{
				if (collect_with_cache(index, walk, metabuf, cache, ids, params, lo, hi, width))
				{
					pfree(width);
					return true;
				}
				/* the whole list once more (ids read so far are candidates still) */
				LockBuffer(metabuf, BUFFER_LOCK_SHARE);
				cache = lsh_pending_cache_for(index, meta);
			}
			build = lsh_pending_cache_should_build(cache, meta, params);
		}
	}
	if (build)
		lsh_pending_cache_begin(cache, params);
	pending_walk(walk, metabuf, [&](Page page, BlockNumber blkno) {
		if (build)
		{
			check_keyed_page(index, page, blkno, params);
			lsh_pending_cache_add(cache, page, blkno);
		}
		else
			filtered += pending_page_rows(index, page, blkno, 0, ids, params, lo, width);
	});
	if (build)
	{
		lsh_pending_cache_finish(cache);
		lsh_pending_cache_probe(cache, lo, hi, ids);
	}
	else if (cache != NULL)
		lsh_pending_cache_count(cache, filtered);
	if (width != NULL)
		pfree(width);
	return build;
}

LshEntry *
lsh_pending_entries(Relation index, const LshIndexParams *params, int *n)
{
	LshWalk		w;
	LshArray<PendingRow> rows = {};
	LshArray<uint32> pagekeys = {};
	LshEntry   *entries;

	LshMetaPage meta;
	Buffer		metabuf;

	*n = 0;
	lsh_walk_init(&w, index, NULL);
	metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	pending_walk(&w, metabuf, [&](Page page, BlockNumber blkno) {
		pending_rows_of_page(index, page, blkno, params, &rows, &pagekeys);
	});
	ReleaseBuffer(metabuf);
	if (rows.n == 0 || params->num_perm == 0)
		return NULL;
	std::sort(rows.data, rows.data + rows.n, pending_row_before);
	entries = (LshEntry *) palloc_extended(sizeof(LshEntry) * rows.n * params->bands,
										   MCXT_ALLOC_HUGE);
	*n = entries_of_rows(index, params, rows.data, (int) rows.n, pagekeys.data, entries);
	lsh_sort_entries(entries, *n);
	rows.free();
	pagekeys.free();
	return entries;
}

/*
 * minhash_lsh_check: the pending list from head to tail, then the free list,
 * each bounded by the block count; row ids must name allocated slots
 * (row id < nslots_bound, the data pages' slots).
 */
void
lsh_pending_check(Relation index, const LshMetaPageData *meta, uint64 nslots_bound,
				  void (*report) (void *arg, const char *msg),
				  void (*row) (void *arg, uint32 rowid, const uint32 *keys), void *arg,
				  uint64 *pages_seen)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	uint64		rows = 0;
	uint32		pages = 0;
	BlockNumber lists[2] = {meta->pending_head, meta->pending_free};

	*pages_seen = 0;
	if (!LSH_HAS_PENDING(meta->version))
		return;
	for (int l = 0; l < 2; l++)
	{
		BlockNumber blkno = lists[l];
		BlockNumber steps = 0;
		bool		reached_tail = false;

		while (blkno != InvalidBlockNumber)
		{
			Buffer		buf;
			Page		page;
			const char *problem;

			if (blkno == LSH_METAPAGE_BLKNO || blkno >= nblocks)
			{
				report(arg, psprintf("%s list: invalid link to block %u",
									 l == 0 ? "pending" : "pending free", blkno));
				break;
			}
			if (++steps > nblocks)
			{
				report(arg, psprintf("%s list: cycle", l == 0 ? "pending" : "pending free"));
				break;
			}
			CHECK_FOR_INTERRUPTS();
			buf = ReadBuffer(index, blkno);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			problem = lsh_page_problem(page, LSH_PAGE_PENDING, -1, NULL);
			if (problem != NULL)
			{
				report(arg, psprintf("block %u: %s", blkno, problem));
				UnlockReleaseBuffer(buf);
				break;
			}
			(*pages_seen)++;
			if (l == 0)
			{
				int			cnt = lsh_pending_count(page);

				pages++;
				rows += cnt;
				if ((LshPageGetOpaque(page)->flags & LSH_PENDING_KEYED) &&
					LshPageGetOpaque(page)->count != meta->bands)
					report(arg, psprintf("block %u: pending rows with %d band keys, the index has %d bands",
										 blkno, LshPageGetOpaque(page)->count, meta->bands));
				bool		keyed = (LshPageGetOpaque(page)->flags & LSH_PENDING_KEYED) &&
					LshPageGetOpaque(page)->count == meta->bands;

				for (int i = 0; i < cnt; i++)
				{
					const uint32 *e = lsh_pending_row(page, i);
					uint32		rowid = e[0];

					if (rowid >= nslots_bound)
					{
						report(arg, psprintf("block %u: pending row id %u beyond the data slots",
											 blkno, rowid));
						break;
					}
					row(arg, rowid, keyed ? e + 1 : NULL);
				}
				if (blkno == meta->pending_tail)
					reached_tail = true;
			}
			blkno = reached_tail ? InvalidBlockNumber : LshPageGetOpaque(page)->next;
			UnlockReleaseBuffer(buf);
		}
		if (l == 0 && meta->pending_head != InvalidBlockNumber && !reached_tail)
			report(arg, pstrdup("pending list does not reach its tail"));
		if (l == 0 && meta->pending_head == InvalidBlockNumber &&
			meta->pending_tail != InvalidBlockNumber)
			report(arg, pstrdup("pending list without head has a tail"));
	}
	if (pages != meta->pending_pages || rows != meta->pending_rows)
		report(arg, psprintf("pending list holds %u pages and " UINT64_FORMAT
							 " rows, the metapage counts %u and " UINT64_FORMAT,
							 pages, rows, meta->pending_pages, meta->pending_rows));
}

/* ---------------------------------------------------------------- SQL */

extern "C" Datum
minhash_lsh_clean_pending_list(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	Relation	heap;
	int64		rows;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("The pending list of an lsh index cannot be merged during recovery.")));
	mh_citus_refuse_shell_index(indexoid, "minhash_lsh_clean_pending_list");
	/* as VACUUM: the owner of the table, checked before any lock */
	index = lsh_open_owned(indexoid, RowExclusiveLock, &heap, "minhash_lsh_clean_pending_list");
	rows = lsh_pending_merge(index, true, true);
	index_close(index, RowExclusiveLock);
	table_close(heap, AccessShareLock);
	PG_RETURN_INT64(rows);
}
