/*
 * The band tree: the descent from the root to a leaf (through the backend's
 * copy of the internal levels), and the leaves: writing and decoding their
 * two entry formats, and collecting the row ids of a key range.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

#include "core/entry_sort.h"
#include "core/sorted_search.h"

extern "C" {
#include "utils/rel.h"
}

/*
 * Which child of an internal page (its n entries e) to follow for key. Entry
 * i > 0 holds the low key of child i, entry 0 the page's own low key. With
 * leftmost, the leftmost child that may hold key (a run of equal keys may
 * span children: child i-1 may end with the key child i starts with); else
 * the rightmost one, which is where inserts go.
 */
int
lsh_child_search(const LshEntry *e, int n, uint32 key, bool leftmost)
{
	/*
	 * The separators are band keys, spread evenly between the first and the
	 * last: start where key should be (a level of the backend's cached copy
	 * is megabytes at 10M rows, and each bisection step a cache miss).
	 */
	int			g = n > 2 ? 1 + minhash::uniform_guess(key, e[1].key, e[n - 1].key, n - 1) : 1;

	/* first i in [1, n) with e[i].key >= key (leftmost) or > key */
	if (leftmost)
		return minhash::search_from_guess(1, n, g, [e, key](int i) { return e[i].key < key; }) - 1;
	return minhash::search_from_guess(1, n, g, [e, key](int i) { return e[i].key <= key; }) - 1;
}

int
lsh_child_index(Page page, uint32 key, bool leftmost)
{
	return lsh_child_search(LshTreeEntries(page), LshTreeCount(page), key, leftmost);
}

/*
 * A backend-local copy of the internal levels, kept in the index's
 * rd_amcache. Every descent would otherwise read height - 1 shared internal
 * pages per band (the root alone 30 times a query); internal pages change
 * only in a split, and every split bumps the metapage's nsplits, so the copy
 * is valid while nsplits, root and height are unchanged. Pages are numbered
 * in breadth-first order; an entry's value is the child's page number for
 * levels above 1 and the leaf's block at level 1.
 */
typedef struct LshTreeCache
{
	uint64		nsplits;
	BlockNumber root;
	uint16		height;
	int			npages;
	int		   *first;			/* per page: its first entry in entries[] */
	int		   *count;			/* per page: its number of entries */
	LshEntry   *entries;
	int			nentries;
	/*
	 * Per entry (used at level 1): the buffer its leaf was last read in
	 * (LshBufferHint), so that the next scan's read pins it with
	 * ReadRecentBuffer instead of looking the block up in the shared buffer
	 * table (a cache miss or two per band).
	 */
	LshBufferHint *leafhint;
} LshTreeCache;

/* Copies of more internal pages than this (8 MB) are not kept: descend through buffers. */
#define LSH_TREE_CACHE_MAX_PAGES 1024

static Page
lsh_read_internal(LshWalk *w, BlockNumber blkno, int level, Buffer *buf)
{
	Page		page;

	lsh_walk_chain(w);			/* a descent, not a chain: its bound is the level */
	*buf = lsh_walk_read(w, blkno, BUFFER_LOCK_SHARE, LSH_PAGE_INTERNAL, level, NULL,
						 InvalidBlockNumber, &page);
	return page;
}

/*
 * Copy the internal levels into entries (breadth first, one level at a time:
 * the children of a level get the next page numbers), with each page's first
 * entry and count; false if they hold more than LSH_TREE_CACHE_MAX_PAGES
 * pages.
 */
