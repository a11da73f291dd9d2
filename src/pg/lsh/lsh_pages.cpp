/*
 * Page-level utilities of the lsh index: page and metapage initialisation,
 * the index parameters, row ids, band keys and the tree descent.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

#include <cmath>

#include "core/hash.h"
#include "core/lsh_params.h"
#include "core/signature.h"

extern "C" {
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"
}

int
lsh_slots_per_page(int num_perm)
{
	return (int) (LSH_CONTENT_SIZE / LSH_SLOT_SIZE(num_perm));
}

void
lsh_init_page(Page page, uint16 type, uint16 level)
{
	LshPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(LshPageOpaqueData));
	opaque = LshPageGetOpaque(page);
	opaque->low = 0;
	opaque->high = 0;
	opaque->next = InvalidBlockNumber;
	opaque->count = 0;
	opaque->level = level;
	opaque->flags = type;
	opaque->page_id = LSH_PAGE_ID;
}

void
lsh_init_metapage(Page page, const LshOptions *opts)
{
	LshMetaPage meta;

	lsh_init_page(page, LSH_PAGE_META, 0);
	meta = LshPageGetMeta(page);
	memset(meta, 0, sizeof(LshMetaPageData));
	meta->magic = LSH_MAGIC;
	meta->version = LSH_VERSION;
	meta->root = InvalidBlockNumber;
	meta->leftmost = InvalidBlockNumber;
	meta->free_head = InvalidBlockNumber;
	meta->pending_head = InvalidBlockNumber;
	meta->pending_tail = InvalidBlockNumber;
	meta->pending_free = InvalidBlockNumber;
	meta->merge_upto = InvalidBlockNumber;
	meta->opt_threshold = opts ? opts->threshold : -1;
	meta->opt_bands = opts ? opts->bands : 0;
	meta->opt_rows = opts ? opts->rows : 0;
	meta->opt_fp_weight = opts ? opts->fp_weight : -1;
	meta->opt_fn_weight = opts ? opts->fn_weight : -1;
	/* GenericXLog zeroes what lies between pd_lower and pd_upper */
	((PageHeader) page)->pd_lower = ((char *) meta + sizeof(LshMetaPageData)) - (char *) page;
}

/*
 * A new page at the end of the index, returned pinned and exclusively locked.
 * Pages are never freed (leaves do not merge; data slots are reused), so there
 * is nothing to recycle.
 */
Buffer
lsh_new_buffer(Relation index)
{
	bool		need_lock = !RELATION_IS_LOCAL(index);
	Buffer		buf;

	if (need_lock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (need_lock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

void
lsh_meta_params(const LshMetaPageData *meta, LshIndexParams *params)
{
	params->num_perm = meta->num_perm;
	params->seed = meta->seed;
	params->family = meta->family;
	params->bands = meta->bands;
	params->rows = meta->rows;
	params->slots_per_page = meta->slots_per_page;
	params->version = meta->version;
	if (meta->num_perm > 0)
		params->layout = minhash::prefix_layout(meta->bands, meta->rows);
	else
		memset(&params->layout, 0, sizeof(params->layout));
}

/*
 * Fix the index's parameters once k is known: from explicit bands and rows, or
 * from the threshold (default 0.5) through the core's optimiser.
 */
void
lsh_resolve_params(LshMetaPage meta, int num_perm, uint64 seed, int family)
{
	int			bands;
	int			rows;
	double		threshold;

	if (num_perm < minhash::kMinNumPerm || num_perm > minhash::kMaxNumPerm)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_perm %d is out of range for an lsh index", num_perm)));
	if (meta->opt_bands > 0)
	{
		bands = meta->opt_bands;
		rows = meta->opt_rows;
		if ((int64) bands * rows > num_perm)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lsh options bands * rows must not exceed num_perm"),
					 errdetail("bands = %d, rows = %d, but the signatures have num_perm = %d.",
							   bands, rows, num_perm),
					 errhint("Choose bands and rows with bands * rows <= %d, or give a threshold.",
							 num_perm)));
		threshold = pow(1.0 / bands, 1.0 / rows);
	}
	else
	{
		double		fp = meta->opt_fp_weight >= 0 ? meta->opt_fp_weight : LSH_DEFAULT_FP_WEIGHT;
		double		fn = meta->opt_fn_weight >= 0 ? meta->opt_fn_weight : LSH_DEFAULT_FN_WEIGHT;
		minhash::LshParams p;

		threshold = meta->opt_threshold > 0 ? meta->opt_threshold : 0.5;
		p = minhash::choose_lsh_params(threshold, num_perm, fp, fn);
		bands = p.bands;
		rows = p.rows;
		if (bands < 1 || rows < 1 || (int64) bands * rows > num_perm)
			elog(ERROR, "band optimiser returned bands = %d, rows = %d for num_perm = %d",
				 bands, rows, num_perm);
	}
	meta->num_perm = (uint16) num_perm;
	meta->seed = seed;
	meta->family = (uint16) family;
	meta->bands = (uint16) bands;
	meta->rows = (uint16) rows;
	meta->threshold = threshold;
	meta->slots_per_page = (uint16) lsh_slots_per_page(num_perm);
}

void
lsh_check_signature(Relation index, const LshIndexParams *params, const MinHashSig *sig,
					const char *what)
{
	if (MinHashSigFamily(sig) != params->family)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s does not match lsh index \"%s\"", what, RelationGetRelationName(index)),
				 errdetail("The index holds %s signatures; this one is a %s signature.",
						   minhash_family_name(params->family),
						   minhash_family_name(MinHashSigFamily(sig))),
				 errhint("Signatures are comparable only when built with the same hash family, num_perm and seed.")));
	if (sig->num_perm != params->num_perm || sig->seed != params->seed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s does not match lsh index \"%s\"", what, RelationGetRelationName(index)),
				 errdetail("The index holds signatures with num_perm = %d and seed = %lld; "
						   "this one has num_perm = %d and seed = %lld.",
						   params->num_perm, (long long) params->seed,
						   (int) sig->num_perm, (long long) sig->seed)));
}

