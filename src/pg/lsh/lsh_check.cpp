/*
 * minhash_lsh_check(index) walks an lsh index and lists every inconsistency
 * it finds (no rows: consistent).
 *
 * It requires ownership of the table, verified before any lock is taken
 * (lsh_open_owned): a lock request queues, so even one refused afterwards
 * would hold up other sessions (the check's ShareLock waits behind writers
 * and everything queued after it waits too). EXECUTE on it is also revoked from
 * PUBLIC (src/sql/50_lsh.sql), as amcheck does: holding off writers for the
 * length of a check is an administrator's decision.
 *
 * The check holds ShareLock on the index, which waits for and then blocks
 * writers (inserts and VACUUM hold RowExclusiveLock) but not readers, so it
 * sees a quiescent index. A hot standby cannot take ShareLock; its only
 * writer is WAL replay, which takes no relation locks, so there the check
 * takes AccessShareLock and sees a quiescent index while replay is idle. It
 * verifies:
 *  - the metapage: magic, version, parameters, block references;
 *  - every page: an lsh page of a known type, sane header and counts;
 *  - data pages: slot states and counts, the free-slot list (a page is on it
 *    exactly when it has a free slot), the metapage's slot count;
 *  - the tree, level by level: the right-link chain of each level is exactly
 *    the children of the level above, in order; low and high keys agree with
 *    the separators; internal entries are sorted; every leaf entry lies in
 *    its leaf's key range and names an allocated slot; no tree page is
 *    unreachable;
 *  - the entries are exactly the band keys of the rows: the leaves' entries
 *    are sorted by row id (tuplesort, within maintenance_work_mem) and
 *    merged with each slot's band keys, recomputed in a second pass over the
 *    data pages. An entry that is not a band key of its row, or is repeated,
 *    is a problem; so is a LIVE row lacking entries whose heap tuple is
 *    visible (a row of an aborted or crashed transaction may lack some until
 *    VACUUM removes it);
 *  - with heapallindexed, the index against the table (lsh_check_heap.cpp):
 *    every LIVE slot of a visible row holds the row's indexed value, and
 *    every visible row the index covers has a LIVE slot.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "pg/lsh/lsh.h"
#include "pg/lsh/lsh_pending.h"

extern "C" {
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/index.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/hsearch.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(minhash_lsh_check);
}

#define LSH_MAX_PROBLEMS 1000

/* per-block facts gathered by the physical pass */
#define PT_UNKNOWN	0
#define PT_NEW		1
#define PT_META		2
#define PT_DATA		3
#define PT_INTERNAL	4
#define PT_LEAF		5
#define PT_OTHER	6
#define PT_PENDING	7

typedef struct LshChecker
{
	Relation	index;
	Relation	heap;
	ReturnSetInfo *rsinfo;
	int64		nproblems;
	MemoryContext cxt;			/* the pass's memory */
	HTAB	   *listed;			/* the problems listed, each once */
	LshMetaPageData meta;
	LshIndexParams params;
	BlockNumber nblocks;
	uint8	   *ptype;			/* per block */
	bool	   *visited;		/* per block: reached by the tree or free-list walk */
	bool	   *damaged;		/* per block: a page problem listed by the physical pass */
	uint64		nrowids;		/* nblocks * slots per page */
	uint8	   *slotstate;		/* per row id */
	uint16	   *missing;		/* per row id: band entries not found */
	uint64		npending_pages;	/* pending list pages found by the physical pass */
	uint32	   *keys;			/* scratch: one row's band keys */
	LshArray<uint32> pending_keyed;	/* keyed pending rows: row id, then its band keys */
	/* the leaves' entries as (row id, key) sort keys */
	Tuplesortstate *actual;
	Snapshot	snapshot;		/* MVCC, for heap visibility */
	LshHeapCheck *heapcheck;	/* heapallindexed: NULL if not asked for */
} LshChecker;

static void
problem(LshChecker *c, const char *fmt,...) pg_attribute_printf(2, 3);