static bool
lsh_copy_internal_levels(Relation index, const LshMetaPageData *meta, LshArray<LshEntry> *entries,
						 int *first, int *count, int *npages)
{
	BlockNumber *blocks = (BlockNumber *) palloc(sizeof(BlockNumber) * LSH_TREE_CACHE_MAX_PAGES);
	int			nblocks = 1;
	int			level_start = 0;
	LshWalk		w;

	lsh_walk_init(&w, index, NULL);
	blocks[0] = meta->root;
	for (int level = meta->height - 1; level >= 1; level--)
	{
		int			level_end = nblocks;

		for (int p = level_start; p < level_end; p++)
		{
			Buffer		buf;
			Page		page = lsh_read_internal(&w, blocks[p], level, &buf);
			int			n = LshTreeCount(page);
			LshEntry   *e;

			if (level > 1 && nblocks + n > LSH_TREE_CACHE_MAX_PAGES)
			{
				UnlockReleaseBuffer(buf);
				pfree(blocks);
				return false;
			}
			first[p] = (int) entries->n;
			count[p] = n;
			e = entries->extend(n);
			memcpy(e, LshTreeEntries(page), sizeof(LshEntry) * n);
			UnlockReleaseBuffer(buf);
			if (level > 1)
			{
				for (int i = 0; i < n; i++)
				{
					blocks[nblocks] = e[i].value;
					e[i].value = nblocks;
					nblocks++;
				}
			}
		}
		level_start = level_end;
	}
	pfree(blocks);
	*npages = nblocks;
	return true;
}

/*
 * Build the copy, as one allocation in the index's relcache memory (the
 * relcache frees rd_amcache with a single pfree). NULL if the tree has too
 * many internal pages. The caller holds the metapage lock.
 */
static LshTreeCache *
lsh_build_tree_cache(Relation index, const LshMetaPageData *meta)
{
	int		   *first = (int *) palloc(sizeof(int) * LSH_TREE_CACHE_MAX_PAGES);
	int		   *count = (int *) palloc(sizeof(int) * LSH_TREE_CACHE_MAX_PAGES);
	LshArray<LshEntry> entries = {};
	int			npages = 0;
	LshTreeCache *cache = NULL;

	if (lsh_copy_internal_levels(index, meta, &entries, first, count, &npages))
	{
		char	   *mem = (char *) MemoryContextAlloc(index->rd_indexcxt,
													  MAXALIGN(sizeof(LshTreeCache)) +
													  MAXALIGN(sizeof(int) * npages) * 2 +
													  MAXALIGN(sizeof(LshEntry) * entries.n) +
													  sizeof(LshBufferHint) * entries.n);

		cache = (LshTreeCache *) mem;
		mem += MAXALIGN(sizeof(LshTreeCache));
		cache->first = (int *) mem;
		mem += MAXALIGN(sizeof(int) * npages);
		cache->count = (int *) mem;
		mem += MAXALIGN(sizeof(int) * npages);
		cache->entries = (LshEntry *) mem;
		mem += MAXALIGN(sizeof(LshEntry) * entries.n);
		cache->leafhint = (LshBufferHint *) mem;
		cache->nentries = (int) entries.n;
		memset(cache->leafhint, 0, sizeof(LshBufferHint) * entries.n);
		memcpy(cache->first, first, sizeof(int) * npages);
		memcpy(cache->count, count, sizeof(int) * npages);
		if (entries.n > 0)
			memcpy(cache->entries, entries.data, sizeof(LshEntry) * entries.n);
		cache->nsplits = meta->nsplits;
		cache->root = meta->root;
		cache->height = meta->height;
		cache->npages = npages;
	}
	pfree(first);
	pfree(count);
	entries.free();
	return cache;
}

/*
 * A descent's leaf: an entry naming no block would end the caller's range
 * cursor at once, as in an empty tree, and its keys would silently be
 * missing. Other blocks are checked when the leaf is read.
 */
static BlockNumber
lsh_leaf_child(Relation index, const LshMetaPageData *meta, BlockNumber blkno)
{
	if (blkno == InvalidBlockNumber)
		lsh_corrupted(index, "internal page entry without a child block, in the tree under the root",
					  meta->root);
	return blkno;
}

/*
 * Descend from the root to the leaf for key. The caller holds the metapage
 * lock (share at least), so internal pages cannot change under us. *low is
 * the leaf's low key as its parent records it (the separator), which the
 * caller checks against the leaf (lsh_walk's check_low); *has_low is false
 * when the root is the leaf.
 */