/*
 * The 32-bit key of each band.
 *
 * Version 2: the prefix-preserving key (core/lsh_prefix.h): band number in the
 * top bits, then a few bits of each of the band's values in order, so that
 * rows agreeing with a query on the first m values of a band lie in one key
 * range. Rows sharing a band share its key; unrelated bands collide with
 * probability 2^-(32 - band bits), and such a false candidate is discarded by
 * verification.
 *
 * Version 1 (minhash 1.0): the band hash (seeded with the band number, so
 * equal values in different bands do not meet) folded to 32 bits.
 */
void
lsh_band_keys(const LshIndexParams *params, const uint32 *values, uint32 *keys)
{
	if (params->version != LSH_VERSION_EXACT)
	{
		for (int b = 0; b < params->bands; b++)
			keys[b] = minhash::prefix_band_key(params->layout, values + (Size) b * params->rows, b);
		return;
	}
	for (int b = 0; b < params->bands; b++)
	{
		uint64		h = minhash::band_hash(values + (Size) b * params->rows, params->rows, b);

		keys[b] = (uint32) (h ^ (h >> 32));
	}
}

uint32
lsh_rowid(const LshIndexParams *params, BlockNumber blkno, int slot)
{
	uint64		id = (uint64) blkno * params->slots_per_page + slot;

	if (id > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("lsh index is too large: row ids are 32 bits"),
				 errdetail("Data block %u, slot %d.", blkno, slot)));
	return (uint32) id;
}

BlockNumber
lsh_rowid_block(const LshIndexParams *params, uint32 rowid)
{
	return rowid / params->slots_per_page;
}

