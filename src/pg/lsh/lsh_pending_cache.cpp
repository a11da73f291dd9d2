/*
 * A backend's sorted copy of an lsh index's pending list (lsh_pending_cache.h).
 */
#include "pg/pg_prelude.h"

#include <algorithm>

#include "pg/lsh/lsh_pending_cache.h"

extern "C" {
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
}

/* indexes whose lists a backend keeps at once; the least recently used goes */
#define LSH_PENDING_CACHE_SLOTS	4
/* smaller lists cost a scan little to filter */
#define LSH_PENDING_CACHE_MIN_ROWS	256
/*
 * Rows filtered one by one, in lists, before the copy is built: a row costs
 * a scan 5-10 ns to filter (30 keys) and the copy about 0.5-1 us to build
 * (copy and sort its keys), so building after 64 lists' worth of filtering
 * spends at most about what was spent (the rent-or-buy rule).
 */
#define LSH_PENDING_CACHE_RENT		64

struct LshPendingCache
{
	Oid			relid;			/* InvalidOid: a free slot */
	Oid			relfilenode;
	uint32		merges;			/* the metapage's pending_merges ... */
	BlockNumber head;			/* ... and pending_head when the entry began */
	uint64		filtered;		/* rows filtered one by one since it began or was built */
	uint64		used;			/* last use, for eviction */
	bool		built;
	int			bands;
	uint64		rows;			/* rows copied: the list's first rows */
	BlockNumber last;			/* the last page copied and the rows read on it */
	int			last_count;
	uint32		nkeyed;			/* rows with keys: each band's slice of entries has nkeyed */
	LshEntry   *entries;		/* bands slices, each sorted by key (value: row id) */
	LshArray<uint32> keyed;		/* while building: row id and band keys of each keyed row */
	LshArray<uint32> plain;		/* row ids of plain pages' rows: every one is a candidate */
	MemoryContext cxt;
};

static LshPendingCache caches[LSH_PENDING_CACHE_SLOTS];
static uint64 cache_clock;

/* empty the entry's copy and counts, keeping its identity */
static void
cache_reset(LshPendingCache *c)
{
	if (c->cxt != NULL)
		MemoryContextReset(c->cxt);
	c->filtered = 0;
	c->built = false;
	c->bands = 0;
	c->rows = 0;
	c->last = InvalidBlockNumber;
	c->last_count = 0;
	c->nkeyed = 0;
	c->entries = NULL;
	c->keyed = {};
	c->plain = {};
}

LshPendingCache *
lsh_pending_cache_for(Relation index, const LshMetaPageData *meta)
{
	LshPendingCache *c = NULL;
	Oid			relfilenode = index->rd_rel->relfilenode;

	for (int i = 0; i < LSH_PENDING_CACHE_SLOTS && c == NULL; i++)
		if (caches[i].relid == RelationGetRelid(index) && caches[i].relfilenode == relfilenode)
			c = &caches[i];
	if (c == NULL)
	{
		c = &caches[0];
		for (int i = 1; i < LSH_PENDING_CACHE_SLOTS; i++)
			if (caches[i].used < c->used)
				c = &caches[i];
		if (c->cxt == NULL)
			c->cxt = AllocSetContextCreate(TopMemoryContext, "lsh pending list copy",
										   ALLOCSET_DEFAULT_SIZES);
		cache_reset(c);
		c->relid = RelationGetRelid(index);
		c->relfilenode = relfilenode;
		c->merges = meta->pending_merges;
		c->head = meta->pending_head;
	}
	else if (c->merges != meta->pending_merges || c->head != meta->pending_head ||
			 (c->built && meta->pending_rows < c->rows))
	{
		/* merged since (or rows gone without a merge: never trust the copy then) */
		cache_reset(c);
		c->merges = meta->pending_merges;
		c->head = meta->pending_head;
	}
	c->used = ++cache_clock;
	return c;
}

bool
lsh_pending_cache_built(const LshPendingCache *c, const LshIndexParams *params)
{
	return c->built && c->bands == params->bands;
}

uint64
lsh_pending_cache_rows(const LshPendingCache *c)
{
	return c->rows;
}

BlockNumber
lsh_pending_cache_last(const LshPendingCache *c, int *last_count)
{
	*last_count = c->last_count;
	return c->last;
}

void
lsh_pending_cache_count(LshPendingCache *c, uint64 rows)
{
	c->filtered += rows;
}

bool
lsh_pending_cache_should_build(const LshPendingCache *c, const LshMetaPageData *meta,
							   const LshIndexParams *params)
{
	uint64		rows = meta->pending_rows;

	return !c->built && rows >= LSH_PENDING_CACHE_MIN_ROWS &&
		c->filtered >= LSH_PENDING_CACHE_RENT * rows &&
		rows * (uint64) (params->bands + 1) * sizeof(LshEntry) <= (uint64) work_mem * 1024;
}

void
lsh_pending_cache_begin(LshPendingCache *c, const LshIndexParams *params)
{
	cache_reset(c);
	c->bands = params->bands;
}

void
lsh_pending_cache_add(LshPendingCache *c, Page page, BlockNumber blkno)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(c->cxt);
	int			n = lsh_pending_count(page);
	int			words = lsh_pending_row_words(page);

	if (LshPageGetOpaque(page)->flags & LSH_PENDING_KEYED)
		memcpy(c->keyed.extend((Size) n * words), lsh_pending_row(page, 0), sizeof(uint32) * n * words);
	else
		for (int i = 0; i < n; i++)
			c->plain.push(lsh_pending_row(page, i)[0]);
	MemoryContextSwitchTo(oldcxt);
	c->rows += n;
	c->last = blkno;
	c->last_count = n;
}

void
lsh_pending_cache_finish(LshPendingCache *c)
{
	int			words = 1 + c->bands;
	Size		nkeyed = c->keyed.n / words;

	c->nkeyed = (uint32) nkeyed;
	c->entries = (LshEntry *) MemoryContextAllocHuge(c->cxt, sizeof(LshEntry) * Max(nkeyed * c->bands, 1));
	for (int b = 0; b < c->bands; b++)
	{
		LshEntry   *slice = c->entries + (Size) b * nkeyed;

		for (Size i = 0; i < nkeyed; i++)
		{
			slice[i].key = c->keyed.data[i * words + 1 + b];
			slice[i].value = c->keyed.data[i * words];
		}
		lsh_sort_entries(slice, nkeyed);
		CHECK_FOR_INTERRUPTS();
	}
	c->keyed.free();
	c->filtered = 0;
	c->built = true;
}

void
lsh_pending_cache_probe(const LshPendingCache *c, const uint32 *lo, const uint32 *hi, LshArray<uint32> *ids)
{
	for (int b = 0; b < c->bands; b++)
	{
		const LshEntry *slice = c->entries + (Size) b * c->nkeyed;
		const LshEntry *end = slice + c->nkeyed;
		const LshEntry *e = std::lower_bound(slice, end, lo[b],
											 [](const LshEntry &x, uint32 k) { return x.key < k; });

		for (; e < end && e->key <= hi[b]; e++)
			ids->push(e->value);
	}
	if (c->plain.n > 0)
		memcpy(ids->extend(c->plain.n), c->plain.data, sizeof(uint32) * c->plain.n);
}

void
lsh_pending_cache_forget(LshPendingCache *c)
{
	cache_reset(c);
}