static BlockNumber find_leaf(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost,
							 bool may_copy, bool *has_low, uint32 *low, int *hint);

BlockNumber
lsh_find_leaf_low(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost,
				  bool *has_low, uint32 *low)
{
	int			hint;

	return lsh_find_leaf_hinted(index, meta, key, leftmost, has_low, low, &hint);
}

/*
 * The same; *hint is where the cached descent ended (for lsh_leaf_hint), -1
 * when it went through the buffers.
 */
BlockNumber
lsh_find_leaf_hinted(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost,
					 bool *has_low, uint32 *low, int *hint)
{
	return find_leaf(index, meta, key, leftmost, true, has_low, low, hint);
}

/*
 * lsh_find_leaf_low, except that a stale copy of the internal levels is not
 * rebuilt: the descent reads the internal pages instead. For a merge, which
 * splits leaves between its descents; each split would otherwise make the
 * next descent copy every internal page again.
 */
BlockNumber
lsh_find_leaf_keep_copy(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost,
						bool *has_low, uint32 *low)
{
	int			hint;

	return find_leaf(index, meta, key, leftmost, false, has_low, low, &hint);
}

static BlockNumber
find_leaf(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost, bool may_copy,
		  bool *has_low, uint32 *low, int *hint)
{
	LshTreeCache *cache = (LshTreeCache *) index->rd_amcache;
	BlockNumber blkno = meta->root;
	LshWalk		w;

	*has_low = false;
	*low = 0;
	*hint = -1;
	if (meta->height <= 1)
		return blkno;
	if (cache == NULL || cache->nsplits != meta->nsplits || cache->root != meta->root ||
		cache->height != meta->height)
	{
		if (!may_copy)
			cache = NULL;
		else
		{
			if (cache != NULL)
				pfree(cache);
			index->rd_amcache = NULL;
			cache = lsh_build_tree_cache(index, meta);
			index->rd_amcache = cache;
		}
	}
	*has_low = true;
	if (cache != NULL)
	{
		int			p = 0;

		for (int level = meta->height - 1; level >= 1; level--)
		{
			const LshEntry *e = cache->entries + cache->first[p];
			const LshEntry *child = &e[lsh_child_search(e, cache->count[p], key, leftmost)];

			if (level == 1)
			{
				*low = child->key;
				*hint = (int) (child - cache->entries);
				return lsh_leaf_child(index, meta, child->value);
			}
			p = (int) child->value;
		}
	}

	/* too large to copy: through the buffers, locking each page while read */
	lsh_walk_init(&w, index, NULL);
	for (int level = meta->height - 1; level > 0; level--)
	{
		Buffer		buf;
		Page		page = lsh_read_internal(&w, blkno, level, &buf);
		const LshEntry *child = &LshTreeEntries(page)[lsh_child_index(page, key, leftmost)];

		blkno = child->value;
		*low = child->key;
		UnlockReleaseBuffer(buf);
	}
	return lsh_leaf_child(index, meta, blkno);
}

/*
 * The buffer hint of the leaf at position hint of the cached levels, as
 * lsh_find_leaf_hinted gave it (NULL if none). The cache may have been
 * rebuilt since (a split): then the position names another leaf's hint or
 * none, and the hint is merely for another block, which the hint's block
 * number tells.
 */
LshBufferHint *
lsh_leaf_hint(Relation index, int hint)
{
	LshTreeCache *cache = (LshTreeCache *) index->rd_amcache;

	if (cache == NULL || hint < 0 || hint >= cache->nentries)
		return NULL;
	return &cache->leafhint[hint];
}

/*
 * The buffer hint of the leaf at position hint of the cached levels if that
 * position names block blkno in the current copy, else NULL. The cached
 * leaf-parent level holds every leaf in key order, so position hint + 1 is
 * the right sibling of the leaf at hint while the tree has not split: a
 * reader going right along the leaves (minhash_match) pins each through its
 * hint instead of looking it up in the shared buffer table.
 */