int
lsh_rowid_slot(const LshIndexParams *params, uint32 rowid)
{
	return (int) (rowid % params->slots_per_page);
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
	int			lo = 1;
	int			hi = n;

	/* first i in [1, n) with e[i].key >= key (leftmost) or > key */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (leftmost ? e[mid].key < key : e[mid].key <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
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
 * Build the copy, as one allocation in the index's relcache memory (the
 * relcache frees rd_amcache with a single pfree). NULL if the tree has too
 * many internal pages. The caller holds the metapage lock.
 */
static LshTreeCache *
lsh_build_tree_cache(Relation index, const LshMetaPageData *meta)
{
	BlockNumber *blocks = (BlockNumber *) palloc(sizeof(BlockNumber) * LSH_TREE_CACHE_MAX_PAGES);
	int		   *first = (int *) palloc(sizeof(int) * LSH_TREE_CACHE_MAX_PAGES);
	int		   *count = (int *) palloc(sizeof(int) * LSH_TREE_CACHE_MAX_PAGES);
	int			capentries = 1024;
	LshEntry   *entries = (LshEntry *) palloc(sizeof(LshEntry) * capentries);
	int			nblocks = 1;
	int			nentries = 0;
	int			level_start = 0;
	LshTreeCache *cache = NULL;
	char	   *mem;
	LshWalk		w;

	lsh_walk_init(&w, index, NULL);

	/* breadth first, one level at a time: children of a level get the next numbers */
	blocks[0] = meta->root;
	for (int level = meta->height - 1; level >= 1; level--)
	{
		int			level_end = nblocks;

		for (int p = level_start; p < level_end; p++)
		{
			Buffer		buf;
			Page		page = lsh_read_internal(&w, blocks[p], level, &buf);
			int			n = LshTreeCount(page);

			if (level > 1 && nblocks + n > LSH_TREE_CACHE_MAX_PAGES)
			{
				UnlockReleaseBuffer(buf);
				goto done;
			}
			if (nentries + n > capentries)
			{
				capentries = Max(capentries * 2, nentries + n);
				entries = (LshEntry *) repalloc(entries, sizeof(LshEntry) * capentries);
			}
			first[p] = nentries;
			count[p] = n;
			memcpy(entries + nentries, LshTreeEntries(page), sizeof(LshEntry) * n);
			UnlockReleaseBuffer(buf);
			if (level > 1)
			{
				for (int i = 0; i < n; i++)
				{
					blocks[nblocks] = entries[nentries + i].value;
					entries[nentries + i].value = nblocks;
					nblocks++;
				}
			}
			nentries += n;
		}
		level_start = level_end;
	}

	mem = (char *) MemoryContextAlloc(index->rd_indexcxt,
									  MAXALIGN(sizeof(LshTreeCache)) +
									  MAXALIGN(sizeof(int) * nblocks) * 2 +
									  sizeof(LshEntry) * nentries);
	cache = (LshTreeCache *) mem;
	mem += MAXALIGN(sizeof(LshTreeCache));
	cache->first = (int *) mem;
	mem += MAXALIGN(sizeof(int) * nblocks);
	cache->count = (int *) mem;
	mem += MAXALIGN(sizeof(int) * nblocks);
	cache->entries = (LshEntry *) mem;
	memcpy(cache->first, first, sizeof(int) * nblocks);
	memcpy(cache->count, count, sizeof(int) * nblocks);
	memcpy(cache->entries, entries, sizeof(LshEntry) * nentries);
	cache->nsplits = meta->nsplits;
	cache->root = meta->root;
	cache->height = meta->height;
	cache->npages = nblocks;
done:
	pfree(blocks);
	pfree(first);
	pfree(count);
	pfree(entries);
	return cache;
}

/*
 * Descend from the root to the leaf for key. The caller holds the metapage
 * lock (share at least), so internal pages cannot change under us. *low is
 * the leaf's low key as its parent records it (the separator), which the
 * caller checks against the leaf (lsh_walk's check_low); *has_low is false
 * when the root is the leaf.
 */
BlockNumber
lsh_find_leaf_low(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost,
				  bool *has_low, uint32 *low)
{
	LshTreeCache *cache = (LshTreeCache *) index->rd_amcache;
	BlockNumber blkno = meta->root;
	LshWalk		w;

	*has_low = false;
	*low = 0;
	if (meta->height <= 1)
		return blkno;
	if (cache == NULL || cache->nsplits != meta->nsplits || cache->root != meta->root ||
		cache->height != meta->height)
	{
		if (cache != NULL)
			pfree(cache);
		index->rd_amcache = NULL;
		cache = lsh_build_tree_cache(index, meta);
		index->rd_amcache = cache;
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
				return child->value;
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
	return blkno;
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
	if (narrow)
		opaque->flags |= LSH_NARROW;
	else
		opaque->flags &= ~LSH_NARROW;
	((PageHeader) page)->pd_lower = LSH_CONTENT_START;
	for (int i = 0; i < n; i++)
		lsh_leaf_append(page, entries[i].key, entries[i].value);
	return true;
}

/* All entries of a leaf, decoded into out (room for lsh_leaf_count entries). */
int
lsh_leaf_decode(Page page, LshEntry *out)
{
	int			n = lsh_leaf_count(page);

	for (int i = 0; i < n; i++)
	{
		out[i].key = lsh_leaf_key(page, i);
		out[i].value = lsh_leaf_rowid(page, i);
	}
	return n;
}

int
lsh_entry_cmp(const void *a, const void *b)
{
	const LshEntry *x = (const LshEntry *) a;
	const LshEntry *y = (const LshEntry *) b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return 0;
}

int
lsh_uint32_cmp(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * A version-1 index (built by minhash 1.0) probes whole bands only. Say so,
 * once per index per backend, when a scan or pairs run would have probed
 * shorter prefixes: its recall below the design threshold, and ORDER BY
 * ... LIMIT beyond the rows sharing a band, are 1.0's until REINDEX.
 */
void
lsh_notice_format1(Relation index)
{
	static Oid	notified[16];
	static int	nnotified = 0;

	for (int i = 0; i < nnotified; i++)
	{
		if (notified[i] == RelationGetRelid(index))
			return;
	}
	if (nnotified < (int) lengthof(notified))
		notified[nnotified++] = RelationGetRelid(index);
	ereport(NOTICE,
			(errmsg("lsh index \"%s\" was built by minhash 1.0 and matches whole bands only",
					RelationGetRelationName(index)),
			 errdetail("Its recall below its design threshold, and ORDER BY <%%> LIMIT beyond the rows sharing a band, are those of 1.0."),
			 errhint("REINDEX INDEX %s to probe band prefixes.",
					 quote_identifier(RelationGetRelationName(index)))));
}
