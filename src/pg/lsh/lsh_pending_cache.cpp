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
 * 0.3 us to build (2.4 ms for a 4MB list of 7,900 rows, measured against
 * 60 us of filtering a scan), so building after 16 lists' worth of
 * filtering spends some 2.5 times what was spent, which the next 40 scans
 * repay; a session of fewer than 16 scans never builds it.
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
	int			nbuckets;		/* buckets a band */
	uint32	   *mins;			/* each band's least key ... */
	uint32	   *maxs;			/* ... and greatest */
	uint8	   *shifts;			/* a key's bucket in its band: (key - min) >> shift */
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
	LshPendingCache empty = {};

	if (c->cxt != NULL)
		MemoryContextReset(c->cxt);
	empty.relid = c->relid;
	empty.relfilenode = c->relfilenode;
	empty.merges = c->merges;
	empty.head = c->head;
	empty.used = c->used;
	empty.cxt = c->cxt;
	empty.last = InvalidBlockNumber;
	*c = empty;
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
 * Each band's keys grouped by bucket, about four rows a bucket (a counting
 * sort: two passes over the rows, where sorting each band took several
 * times as long): a probe reads the buckets its range covers. A band's keys
 * share their top bits (format 2 keys begin with the band), so the buckets
 * divide the band's own span, from its least key to its greatest. One band
 * at a time, its keys gathered first: the counts, the keys and the band's
 * slice of the copy then stay in the CPU's nearest caches, where scattering
 * every band's entries at once missed them (3 ms for a 4MB list, 1.4 now).
 */
void
lsh_pending_cache_finish(LshPendingCache *c)
{
	const int	words = 1 + c->bands;
	const Size	nkeyed = c->keyed.n / words;
	const uint32 *rows = c->keyed.data;
	int			bits = 2;
	Size		nb;
	uint32	   *keys;
	uint32	   *rowids;
	uint32	   *next;

	while (bits < 20 && ((Size) 1 << (bits + 1)) * 4 <= nkeyed)
		bits++;
	nb = (Size) 1 << bits;
	c->nbuckets = (int) nb;
	c->nkeyed = (uint32) nkeyed;
	c->mins = (uint32 *) MemoryContextAlloc(c->cxt, sizeof(uint32) * c->bands);
	c->maxs = (uint32 *) MemoryContextAlloc(c->cxt, sizeof(uint32) * c->bands);
	c->shifts = (uint8 *) MemoryContextAlloc(c->cxt, c->bands);
	c->entries = (LshEntry *) MemoryContextAllocHuge(c->cxt, sizeof(LshEntry) * Max(nkeyed * c->bands, 1));
	c->starts = (uint32 *) MemoryContextAllocHuge(c->cxt, sizeof(uint32) * (nb + 1) * c->bands);
	memset(c->starts, 0, sizeof(uint32) * (nb + 1) * c->bands);
	keys = (uint32 *) MemoryContextAllocHuge(c->cxt, sizeof(uint32) * Max(nkeyed, 1));
	rowids = (uint32 *) MemoryContextAllocHuge(c->cxt, sizeof(uint32) * Max(nkeyed, 1));
	next = (uint32 *) MemoryContextAlloc(c->cxt, sizeof(uint32) * (nb + 1));
	for (Size i = 0; i < nkeyed; i++)
		rowids[i] = rows[i * words];
	for (int b = 0; b < c->bands; b++)
	{
		uint32	   *start = c->starts + b * (nb + 1);
		LshEntry   *slice = c->entries + (Size) b * nkeyed;
		uint32		lo = PG_UINT32_MAX;
		uint32		hi = 0;
		int			shift = 0;

		CHECK_FOR_INTERRUPTS();
		for (Size i = 0; i < nkeyed; i++)
		{
			uint32		key = rows[i * words + 1 + b];

			keys[i] = key;
			lo = Min(lo, key);
			hi = Max(hi, key);
		}
		while (shift < 32 && ((hi - lo) >> shift) >= nb)
			shift++;
		c->mins[b] = lo;
		c->maxs[b] = hi;
		c->shifts[b] = (uint8) shift;
		for (Size i = 0; i < nkeyed; i++)
			start[((keys[i] - lo) >> shift) + 1]++;
		for (Size k = 1; k <= nb; k++)
			start[k] += start[k - 1];
		memcpy(next, start, sizeof(uint32) * (nb + 1));
		for (Size i = 0; i < nkeyed; i++)
		{
			LshEntry   *e = slice + next[(keys[i] - lo) >> shift]++;

			e->key = keys[i];
			e->value = rowids[i];
		}
	}
	pfree(next);
	pfree(rowids);
	pfree(keys);
	c->keyed.free();
	c->filtered = 0;
	c->built = true;
}

void
lsh_pending_cache_probe(const LshPendingCache *c, const uint32 *lo, const uint32 *hi, LshArray<uint32> *ids)
{
	const Size	nb = (Size) c->nbuckets;

	for (int b = 0; b < c->bands && c->nkeyed > 0; b++)
	{
		const LshEntry *slice = c->entries + (Size) b * c->nkeyed;
		const uint32 *start = c->starts + b * (nb + 1);
		uint32		from = Max(lo[b], c->mins[b]);
		uint32		to = Min(hi[b], c->maxs[b]);
		const LshEntry *end;

		if (from > to)
			continue;
		end = slice + start[((to - c->mins[b]) >> c->shifts[b]) + 1];
		for (const LshEntry *e = slice + start[(from - c->mins[b]) >> c->shifts[b]]; e < end; e++)
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