static void
problem(LshChecker *c, const char *fmt,...)
{
	char		buf[512];
	va_list		ap;
	Datum		value;
	bool		isnull = false;

	bool		found;

	/*
	 * One damaged page may be met by several passes (the physical pass, the
	 * tree walk, the row check): each problem is listed once.
	 */
	memset(buf, 0, sizeof(buf));
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (c->listed == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(buf);
		ctl.entrysize = sizeof(buf);
		ctl.hcxt = c->cxt;
		c->listed = hash_create("minhash_lsh_check problems", 256, &ctl,
								HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	if (c->nproblems < LSH_MAX_PROBLEMS)
	{
		(void) hash_search(c->listed, buf, HASH_ENTER, &found);
		if (found)
			return;
	}
	else if (hash_search(c->listed, buf, HASH_FIND, NULL) != NULL)
		return;
	c->nproblems++;
	if (c->nproblems > LSH_MAX_PROBLEMS)
		return;
	value = CStringGetTextDatum(buf);
	tuplestore_putvalues(c->rsinfo->setResult, c->rsinfo->setDesc, &value, &isnull);
}

static bool
check_meta(LshChecker *c)
{
	Buffer		buf = ReadBuffer(c->index, LSH_METAPAGE_BLKNO);
	Page		page;
	const LshMetaPageData *m;
	bool		ok = true;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (!LshPageIsLsh(page) || LshPageType(page) != LSH_PAGE_META)
	{
		problem(c, "block 0 is not an lsh metapage");
		UnlockReleaseBuffer(buf);
		return false;
	}
	m = LshPageGetMeta(page);
	c->meta = *m;
	/* the metapage's length: from pd_lower, as lsh_read_meta checks it */
	long		length = (long) ((PageHeader) page)->pd_lower - ((char *) m - (char *) page);
	UnlockReleaseBuffer(buf);
	m = &c->meta;

	if (m->magic != LSH_MAGIC)
		problem(c, "metapage: bad magic number %08x", m->magic), ok = false;
	if (!LSH_VERSION_KNOWN(m->version))
		problem(c, "metapage: version %u, expected %d to %d", m->version, LSH_VERSION_EXACT,
				LSH_VERSION), ok = false;
	else if (lsh_meta_length_problem(m->version, length) != NULL)
		problem(c, "metapage: %s (%ld bytes, version %u writes %d)",
				lsh_meta_length_problem(m->version, length), length, m->version,
				(int) lsh_meta_size(m->version)), ok = false;
	if (!ok)
		return false;
	if (m->num_perm == 0)
	{
		if (m->root != InvalidBlockNumber || m->nslots != 0 || m->free_head != InvalidBlockNumber)
			problem(c, "metapage: no parameters yet, but rows, a tree or a free list are recorded");
		lsh_meta_params(m, &c->params);
		return true;
	}
	if (m->num_perm > MINHASH_MAX_NUM_PERM || m->bands < 1 || m->rows < 1 ||
		(int) m->bands * m->rows > m->num_perm)
		problem(c, "metapage: invalid parameters num_perm = %d, bands = %d, rows = %d",
				m->num_perm, m->bands, m->rows), ok = false;
	if (LSH_HAS_WIDTHS(m->version) &&
		(m->sig_width >= MINHASH_NUM_WIDTHS || m->slot_width >= MINHASH_NUM_WIDTHS ||
		 m->slot_width < m->sig_width))
	{
		problem(c, "metapage: invalid width codes %d (signatures) and %d (slots)",
				m->sig_width, m->slot_width);
		return false;
	}
	lsh_meta_params(m, &c->params);
	if (m->slots_per_page != lsh_slots_per_page(m->num_perm, c->params.slot_width))
		problem(c, "metapage: %d slots per page, expected %d for num_perm = %d at %d bits",
				m->slots_per_page, lsh_slots_per_page(m->num_perm, c->params.slot_width), m->num_perm,
				MINHASH_WIDTH_BITS(c->params.slot_width)), ok = false;
	if (m->root != InvalidBlockNumber &&
		(m->root >= c->nblocks || m->leftmost >= c->nblocks || m->height < 1))
		problem(c, "metapage: tree root %u, leftmost leaf %u or height %d out of range",
				m->root, m->leftmost, m->height), ok = false;
	if (m->root == InvalidBlockNumber && m->nslots != 0)
		problem(c, "metapage: %llu rows but no tree", (unsigned long long) m->nslots);
	if (m->free_head != InvalidBlockNumber && m->free_head >= c->nblocks)
		problem(c, "metapage: free list head %u beyond the index's %u blocks",
				m->free_head, c->nblocks), ok = false;
	lsh_meta_params(m, &c->params);
	return ok;
}

/* Physical pass: classify pages, check data pages, remember slot states. */
static void
check_pages(LshChecker *c, uint64 *nallocated, BlockNumber *nfreelisted)
{
	int			spp = c->params.slots_per_page;

	*nallocated = 0;
	*nfreelisted = 0;
	for (BlockNumber blkno = LSH_METAPAGE_BLKNO + 1; blkno < c->nblocks; blkno++)
	{
		Buffer		buf = ReadBuffer(c->index, blkno);
		Page		page;
		LshPageOpaque opaque;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		opaque = LshPageGetOpaque(page);
		if (PageIsNew(page))
			c->ptype[blkno] = PT_NEW;
		else if (!LshPageIsLsh(page))
		{
			c->ptype[blkno] = PT_OTHER;
			problem(c, "block %u: not an lsh page", blkno);
		}
		else if (LshPageType(page) == LSH_PAGE_META)
		{
			c->ptype[blkno] = PT_OTHER;
			problem(c, "block %u: a second metapage", blkno);
		}
		else if (LshPageType(page) == LSH_PAGE_LEAF || LshPageType(page) == LSH_PAGE_INTERNAL)
		{
			/* the page checks every reader runs (lsh_access.cpp) */
			const char *pproblem = lsh_page_problem(page, LSH_PAGE_TREE, -1, NULL);

			c->ptype[blkno] = LshPageType(page) == LSH_PAGE_LEAF ? PT_LEAF : PT_INTERNAL;
			if (pproblem != NULL)
			{
				problem(c, "block %u: %s", blkno, pproblem);
				c->damaged[blkno] = true;
			}
		}
		else if (LshPageType(page) == LSH_PAGE_PENDING)
		{
			const char *pproblem = lsh_page_problem(page, LSH_PAGE_PENDING, -1, NULL);

			c->ptype[blkno] = PT_PENDING;
			c->npending_pages++;
			if (pproblem != NULL)
				problem(c, "block %u: %s", blkno, pproblem);
		}
		else if (LshPageType(page) == LSH_PAGE_DATA)
		{
			int			used = 0;
			const char *pproblem;

			c->ptype[blkno] = PT_DATA;
			if (c->meta.num_perm == 0)
				problem(c, "block %u: data page in an index without parameters", blkno);
			else if ((pproblem = lsh_page_problem(page, LSH_PAGE_DATA, 0, &c->params)) != NULL)
				problem(c, "block %u: %s", blkno, pproblem);
			else
			{
				for (int s = 0; s < spp; s++)
				{
					const char *sproblem;
					const LshSlotHeader *slot = lsh_slot_read(c->index, page, &c->params, s, blkno,
															  &sproblem);
					uint64		id = (uint64) blkno * spp + s;

					if (slot->state == LSH_SLOT_FREE)
						continue;
					if (slot->state != LSH_SLOT_LIVE && slot->state != LSH_SLOT_DEAD)
					{
						problem(c, "block %u slot %d: invalid state %d", blkno, s, slot->state);
						continue;
					}
					used++;
					if (sproblem != NULL)
						problem(c, "block %u slot %d: invalid heap TID", blkno, s);
					else if (c->heapcheck != NULL && slot->state == LSH_SLOT_LIVE)
						lsh_heapcheck_add_slot(c->heapcheck, &c->params, slot);
					c->slotstate[id] = (uint8) slot->state;
				}
				if (used != opaque->count)
					problem(c, "block %u: %d slots in use, but the page header says %d",
							blkno, used, opaque->count);
				if (((opaque->flags & LSH_IN_FREELIST) != 0) != (used < spp))
					problem(c, "block %u: %s", blkno,
							used < spp ? "has a free slot but is not on the free list"
							: "is full but marked as on the free list");
				if (opaque->flags & LSH_IN_FREELIST)
					(*nfreelisted)++;
				*nallocated += used;
			}
		}
		else
		{
			c->ptype[blkno] = PT_OTHER;
			problem(c, "block %u: unknown page type %d", blkno, LshPageType(page));
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
}

static void
check_free_list(LshChecker *c, BlockNumber nfreelisted)
{
	BlockNumber blkno = c->meta.free_head;
	BlockNumber n = 0;

	while (blkno != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page;

		if (blkno >= c->nblocks || c->ptype[blkno] != PT_DATA)
		{
			problem(c, "free list: block %u is not a data page", blkno);
			return;
		}
		if (c->visited[blkno])
		{
			problem(c, "free list: cycle at block %u", blkno);
			return;
		}
		c->visited[blkno] = true;
		n++;
		buf = ReadBuffer(c->index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (!(LshPageGetOpaque(page)->flags & LSH_IN_FREELIST))
			problem(c, "free list: block %u is on the list but not marked so", blkno);
		blkno = LshPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
	if (n != nfreelisted)
		problem(c, "free list: %u pages on the list, %u pages marked as on it", n, nfreelisted);
}

/* the next (row id, key) of the leaves' entries, in order */
static bool
get_pair(Tuplesortstate *sort, uint32 *rowid, uint32 *key)
{
	Datum		d;
	bool		isnull;

	if (!mh_tuplesort_getdatum(sort, true, &d, &isnull))
		return false;
	lsh_sort_pair(d, rowid, key);
	return true;
}

/* the band a key belongs to: its top band_bits (version 2 on) */
static inline uint32
key_band(const LshIndexParams *params, uint32 key)
{
	int			bb = params->layout.band_bits;

	return bb == 0 ? 0 : key >> (32 - bb);
}

/*
 * Compare the leaves' entries, sorted by (row id, key), with the band keys of
 * each allocated slot, taken in row id order from a second pass over the data
 * pages: every entry must be a band key of its row (and not repeated); a LIVE
 * row lacking entries is remembered for the visibility test in check_rows. A
 * DEAD row may lack entries (VACUUM removes them before freeing the slot).
 * Every entry in the sort names an allocated slot (check_leaf_entries).
 *
 * An index whose slots keep fewer bits than its signatures cannot give a
 * row's band keys back from its slot: there every entry must be of a band of
 * its own, one per band (the keys compared by their band numbers), and with
 * heapallindexed the row's whole set of keys is compared with those of the
 * signature its heap tuple holds (lsh_heapcheck_add_keys).
 */
static void
check_pairs(LshChecker *c)
{
	int			spp = c->params.slots_per_page;
	int			nb = c->params.bands;
	bool		bykeys = lsh_verifies_exactly(&c->params);	/* the slots give the keys */
	LshArray<uint32> found = {};
	uint32		a_rowid = 0;
	uint32		a_key = 0;
	bool		have_a;

	tuplesort_performsort(c->actual);
	have_a = get_pair(c->actual, &a_rowid, &a_key);
	for (BlockNumber blkno = LSH_METAPAGE_BLKNO + 1; blkno < c->nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;

		if (c->ptype[blkno] != PT_DATA)
			continue;
		buf = ReadBuffer(c->index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		for (int s = 0; s < spp; s++)
		{
			uint32		rowid = (uint32) ((uint64) blkno * spp + s);
			int			i = 0;
			Size		j = 0;
			const char *sproblem;	/* listed by check_pages */

			const LshSlotHeader *slot;
			bool		complete = true;

			if (c->slotstate[rowid] == LSH_SLOT_FREE)
				continue;
			slot = lsh_slot_read(c->index, page, &c->params, s, blkno, &sproblem);
			if (bykeys)
			{
				lsh_slot_band_keys(&c->params, slot, c->keys);
				qsort(c->keys, nb, sizeof(uint32), lsh_uint32_cmp);
			}
			else
				for (int b = 0; b < nb; b++)
					c->keys[b] = (uint32) b;	/* band numbers, ascending as keys are */
			found.clear();
			while (have_a && a_rowid == rowid)
			{
				found.push(a_key);
				have_a = get_pair(c->actual, &a_rowid, &a_key);
			}
			/* both sorted: a merge finds the extra and the missing keys */
			while (i < nb || j < found.n)
			{
				uint32		f = j < found.n ? (bykeys ? found.data[j] : key_band(&c->params, found.data[j])) : 0;

				if (j >= found.n || (i < nb && c->keys[i] < f))
				{
					if (c->slotstate[rowid] == LSH_SLOT_LIVE)
						c->missing[rowid]++;
					complete = false;
					i++;
				}
				else if (i >= nb || f < c->keys[i])
				{
					problem(c, "entry (key %u, row id %u): not a band key of the row, or repeated",
							found.data[j], rowid);
					complete = false;
					j++;
				}
				else
				{
					i++;
					j++;
				}
			}
			/* the keys themselves, against the heap tuple's signature */
			if (!bykeys && complete && c->heapcheck != NULL && sproblem == NULL &&
				c->slotstate[rowid] == LSH_SLOT_LIVE)
				lsh_heapcheck_add_keys(c->heapcheck, &slot->tid, found.data, nb);
		}
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
	if (have_a)
		problem(c, "entries for row id %u and beyond, which is past the data pages", a_rowid);
	found.free();
}

static void
check_leaf_entries(LshChecker *c, BlockNumber blkno, Page page)
{
	LshPageOpaque opaque = LshPageGetOpaque(page);
	int			n = lsh_leaf_count(page);
	bool		has_high = (opaque->flags & LSH_HAS_HIGH) != 0;
	LshEntry   *e = (LshEntry *) palloc(sizeof(LshEntry) * Max(n, 1));

	int			sorted = lsh_leaf_sorted(page, c->meta.version);

	lsh_leaf_decode(page, e);
	/* a probe binary-searches the sorted prefix: out of order, it would miss entries */
	for (int i = 1; i < sorted; i++)
	{
		if (e[i - 1].key > e[i].key)
		{
			problem(c, "leaf %u: entry %d of its %d in key order has key %u after key %u",
					blkno, i, sorted, e[i].key, e[i - 1].key);
			break;
		}
	}
	for (int i = 0; i < n; i++)
	{
		uint32		rowid = e[i].value;

		if (e[i].key < opaque->low || (has_high && e[i].key > opaque->high))
			problem(c, "leaf %u: key %u outside the leaf's range [%u, %u]",
					blkno, e[i].key, opaque->low, has_high ? opaque->high : PG_UINT32_MAX);
		if ((uint64) rowid >= c->nrowids || c->slotstate[rowid] == LSH_SLOT_FREE)
		{
			problem(c, "leaf %u: entry for row id %u, which is not an allocated slot", blkno, rowid);
			continue;
		}
		tuplesort_putdatum(c->actual, lsh_sort_datum(rowid, e[i].key), false);
	}
	pfree(e);
}

/* Damage met by a level's cursor: listed, unless the physical pass has listed a problem of that page. */
static void
report_walk_problem(void *arg, BlockNumber blkno, const char *msg)
{
	LshChecker *c = (LshChecker *) arg;

	if (blkno < c->nblocks && c->damaged[blkno])
		return;
	problem(c, "block %u: %s", blkno, msg);
}

/*
 * Walk one level along its right links with a leaf cursor (lsh_cursor.cpp)
 * whose walk lists what it finds wrong instead of failing; expected[] lists
 * the level's pages in order (the children of the level above, as (low key,
 * block)). Returns the children of this level for the next one down.
 */
static LshEntry *
check_level(LshChecker *c, int level, const LshEntry *expected, int nexpected, int *nchildren)
{
	LshArray<LshEntry> children = {};
	LshWalk		w;
	LshCursor	cur;
	BlockNumber blkno;
	int			i = 0;

	lsh_walk_init(&w, c->index, NULL);
	w.report = report_walk_problem;
	w.report_arg = c;
	lsh_cursor_level(&cur, &w, expected[0].value, BUFFER_LOCK_SHARE, level);
	while ((blkno = cur.next) != InvalidBlockNumber)
	{
		Page		page;
		LshPageOpaque opaque;
		bool		has_high;

		if (blkno >= c->nblocks || c->ptype[blkno] != (level == 0 ? PT_LEAF : PT_INTERNAL))
		{
			problem(c, "level %d: right link or child to block %u, not a %s page", level, blkno,
					level == 0 ? "leaf" : "internal");
			break;
		}
		if (c->visited[blkno])
		{
			problem(c, "level %d: block %u reached twice", level, blkno);
			break;
		}
		c->visited[blkno] = true;
		if (i >= nexpected || expected[i].value != blkno)
			problem(c, "level %d: block %u is in the right-link chain at position %d, the level above expects block %u",
					level, blkno, i, i < nexpected ? expected[i].value : InvalidBlockNumber);

		/* the cursor checks the page (type, level, header, key range, right link) */
		if (!lsh_cursor_next(&cur))
			break;
		page = cur.page;
		opaque = LshPageGetOpaque(page);
		has_high = (opaque->flags & LSH_HAS_HIGH) != 0;
		if (i < nexpected && opaque->low != expected[i].key)
			problem(c, "block %u: low key %u, the level above says %u", blkno, opaque->low,
					expected[i].key);
		if (i + 1 < nexpected && (!has_high || opaque->high != expected[i + 1].key))
			problem(c, "block %u: high key %s%u, the next separator is %u", blkno,
					has_high ? "" : "missing, ", opaque->high, expected[i + 1].key);

		if (level == 0)
			check_leaf_entries(c, blkno, page);
		else
		{
			LshEntry   *e = LshTreeEntries(page);
			int			n = LshTreeCount(page);

			if (n == 0)
				problem(c, "internal page %u is empty", blkno);
			else if (e[0].key != opaque->low)
				problem(c, "internal page %u: first key %u differs from its low key %u",
						blkno, e[0].key, opaque->low);
			for (int j = 0; j < n; j++)
			{
				if (j > 0 && e[j].key < e[j - 1].key)
					problem(c, "internal page %u: keys out of order at entry %d", blkno, j);
				if (has_high && e[j].key > opaque->high)
					problem(c, "internal page %u: key %u above the high key", blkno, e[j].key);
				children.push(e[j]);
			}
		}
		lsh_cursor_release(&cur);
		i++;
		CHECK_FOR_INTERRUPTS();
	}
	lsh_cursor_release(&cur);
	if (i != nexpected)
		problem(c, "level %d: %d pages along the right links, the level above has %d children",
				level, i, nexpected);
	*nchildren = (int) children.n;
	return children.data;
}

static void
check_tree(LshChecker *c)
{
	LshEntry	top;
	const LshEntry *expected = &top;
	int			nexpected = 1;

	if (c->meta.root == InvalidBlockNumber)
		return;
	top.key = 0;
	top.value = c->meta.root;
	if (c->ptype[c->meta.root] != (c->meta.height == 1 ? PT_LEAF : PT_INTERNAL))
	{
		problem(c, "metapage: root %u is not a %s page", c->meta.root,
				c->meta.height == 1 ? "leaf" : "internal");
		return;
	}
	for (int level = c->meta.height - 1; level >= 0; level--)
	{
		int			nch;
		LshEntry   *children;

		if (level == 0 && c->meta.leftmost != expected[0].value)
			problem(c, "metapage: leftmost leaf %u, the tree's is %u", c->meta.leftmost,
					expected[0].value);
		children = check_level(c, level, expected, nexpected, &nch);
		if (level > 0 && nch == 0)
			return;
		expected = children;
		nexpected = nch;
	}
}

/* Is the heap tuple at tid visible to the snapshot (following HOT chains)? */
static bool
heap_visible(Relation heap, IndexFetchTableData *fetch, TupleTableSlot *slot,
			 Snapshot snapshot, ItemPointer tid)
{
	ItemPointerData t = *tid;
	bool		call_again = false;
	bool		all_dead = false;

	return table_index_fetch_tuple(fetch, &t, snapshot, slot, &call_again, &all_dead);
}

static void
check_rows(LshChecker *c, uint64 nallocated)
{
	IndexFetchTableData *fetch = table_index_fetch_begin(c->heap);
	TupleTableSlot *tslot = table_slot_create(c->heap, NULL);
	Snapshot	snapshot = c->snapshot;
	BlockNumber heap_nblocks = RelationGetNumberOfBlocks(c->heap);

	if (nallocated != c->meta.nslots)
		problem(c, "metapage: %llu allocated slots recorded, %llu found",
				(unsigned long long) c->meta.nslots, (unsigned long long) nallocated);
	for (uint64 id = 0; id < c->nrowids; id++)
	{
		ItemPointerData tid;
		BlockNumber blkno = lsh_rowid_block(&c->params, (uint32) id);
		Buffer		buf;
		Page		page;
		const char *sproblem;	/* listed by check_pages */

		if (c->missing[id] == 0)
			continue;
		buf = ReadBuffer(c->index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		tid = lsh_slot_read(c->index, page, &c->params, lsh_rowid_slot(&c->params, (uint32) id), blkno,
							&sproblem)->tid;
		UnlockReleaseBuffer(buf);
		if (sproblem != NULL)
			continue;
		/* a slot's row may lie beyond the table's end only if the slot is damaged */
		if (ItemPointerGetBlockNumberNoCheck(&tid) >= heap_nblocks ||
			ItemPointerGetOffsetNumberNoCheck(&tid) == InvalidOffsetNumber)
		{
			problem(c, "row id %llu: its slot names row (%u,%u), outside the table's %u blocks",
					(unsigned long long) id, ItemPointerGetBlockNumberNoCheck(&tid),
					ItemPointerGetOffsetNumberNoCheck(&tid), heap_nblocks);
			continue;
		}
		if (heap_visible(c->heap, fetch, tslot, snapshot, &tid))
			problem(c, "row (%u,%u) is visible but lacks %d of its %d band entries",
					ItemPointerGetBlockNumberNoCheck(&tid), ItemPointerGetOffsetNumberNoCheck(&tid),
					c->missing[id], c->params.bands);
		CHECK_FOR_INTERRUPTS();
	}
	ExecDropSingleTupleTableSlot(tslot);
	table_index_fetch_end(fetch);
}

static void
report_problem(void *arg, const char *msg)
{
	problem((LshChecker *) arg, "%s", msg);
}

/*
 * A pending row (fastupdate) has no band entries yet, or some of them if a
 * merge was interrupted: not a problem; but it must name an allocated slot.
 */
static void
pending_row(void *arg, uint32 rowid, const uint32 *keys)
{
	LshChecker *c = (LshChecker *) arg;

	if (c->slotstate[rowid] == LSH_SLOT_FREE)
		problem(c, "pending row id %u names a free slot", rowid);
	c->missing[rowid] = 0;
	if (keys != NULL)
	{
		uint32	   *rec = c->pending_keyed.extend(1 + c->params.bands);

		rec[0] = rowid;
		memcpy(rec + 1, keys, sizeof(uint32) * c->params.bands);
	}
}

/*
 * A keyed pending row's band keys must be its signature's: scans take or
 * skip the row by them, so a wrong key would hide it silently. Read after
 * the list walk (an insert locks a data page before a pending page: no data
 * page is read while a pending page is locked). Damaged data pages and free
 * slots are listed by the other passes. Where the slots keep fewer bits than
 * the signatures, each key must be of its band, and with heapallindexed the
 * keys are compared with the heap tuple's signature's.
 */
static void
check_pending_keys(LshChecker *c)
{
	int			nb = c->params.bands;
	Size		nrows = c->pending_keyed.n / (Size) (1 + nb);

	for (Size i = 0; i < nrows; i++)
	{
		const uint32 *rec = c->pending_keyed.data + i * (1 + nb);
		uint32		rowid = rec[0];
		BlockNumber blkno = lsh_rowid_block(&c->params, rowid);
		Buffer		buf;
		Page		page;
		const char *sproblem;
		const LshSlotHeader *slot;
		ItemPointerData tid;
		bool		live;

		if (c->slotstate[rowid] == LSH_SLOT_FREE || c->ptype[blkno] != PT_DATA || c->damaged[blkno])
			continue;
		buf = ReadBuffer(c->index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		slot = lsh_slot_read(c->index, page, &c->params, lsh_rowid_slot(&c->params, rowid), blkno,
							 &sproblem);
		tid = slot->tid;
		live = slot->state == LSH_SLOT_LIVE;
		if (lsh_verifies_exactly(&c->params))
			lsh_slot_band_keys(&c->params, slot, c->keys);
		UnlockReleaseBuffer(buf);
		if (lsh_verifies_exactly(&c->params))
		{
			if (memcmp(c->keys, rec + 1, sizeof(uint32) * nb) != 0)
				problem(c, "pending row id %u: the band keys on its pending page are not its signature's",
						rowid);
		}
		else
		{
			bool		bands_ok = true;

			for (int b = 0; b < nb; b++)
				bands_ok = bands_ok && key_band(&c->params, rec[1 + b]) == (uint32) b;
			if (!bands_ok)
				problem(c, "pending row id %u: the band keys on its pending page are not its signature's",
						rowid);
			else if (c->heapcheck != NULL && sproblem == NULL && live)
			{
				memcpy(c->keys, rec + 1, sizeof(uint32) * nb);
				qsort(c->keys, nb, sizeof(uint32), lsh_uint32_cmp);
				lsh_heapcheck_add_keys(c->heapcheck, &tid, c->keys, nb);
			}
		}
		CHECK_FOR_INTERRUPTS();
	}
	c->pending_keyed.free();
}

static void
check_pending(LshChecker *c)
{
	uint64		seen;

	lsh_pending_check(c->index, &c->meta, c->nrowids, report_problem, pending_row, c, &seen);
	if (seen != c->npending_pages)
		problem(c, "%llu pending list pages, %llu of them on the pending list or its free list",
				(unsigned long long) c->npending_pages, (unsigned long long) seen);
	check_pending_keys(c);
}

/*
 * One pass of every check over c->index, listing problems into the result.
 * The caller has opened the index and its table and taken c->snapshot.
 */
static void
check_index(LshChecker *c, bool heapallindexed)
{
	uint64		nallocated = 0;
	BlockNumber nfreelisted = 0;

	c->nblocks = RelationGetNumberOfBlocks(c->index);
	if (c->nblocks == 0)
		problem(c, "the index has no metapage");
	else if (check_meta(c))
	{
		if (heapallindexed)
			c->heapcheck = lsh_heapcheck_begin(c->heap, c->index, c->snapshot, &c->params);
		c->ptype = (uint8 *) palloc_extended(c->nblocks, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		c->visited = (bool *) palloc_extended(c->nblocks, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		c->damaged = (bool *) palloc_extended(c->nblocks, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		if (c->meta.num_perm > 0)
		{
			/* the pair sorts spill to disk beyond maintenance_work_mem */
			int			sortmem = maintenance_work_mem;

			c->nrowids = (uint64) c->nblocks * c->params.slots_per_page;
			c->slotstate = (uint8 *) palloc_extended(c->nrowids, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
			c->missing = (uint16 *) palloc_extended(c->nrowids * sizeof(uint16), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
			c->keys = (uint32 *) palloc(sizeof(uint32) * c->params.bands);
			c->actual = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
											  sortmem, NULL, TUPLESORT_NONE);
		}
		check_pages(c, &nallocated, &nfreelisted);
		if (c->meta.num_perm > 0)
		{
			check_free_list(c, nfreelisted);
			check_tree(c);
			for (BlockNumber b = LSH_METAPAGE_BLKNO + 1; b < c->nblocks; b++)
			{
				if ((c->ptype[b] == PT_LEAF || c->ptype[b] == PT_INTERNAL) && !c->visited[b])
					problem(c, "block %u: tree page not reachable from the root", b);
			}
			check_pairs(c);
			tuplesort_end(c->actual);
			check_pending(c);
			check_rows(c, nallocated);
		}
		/* also without parameters: then no row may be visible with a signature */
		if (c->heapcheck != NULL)
			lsh_heapcheck_finish(c->heapcheck, report_problem, c);
	}
}

/*
 * Whether WAL replay has changed the index since it had replayed up to
 * start: a page it changed carries the LSN of a later record, and pages it
 * added lie beyond nblocks. Page LSNs only grow, so one read of every page
 * after the passes tells whether any page they read may have changed under
 * them.
 */
static bool
replay_changed_index(Relation index, XLogRecPtr start, BlockNumber nblocks)
{
	BlockNumber now = RelationGetNumberOfBlocks(index);

	if (now != nblocks)
		return true;
	for (BlockNumber blkno = 0; blkno < now; blkno++)
	{
		Buffer		buf = ReadBuffer(index, blkno);
		XLogRecPtr	lsn;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		lsn = PageGetLSN(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		if (lsn > start)
			return true;
	}
	return false;
}

/* checks of an index that replay kept changing, before the check gives up */
#define LSH_CHECK_STANDBY_ATTEMPTS 10

extern "C" Datum
minhash_lsh_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	bool		standby = RecoveryInProgress();
	LOCKMODE	lockmode = standby ? AccessShareLock : ShareLock;
	ReturnSetInfo *rsinfo;
	Relation	index;
	Relation	heap;
	MemoryContext attempt_cxt;
	int			attempt;

	mh_citus_refuse_shell_index(indexoid, "minhash_lsh_check");
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	index = lsh_open_owned(indexoid, lockmode, &heap, "minhash_lsh_check");
	attempt_cxt = AllocSetContextCreate(CurrentMemoryContext, "minhash_lsh_check", ALLOCSET_DEFAULT_SIZES);

	/*
	 * On a primary the ShareLock keeps writers out: one pass. On a hot
	 * standby WAL replay changes the index under the passes (it takes no
	 * relation lock), and pages read before and after a replayed insert,
	 * split or VACUUM disagree: entries naming slots of pages added since
	 * the block count was read, a free list caught half-way. So there the
	 * problems of a pass count only if replay changed nothing in the index
	 * meanwhile; otherwise they are dropped and the check runs again, and
	 * after LSH_CHECK_STANDBY_ATTEMPTS such passes it gives up with an
	 * error rather than list what it cannot tell from damage. A pass that
	 * finds nothing is taken as it is.
	 */
	for (attempt = 1;; attempt++)
	{
		LshChecker	c;
		XLogRecPtr	start = standby ? GetXLogReplayRecPtr(NULL) : InvalidXLogRecPtr;
		MemoryContext old = MemoryContextSwitchTo(attempt_cxt);
		bool		changed;

		memset(&c, 0, sizeof(c));
		c.rsinfo = rsinfo;
		c.cxt = attempt_cxt;
		c.index = index;
		c.heap = heap;
		/*
		 * For heap visibility. A row it sees was written by a statement that
		 * has ended (its transaction committed before the snapshot), and such
		 * a statement held RowExclusiveLock on the index from executor start
		 * to end, so its entries are in. On a standby it is taken before the
		 * passes over the index (entries are replayed before the commit
		 * record), and taken again for each pass.
		 */
		c.snapshot = RegisterSnapshot(standby ? GetLatestSnapshot() : GetTransactionSnapshot());
		check_index(&c, heapallindexed);
		UnregisterSnapshot(c.snapshot);
		changed = standby && c.nproblems > 0 && replay_changed_index(index, start, c.nblocks);
		if (!changed && c.nproblems > LSH_MAX_PROBLEMS)
		{
			Datum		value = CStringGetTextDatum(psprintf("... and %lld more problems",
															 (long long) (c.nproblems - LSH_MAX_PROBLEMS)));
			bool		isnull = false;

			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(attempt_cxt);
		if (!changed)
			break;
		tuplestore_clear(rsinfo->setResult);
		if (attempt == LSH_CHECK_STANDBY_ATTEMPTS)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not check index \"%s\": WAL replay changed it during each of %d checks",
							RelationGetRelationName(index), attempt),
					 errhint("Check it on the primary, or on this standby when replay is quieter.")));
		/* let replay get ahead before the next pass */
		pg_usleep(10000L * attempt);
		CHECK_FOR_INTERRUPTS();
	}
	MemoryContextDelete(attempt_cxt);
	index_close(index, lockmode);
	table_close(heap, AccessShareLock);
	return (Datum) 0;
}