LshBufferHint *
lsh_leaf_hint_for(Relation index, int hint, BlockNumber blkno)
{
	LshTreeCache *cache = (LshTreeCache *) index->rd_amcache;

	if (cache == NULL || hint < 0 || hint >= cache->nentries || cache->entries[hint].value != blkno)
		return NULL;
	return &cache->leafhint[hint];
}

/* Ask for the line of that hint ahead of reading it (a miss at 10M rows). */
void
lsh_leaf_hint_prefetch(Relation index, int hint)
{
	LshTreeCache *cache = (LshTreeCache *) index->rd_amcache;

	if (cache != NULL && hint >= 0 && hint < cache->nentries)
		lsh_prefetch_address(&cache->leafhint[hint]);
}

BlockNumber
lsh_find_leaf(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost)
{
	bool		has_low;
	uint32		low;

	return lsh_find_leaf_low(index, meta, key, leftmost, &has_low, &low);
}

/*
 * Write n entries into a leaf whose low key, high key and HAS_HIGH flag are
 * set, choosing the narrow format when the leaf's key range allows it.
 * Returns false (page untouched) if the entries do not fit.
 */
bool
lsh_leaf_write(Page page, const LshEntry *entries, int n)
{
	LshPageOpaque opaque = LshPageGetOpaque(page);
	uint32		high = (opaque->flags & LSH_HAS_HIGH) ? opaque->high : PG_UINT32_MAX;
	bool		narrow = high - opaque->low <= LSH_NARROW_RANGE &&
		n <= (int) (LSH_CONTENT_SIZE / LSH_NARROW_ENTRY_SIZE);

	if (!narrow && n > (int) (LSH_CONTENT_SIZE / LSH_WIDE_ENTRY_SIZE))
		return false;
	int			sorted = n > 0 ? 1 : 0;

	if (narrow)
		opaque->flags |= LSH_NARROW;
	else
		opaque->flags &= ~LSH_NARROW;
	minhash::lsh_layout::put_entries((uint8 *) page + LSH_CONTENT_START, entries, n, narrow, opaque->low);
	((PageHeader) page)->pd_lower = LSH_CONTENT_START + n * (narrow ? LSH_NARROW_ENTRY_SIZE : LSH_WIDE_ENTRY_SIZE);
	/* the leading entries in key order: all of them when the caller sorted them */
	while (sorted < n && entries[sorted - 1].key <= entries[sorted].key)
		sorted++;
	opaque->count = (uint16) sorted;
	return true;
}

/* All entries of a leaf, decoded into out (room for lsh_leaf_count entries). */
int
lsh_leaf_decode(Page page, LshEntry *out)
{
	int			n = lsh_leaf_count(page);

	minhash::lsh_layout::get_entries((const uint8 *) page + LSH_CONTENT_START, n,
									 (LshPageGetOpaque(page)->flags & LSH_NARROW) != 0,
									 LshPageGetOpaque(page)->low, out);
	return n;
}

/*
 * Sort entries by key, then row id: the one sort of band entries
 * (core/entry_sort.h), for a leaf rewritten whole (VACUUM, a split), the
 * pairs walk's copy of a leaf and the pending list's entries. The scratch
 * space of up to a leaf's entries is on the stack.
 */
void
lsh_sort_entries(LshEntry *e, Size n)
{
	LshEntry	local[LSH_CONTENT_SIZE / LSH_NARROW_ENTRY_SIZE + 1];
	LshEntry   *scratch = local;

	if (n > lengthof(local))
		scratch = (LshEntry *) palloc_extended(sizeof(LshEntry) * n, MCXT_ALLOC_HUGE);
	minhash::sort_entries(e, n, scratch);
	if (scratch != local)
		pfree(scratch);
}

int
lsh_uint32_cmp(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}


