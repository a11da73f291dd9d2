/*
 * A backend's copy of an lsh index's pending list (lsh_pending_cache.h).
 */
#include "pg/pg_prelude.h"

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
 * a scan 5-10 ns to filter (30 keys, with the page reads) and the copy about
 * 0.1-0.2 us to build (two passes over its keys), so building after 16
 * lists' worth of filtering spends at most about what was spent (the
 * rent-or-buy rule).
 */
#define LSH_PENDING_CACHE_RENT		16

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
	BlockNumber last;			/* the last page copied, the rows read on it */
	int			last_count;
	uint32		last_rowid;		/* and the row id of the last of them */
	uint32		first_rowid;	/* the row id of the list's first row */
	uint32		nkeyed;			/* rows with keys: each band's slice of entries has nkeyed */
	int			shift;			/* a key's bucket: key >> shift, of 2^(32 - shift) a band */
	LshEntry   *entries;		/* bands slices of nkeyed (value: row id), each by bucket */
	uint32	   *starts;			/* each band's bucket starts in its slice, and its end */
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
	c->last_rowid = 0;
	c->first_rowid = 0;
	c->nkeyed = 0;
	c->shift = 32;
	c->entries = NULL;
	c->starts = NULL;
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

uint32
lsh_pending_cache_first(const LshPendingCache *c)
{
	return c->first_rowid;
}

BlockNumber
lsh_pending_cache_last(const LshPendingCache *c, int *last_count, uint32 *last_rowid)
{
	*last_count = c->last_count;
	*last_rowid = c->last_rowid;
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
		rows * (uint64) params->bands * (sizeof(LshEntry) + 2 * sizeof(uint32)) + rows * sizeof(uint32) <=
		(uint64) work_mem * 1024;
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
	if (c->rows == 0 && n > 0)
		c->first_rowid = lsh_pending_row(page, 0)[0];
	c->rows += n;
	if (n > 0)
	{
		c->last = blkno;
		c->last_count = n;
		c->last_rowid = lsh_pending_row(page, n - 1)[0];
	}
}

/*
 * Each band's keys grouped by their top bits, about one row a bucket (a
 * counting sort: two passes over the rows, where sorting each band took
 * several times as long): a probe reads the buckets its range covers.
 */
void
lsh_pending_cache_finish(LshPendingCache *c)
{
	const int	words = 1 + c->bands;
	const Size	nkeyed = c->keyed.n / words;
	const uint32 *rows = c->keyed.data;
	int			bits = 4;
	Size		nbuckets;
	uint32	   *next;

	while (bits < 20 && ((Size) 1 << (bits + 1)) <= nkeyed)
		bits++;
	nbuckets = (Size) 1 << bits;
	c->shift = 32 - bits;
	c->nkeyed = (uint32) nkeyed;
	c->entries = (LshEntry *) MemoryContextAllocHuge(c->cxt, sizeof(LshEntry) * Max(nkeyed * c->bands, 1));
	c->starts = (uint32 *) MemoryContextAllocHuge(c->cxt, sizeof(uint32) * (nbuckets + 1) * c->bands);
	memset(c->starts, 0, sizeof(uint32) * (nbuckets + 1) * c->bands);
	for (Size i = 0; i < nkeyed; i++)
		for (int b = 0; b < c->bands; b++)
			c->starts[b * (nbuckets + 1) + (rows[i * words + 1 + b] >> c->shift) + 1]++;
	for (int b = 0; b < c->bands; b++)
	{
		uint32	   *start = c->starts + b * (nbuckets + 1);

		for (Size k = 1; k <= nbuckets; k++)
			start[k] += start[k - 1];
	}
	CHECK_FOR_INTERRUPTS();
	next = (uint32 *) MemoryContextAllocHuge(c->cxt, sizeof(uint32) * (nbuckets + 1) * c->bands);
	memcpy(next, c->starts, sizeof(uint32) * (nbuckets + 1) * c->bands);
	for (Size i = 0; i < nkeyed; i++)
	{
		const uint32 *row = rows + i * words;

		for (int b = 0; b < c->bands; b++)
		{
			uint32		key = row[1 + b];
			LshEntry   *e = c->entries + (Size) b * nkeyed + next[b * (nbuckets + 1) + (key >> c->shift)]++;

			e->key = key;
			e->value = row[0];
		}
	}
	pfree(next);
	c->keyed.free();
	c->filtered = 0;
	c->built = true;
}

void
lsh_pending_cache_probe(const LshPendingCache *c, const uint32 *lo, const uint32 *hi, LshArray<uint32> *ids)
{
	const Size	nbuckets = (Size) 1 << (32 - c->shift);

	for (int b = 0; b < c->bands; b++)
	{
		const LshEntry *slice = c->entries + (Size) b * c->nkeyed;
		const uint32 *start = c->starts + b * (nbuckets + 1);
		const LshEntry *end = slice + start[(hi[b] >> c->shift) + 1];

		for (const LshEntry *e = slice + start[lo[b] >> c->shift]; e < end; e++)
			if (e->key >= lo[b] && e->key <= hi[b])
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