/*
 * Where a key of a leaf's sorted prefix is likely to be: band keys are
 * uniform over the leaf's key range, so its entries spread evenly over it.
 * Clamped to [0, sorted - 1] (sorted > 0).
 */
int
lsh_leaf_guess(Page page, int sorted, uint32 key)
{
	LshPageOpaque opaque = LshPageGetOpaque(page);

	return minhash::uniform_guess(key, opaque->low,
								  (opaque->flags & LSH_HAS_HIGH) ? opaque->high : PG_UINT32_MAX, sorted);
}

/*
 * The first of the leaf's `sorted` leading entries with key >= lo (sorted
 * if none): from the guessed position, steps doubling until they pass lo,
 * then a binary search between the last two -- a few cache lines of the
 * page instead of a binary search's ten.
 */
static int
lsh_leaf_lower_bound(Page page, int sorted, uint32 lo)
{
	return minhash::search_from_guess(0, sorted, sorted > 0 ? lsh_leaf_guess(page, sorted, lo) : 0,
									  [page, lo](int i) { return lsh_leaf_key(page, i) < lo; });
}

/*
 * Append to ids the row ids of the leaf's entries with keys in [lo, hi]:
 * a search in the first `sorted` entries (in key order, lsh_leaf_sorted),
 * then a look at every entry appended after them. Narrow
 * entries of the tail are compared on their 3 stored bytes (key - low) with
 * the range's offsets, without decoding the keys. The ids come in the
 * leaf's order either way.
 */
void
lsh_leaf_collect(Page page, int sorted, uint32 lo, uint32 hi, LshArray<uint32> *ids)
{
	LshPageOpaque opaque = LshPageGetOpaque(page);
	int			n = lsh_leaf_count(page);
	uint32		off_lo;
	uint32		off_span;
	const uint8 *p = (const uint8 *) page + LSH_CONTENT_START;
	int			first;

	sorted = Min(sorted, n);
	first = lsh_leaf_lower_bound(page, sorted, lo);
	/* the run of sorted entries up to hi */
	for (int i = first; i < sorted; i++)
	{
		if (lsh_leaf_key(page, i) > hi)
			break;
		ids->push(lsh_leaf_rowid(page, i));
	}
	if (sorted >= n)
		return;

	if (!(opaque->flags & LSH_NARROW))
	{
		const LshEntry *e = (const LshEntry *) p;

		if (lo == hi)
		{
			for (int i = sorted; i < n; i++)
			{
				if (e[i].key == lo)
					ids->push(e[i].value);
			}
		}
		else
		{
			for (int i = sorted; i < n; i++)
			{
				if (e[i].key - lo <= hi - lo)
					ids->push(e[i].value);
			}
		}
		return;
	}
	if (lo == hi)
	{
		/* whole bands (the design depth): as 1.0 did, equality on the 3 stored bytes */
		if (lo - opaque->low > LSH_NARROW_RANGE)
			return;
		off_lo = lo - opaque->low;
		off_span = 0;
	}
	else
	{
		if (hi < opaque->low || (lo > opaque->low && lo - opaque->low > LSH_NARROW_RANGE))
			return;
		off_lo = lo <= opaque->low ? 0 : lo - opaque->low;
		off_span = Min(hi - opaque->low, (uint32) LSH_NARROW_RANGE) - off_lo;
	}
	p += (Size) sorted * LSH_NARROW_ENTRY_SIZE;
	for (int i = sorted; i < n; i++, p += LSH_NARROW_ENTRY_SIZE)
	{
#ifndef WORDS_BIGENDIAN
		uint32		w;

		/* one 4-byte load: the 4th byte (the row id's first) is masked off */
		memcpy(&w, p, sizeof(w));
		if ((w & 0xFFFFFF) - off_lo <= off_span)
#else
		if ((p[0] | ((uint32) p[1] << 8) | ((uint32) p[2] << 16)) - off_lo <= off_span)
#endif
			ids->push(lsh_leaf_rowid(page, i));
	}
}
