/*
 * lsh: an LSH-band index access method for minhash signatures.
 *
 * A row's signature (k values) is cut into b bands of r values; two rows are
 * candidates when they agree on every value of at least one band, which
 * happens with probability 1 - (1 - s^r)^b for Jaccard similarity s. The
 * index keeps, per row, the signature itself (to verify candidates without a
 * heap visit) and one 7- or 8-byte entry per band, keyed by a 32-bit hash of
 * the band. See docs/lsh.md for the user-facing side.
 *
 * On-disk layout (version 2; version 1 differs only in the band key and
 * lacks the per-depth statistics of the metapage). Every page has the standard page header and a
 * 24-byte special space (LshPageOpaqueData) whose page_id marks lsh pages and
 * whose flags give the page type.
 *
 *  block 0: metapage (LshMetaPageData after the page header): magic, version,
 *      k, bands, rows, slots per data page, seed, the tree's root, height and
 *      leftmost leaf, the head of the free-slot list, the number of allocated
 *      slots, a structure-change counter, key-multiplicity statistics of the
 *      last build (for the cost estimate) and the options as given. k = 0
 *      until the first signature is seen (an index built on an empty table
 *      without typmod).
 *
 *  data pages: the signature store. An array of fixed-size slots right after
 *      the page header; no line pointers. A slot is
 *          ItemPointerData tid (6 bytes) | uint16 state | uint32 values[k]
 *      (8 + 4k bytes: 520 at k = 128, 15 slots a page). state is FREE, LIVE or
 *      DEAD (removed by VACUUM, awaiting the removal of its band entries). A
 *      row is addressed by a 32-bit row id = block * slots_per_page + slot.
 *      Data pages with a free slot form a singly linked list (opaque.next)
 *      whose head is in the metapage; a page is on the list exactly when it
 *      has a free slot (flag LSH_IN_FREELIST), maintained atomically with the
 *      metapage in one WAL record.
 *
 *  band tree: the band entries {uint32 key; uint32 rowid} in a B+-tree keyed
 *      by key. Version 2: key = [band number][bits of value 1][bits of value
 *      2]... (core/lsh_prefix.h), so the rows agreeing with a query on the
 *      first m values of a band are one key range (a probe at depth m);
 *      version 1 folded band_hash(band values, band number) to 32 bits (whole
 *      bands only). Keys are uniform within each band's range, so the tree is
 *      balanced by construction
 *      and its fan-out is ~1000: a lookup reads root..leaf, i.e. height pages
 *      (2 up to ~900k entries, 3 up to ~10^9, 4 beyond anything 32-bit row
 *      ids can address) -- constant in practice. A hash directory with
 *      buckets (linear hashing) was the alternative; the tree wins on two
 *      counts: a sorted bulk build packs leaves to LSH_BUILD_FILL (linear
 *      hashing only reaches that fill at power-of-two bucket counts, ~72% on
 *      average, which misses the 1.5x-of-signatures size target), and every
 *      structural change (one split) is a single WAL record of at most four
 *      pages, so a crash never leaves a half-done split to clean up.
 *      Leaves hold entries unsorted from the page header up to pd_lower (an
 *      insert appends, so its WAL delta is tiny), 8 bytes each, or 7 when the
 *      leaf's key range fits 24 bits (see "Leaves" below); internal pages
 *      hold sorted {uint32 key; BlockNumber child} where key is the child's
 *      low key (entry 0's key equals the page's low key). Every tree page
 *      stores its low key, high key (if it has a right sibling) and right
 *      sibling, so equal keys may run across leaves: a lookup descends to the
 *      leftmost leaf that may hold the key and follows right links while the
 *      leaf's high key equals it. The leaf level in key order lets a walker
 *      (e.g. all-pairs search) see every group of equal band keys in one pass.
 *
 * Concurrency. The metapage's buffer lock orders structural changes:
 *  - scans and the band-entry step of inserts hold it SHARE while they walk
 *    the tree; internal pages cannot change then, and leaves are modified
 *    only under their own EXCLUSIVE lock (append, vacuum compaction);
 *  - a split (and growing the root) holds it EXCLUSIVE; so does allocating a
 *    data slot (the free list and slot count live in the metapage);
 *  - lock order is always metapage, then tree pages top-down (siblings left
 *    to right, several leaves in block order), then data pages. WAL records
 *    register pages in the same order, so replay on a standby takes locks in
 *    the order standby scans do, and every record that changes the tree's
 *    shape includes the metapage (so it waits for standby scans in progress).
 * An insert first stores the signature in a slot, then adds its band entries:
 * a crash in between leaves a slot of an uncommitted row, which VACUUM
 * removes as it removes any dead row. VACUUM removes a dead row's band
 * entries before freeing its slot, so an entry always names an allocated
 * slot (LIVE or DEAD); scans skip DEAD slots.
 * Each backend keeps a copy of the internal levels (lsh_find_leaf), valid
 * while the metapage's split counter, root and height are unchanged.
 */
#ifndef MINHASH_PG_LSH_H
#define MINHASH_PG_LSH_H

#include "pg/pg_prelude.h"

#include "core/lsh_prefix.h"
#include "core/lsh_layout.h"
#include "pg/minhash.h"
#include "pg/lsh/lsh_array.h"

extern "C" {
#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/reloptions.h"
#include "storage/lockdefs.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/relcache.h"
}

#define LSH_MAGIC			0x4C534831	/* "LSH1" */
/*
 * On-disk versions. 1 (minhash 1.0): band key = XXH3 of the band folded to 32
 * bits, exact band match only. 2 (1.1): prefix-preserving band keys (see
 * core/lsh_prefix.h) and per-depth build statistics; probes at any depth.
 * 3 (1.1): version 2 plus the pending list of fast inserts (lsh_pending.h).
 * 4 (1.1): version 3 plus sorted leaves: a leaf's first opaque.count entries
 * are in key order (lsh_leaf_sorted), so a probe binary-searches them and
 * reads only the entries appended since; a version-3 leaf is read whole.
 * All are read and written; a version-1 index keeps 1.0's capabilities, a
 * version-2 one has no pending list (inserts go straight to the tree), until
 * REINDEX.
 */
#define LSH_VERSION			4
#define LSH_VERSION_PENDING	3	/* the pending list, leaves read whole */
#define LSH_VERSION_PREFIX	2	/* prefix keys, no pending list */
#define LSH_VERSION_EXACT	1
#define LSH_PAGE_ID			0xFF8C		/* opaque.page_id of every lsh page */
#define LSH_METAPAGE_BLKNO	0

/* opaque.flags: page type in the low bits, then properties */
#define LSH_PAGE_META		0x0001
#define LSH_PAGE_DATA		0x0002
#define LSH_PAGE_INTERNAL	0x0004
#define LSH_PAGE_LEAF		0x0008
#define LSH_PAGE_PENDING	0x0080	/* version 3: pending list page (lsh_pending.h) */
#define LSH_PAGE_TYPE_MASK	0x008F
#define LSH_HAS_HIGH		0x0010	/* tree page: high key is valid (not rightmost) */
#define LSH_IN_FREELIST		0x0020	/* data page: on the free-slot list */
#define LSH_NARROW			0x0040	/* leaf: 7-byte entries (see lsh_leaf_*) */
#define LSH_PENDING_CLOSED	0x0100	/* pending page: no more appends (a merge took it) */
#define LSH_PENDING_KEYED	0x0200	/* pending page: each row id with its band keys */

/* slot states */
#define LSH_SLOT_FREE		0
#define LSH_SLOT_LIVE		1
#define LSH_SLOT_DEAD		2

/* Strategy numbers of the operator class minhash_ops */
#define LSH_SIMILAR_STRATEGY	1	/* %   */
#define LSH_DISTANCE_STRATEGY	2	/* <%> (ORDER BY) */
#define LSH_SIMILAR_T_STRATEGY	3	/* %>= (minhash, minhash_query): threshold in the query */
#define LSH_NSTRATEGIES			3

/*
 * Default weights of the band optimiser for WITH (threshold = t). A false
 * candidate costs one data-page read (verification needs no heap visit); a
 * false negative is a lost row. So the index leans to recall: at t = 0.5,
 * k = 128 this picks 30 bands of 4 rows, which finds 0.98 of the pairs at
 * Jaccard 0.6 where the balanced 25 x 5 finds 0.87.
 */
#define LSH_DEFAULT_FP_WEIGHT	0.2
#define LSH_DEFAULT_FN_WEIGHT	0.8

/* Leaves and internal pages are filled to this share of their capacity by a build */
#define LSH_BUILD_FILL		0.95	/* internal pages; leaves: the fillfactor option */
#define LSH_DEFAULT_FILLFACTOR	95

/* Subphases of CREATE INDEX, for pg_stat_progress_create_index */
#define LSH_PHASE_SCAN		2
#define LSH_PHASE_SORT		3
#define LSH_PHASE_LOAD		4

#define LSH_PREFIX_STATS	32

typedef struct LshPageOpaqueData
{
	uint32		low;			/* tree page: smallest key it may hold */
	uint32		high;			/* tree page: largest key it may hold, if LSH_HAS_HIGH */
	BlockNumber next;			/* tree page: right sibling; data page: next on free list */
	uint16		count;			/* data page: slots in use (LIVE or DEAD) */
	uint16		level;			/* tree page: 0 for leaves */
	uint16		flags;
	uint16		page_id;		/* LSH_PAGE_ID */
} LshPageOpaqueData;

typedef LshPageOpaqueData *LshPageOpaque;

typedef struct LshMetaPageData
{
	uint32		magic;
	uint32		version;
	uint16		num_perm;		/* k; 0 until the first signature */
	uint16		bands;			/* b */
	uint16		rows;			/* r, b * r <= k */
	uint16		slots_per_page;
	uint64		seed;
	float8		threshold;		/* design threshold: option, or (1/b)^(1/r) */
	BlockNumber root;
	BlockNumber leftmost;		/* first leaf in key order */
	BlockNumber free_head;		/* first data page with a free slot */
	uint16		height;			/* tree levels, 1 = the root is a leaf */
	uint16		family;			/* hash family of the signatures (0 = native: 1.0 wrote 0 here) */
	uint64		nslots;			/* allocated slots (LIVE + DEAD) */
	uint64		nsplits;		/* structural changes of the tree since build */
	/*
	 * Key multiplicity at the last build, for the cost estimate: entries and
	 * the sum over distinct band keys of (entries with that key)^2. Their
	 * ratio is the mean number of entries sharing the key of a random entry,
	 * i.e. what a probe with a stored row's band finds. 0: no build data.
	 */
	uint64		build_entries;
	uint64		build_sumsq;
	/* options as given, kept so the first insert into an empty index can apply them */
	float8		opt_threshold;	/* -1 if not given */
	float8		opt_fp_weight;
	float8		opt_fn_weight;
	int32		opt_bands;		/* 0 if not given */
	int32		opt_rows;
	/*
	 * Version 2 only: sum over distinct key prefixes of depth m (m = 1..32,
	 * element m - 1) of (entries with that prefix)^2, from the last build, as
	 * build_sumsq is for whole keys.
	 */
	uint64		build_prefix_sumsq[LSH_PREFIX_STATS];
	/*
	 * Version 3 only: the pending list (lsh_pending.h). Rows inserted with
	 * fastupdate have their signature in a data slot and their row id on a
	 * pending page, their band entries not yet in the tree.
	 */
	BlockNumber pending_head;	/* first pending page, or InvalidBlockNumber */
	BlockNumber pending_tail;	/* last pending page, where inserts append */
	BlockNumber pending_free;	/* merged pending pages, for reuse as pending pages */
	BlockNumber merge_upto;		/* a merge in progress up to this page (a crash left
								 * entries of it in the tree): the next merge checks
								 * for entries already there */
	uint32		pending_pages;
	uint32		pending_pad;
	uint64		pending_rows;
} LshMetaPageData;

typedef LshMetaPageData *LshMetaPage;

/* a version-1 metapage ends before the per-depth statistics, a version-2 one before the pending list */
#define LSH_META_SIZE_V1	offsetof(LshMetaPageData, build_prefix_sumsq)
#define LSH_META_SIZE_V2	offsetof(LshMetaPageData, pending_head)
static inline Size
lsh_meta_size(uint32 version)
{
	return version == LSH_VERSION_EXACT ? LSH_META_SIZE_V1 :
		version == LSH_VERSION_PREFIX ? LSH_META_SIZE_V2 : sizeof(LshMetaPageData);
}

/* versions this build reads */
#define LSH_VERSION_KNOWN(v)	((v) >= LSH_VERSION_EXACT && (v) <= LSH_VERSION)
/* the metapage has the pending list's fields */
#define LSH_HAS_PENDING(v)		((v) >= LSH_VERSION_PENDING)

/* A band entry; also the layout of an internal entry (key, child block) */
typedef struct LshEntry
{
	uint32		key;
	uint32		value;			/* leaf: row id; internal: child block */
} LshEntry;

/* Header of a data slot; the k values follow */
typedef struct LshSlotHeader
{
	ItemPointerData tid;
	uint16		state;
} LshSlotHeader;

/* reloptions */
typedef struct LshOptions
{
	int32		vl_len_;
	double		threshold;		/* -1: not given */
	int			bands;			/* 0: not given */
	int			rows;			/* 0: not given */
	double		fp_weight;		/* -1: not given */
	double		fn_weight;		/* -1: not given */
	bool		fastupdate;		/* inserts go to the pending list (version 3) */
	int			pending_list_limit;	/* kB; -1: minhash.lsh_pending_list_limit */
	int			fillfactor;		/* percent of a leaf a build fills */
} LshOptions;

#define LshPageGetOpaque(page) ((LshPageOpaque) PageGetSpecialPointer(page))
#define LshPageGetMeta(page) ((LshMetaPage) PageGetContents(page))
#define LshPageType(page) (LshPageGetOpaque(page)->flags & LSH_PAGE_TYPE_MASK)
#define LshPageIsLsh(page) (PageGetSpecialSize(page) == MAXALIGN(sizeof(LshPageOpaqueData)) && \
							LshPageGetOpaque(page)->page_id == LSH_PAGE_ID)

#define LSH_CONTENT_START	MAXALIGN(SizeOfPageHeaderData)
#define LSH_CONTENT_SIZE	(BLCKSZ - LSH_CONTENT_START - MAXALIGN(sizeof(LshPageOpaqueData)))
#define LSH_TREE_CAPACITY	((int) (LSH_CONTENT_SIZE / sizeof(LshEntry)))

/* internal pages: sorted LshEntry {low key of child, child block} */
#define LshTreeEntries(page) ((LshEntry *) ((char *) (page) + LSH_CONTENT_START))

/*
 * Entries stored from the content start up to pd_lower, in signed arithmetic
 * and clamped to [0, capacity]: a damaged pd_lower must not turn into a
 * negative or huge count that sends readers (or an append) outside the page.
 * Paths that write a tree page call lsh_check_tree_page first, which reports
 * such a page as corrupted instead of relying on the clamp.
 */
static inline int
lsh_count_entries(Page page, int entry_size)
{
	return minhash::lsh_layout::entry_count(((PageHeader) page)->pd_lower, LSH_CONTENT_START,
											LSH_CONTENT_SIZE, entry_size);
}

#define LshTreeCount(page) lsh_count_entries((page), (int) sizeof(LshEntry))
#define LshTreeSetCount(page, n) \
	(((PageHeader) (page))->pd_lower = LSH_CONTENT_START + (n) * sizeof(LshEntry))

/*
 * Leaves: entries {key, row id}, in one of two formats. A leaf written whole
 * (build, split, VACUUM) is in key order; appends (inserts, the pending
 * list's merge) add entries after them unsorted. opaque.count holds how many
 * leading entries are in key order (lsh_leaf_sorted: trusted from version 4).
 * The formats:
 *  - wide: LshEntry, 8 bytes;
 *  - narrow (LSH_NARROW): 7 bytes, the key stored as key - low in 3 bytes
 *    (little-endian) then the 4-byte row id; possible when the leaf's key range
 *    high - low (high = 2^32 - 1 for the rightmost leaf) fits 24 bits, which
 *    holds for every leaf once an index has a few hundred leaves. It saves an
 *    eighth of the band entries' space.
 * A leaf's format is chosen when it is written whole (build, split, VACUUM),
 * narrow whenever its range allows; an append keeps the format (the range of
 * a leaf only shrinks). Use these accessors, not the bytes.
 */
#define LSH_WIDE_ENTRY_SIZE		8
#define LSH_NARROW_ENTRY_SIZE	7
#define LSH_NARROW_RANGE		((uint32) 0xFFFFFF)

static inline int
lsh_leaf_entry_size(Page page)
{
	return (LshPageGetOpaque(page)->flags & LSH_NARROW) ? LSH_NARROW_ENTRY_SIZE : LSH_WIDE_ENTRY_SIZE;
}

static inline int
lsh_leaf_count(Page page)
{
	return lsh_count_entries(page, lsh_leaf_entry_size(page));
}

static inline int
lsh_leaf_capacity(Page page)
{
	return (int) (LSH_CONTENT_SIZE / lsh_leaf_entry_size(page));
}

static inline uint32
lsh_leaf_key(Page page, int i)
{
	return minhash::lsh_layout::entry_key((const uint8 *) page + LSH_CONTENT_START, i,
										  (LshPageGetOpaque(page)->flags & LSH_NARROW) != 0,
										  LshPageGetOpaque(page)->low);
}

static inline uint32
lsh_leaf_rowid(Page page, int i)
{
	return minhash::lsh_layout::entry_rowid((const uint8 *) page + LSH_CONTENT_START, i,
											(LshPageGetOpaque(page)->flags & LSH_NARROW) != 0);
}

/* Store entry i (no bounds or range check: the caller knows low <= key <= high). */
static inline void
lsh_leaf_put(Page page, int i, uint32 key, uint32 rowid)
{
	minhash::lsh_layout::put_entry((uint8 *) page + LSH_CONTENT_START, i,
								   (LshPageGetOpaque(page)->flags & LSH_NARROW) != 0,
								   LshPageGetOpaque(page)->low, key, rowid);
}

/*
 * How many leading entries of a leaf are in key order: opaque.count in a
 * version-4 index (lsh_page_problem has checked it is at most the entries),
 * none before (version-3 leaves were read whole; their count is 0 or, once
 * written whole by this build, the same prefix, unused).
 */
static inline int
lsh_leaf_sorted(Page page, uint32 version)
{
	return version >= LSH_VERSION ? Min((int) LshPageGetOpaque(page)->count, lsh_leaf_count(page)) : 0;
}

/* Append an entry; the caller has checked lsh_leaf_count < lsh_leaf_capacity. */
static inline void
lsh_leaf_append(Page page, uint32 key, uint32 rowid)
{
	lsh_leaf_put(page, lsh_leaf_count(page), key, rowid);
	((PageHeader) page)->pd_lower += lsh_leaf_entry_size(page);
}

#define LSH_SLOT_SIZE(k)	(sizeof(LshSlotHeader) + sizeof(uint32) * (k))
#define LshDataSlot(page, i, k) \
	((LshSlotHeader *) ((char *) (page) + LSH_CONTENT_START + (Size) (i) * LSH_SLOT_SIZE(k)))
#define LshSlotValues(slot) ((uint32 *) ((char *) (slot) + sizeof(LshSlotHeader)))

/* the parameters of an index, fixed once k is known */
typedef struct LshIndexParams
{
	int			num_perm;
	uint64		seed;
	int			family;
	int			bands;
	int			rows;
	int			slots_per_page;
	uint32		version;		/* on-disk version: LSH_VERSION_EXACT or LSH_VERSION */
	minhash::PrefixLayout layout;	/* version 2: the band key layout */
} LshIndexParams;

/*
 * What one scan did, for EXPLAIN ANALYZE (lsh_explain.cpp): band probes
 * (bands x stages), the shallowest depth probed (0: every stored signature
 * was verified), distinct candidates found by the probes, signatures
 * verified, rows returned.
 */
typedef struct LshScanCounters
{
	uint64		scans;
	uint64		bands_probed;
	int			depth;
	uint64		candidates;
	uint64		verified;
	uint64		returned;
} LshScanCounters;

/* lsh_explain.cpp */
void		lsh_explain_init(void);
void		lsh_counters_report(Relation index, const LshScanCounters *c, uint64 returned);

/* lsh.cpp */
extern int	lsh_min_candidates;
extern double lsh_recall;
extern int	lsh_max_scan_tuples;
void		lsh_init(void);
void		lsh_alter_init(void);	/* lsh_alter.cpp: ALTER INDEX SET of build options */
extern "C" Datum lsh_handler(PG_FUNCTION_ARGS);
bytea	   *lshoptions(Datum reloptions, bool validate);
bool		lsh_is_lsh_index(Relation index);
Relation	lsh_open_owned(Oid indexoid, LOCKMODE mode, Relation *heap, const char *funcname);
char	   *lshbuildphasename(int64 phasenum);

/* lsh_meta.cpp: pages, the metapage and the parameters */
int			lsh_slots_per_page(int num_perm);
void		lsh_init_page(Page page, uint16 type, uint16 level);
void		lsh_init_data_page(Page page, int num_perm);
void		lsh_init_metapage(Page page, const LshOptions *opts);
Buffer		lsh_new_buffer(Relation index);
void		lsh_meta_params(const LshMetaPageData *meta, LshIndexParams *params);
bool		lsh_choose_bands(const LshMetaPageData *meta, int num_perm, int *bands, int *rows,
							 double *threshold);
void		lsh_resolve_params(LshMetaPage meta, int num_perm, uint64 seed, int family);
void		lsh_check_signature(Relation index, const LshIndexParams *params, const MinHashSig *sig,
								const char *what);
void		lsh_band_keys(const LshIndexParams *params, const uint32 *values, uint32 *keys);
void		lsh_notice_format1(Relation index);

/* lsh_slots.cpp: the signature store */
uint32		lsh_rowid(const LshIndexParams *params, BlockNumber blkno, int slot);
BlockNumber	lsh_rowid_block(const LshIndexParams *params, uint32 rowid);
int			lsh_rowid_slot(const LshIndexParams *params, uint32 rowid);
void		lsh_free_list_push(BlockNumber *head, Page page, BlockNumber blkno);
LshSlotHeader *lsh_slot_read(Relation index, Page page, const LshIndexParams *params, int slot,
							 BlockNumber blkno, const char **problem = NULL);

/* lsh_tree.cpp: the band tree's descent and leaves */
int			lsh_child_search(const LshEntry *e, int n, uint32 key, bool leftmost);
int			lsh_child_index(Page page, uint32 key, bool leftmost);
BlockNumber	lsh_find_leaf(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost);
BlockNumber	lsh_find_leaf_low(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost,
							  bool *has_low, uint32 *low);
BlockNumber	lsh_find_leaf_hinted(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost,
								 bool *has_low, uint32 *low, int *hint);
Buffer		lsh_leaf_hint_get(Relation index, int hint);
void		lsh_leaf_hint_prefetch(Relation index, int hint);
void		lsh_leaf_hint_set(Relation index, int hint, Buffer buf);
int			lsh_entry_cmp(const void *a, const void *b);
bool		lsh_leaf_write(Page page, const LshEntry *entries, int n);
int			lsh_leaf_decode(Page page, LshEntry *out);
void		lsh_leaf_collect(Page page, int sorted, uint32 lo, uint32 hi, LshArray<uint32> *ids);
int			lsh_leaf_guess(Page page, int sorted, uint32 key);
int			lsh_uint32_cmp(const void *a, const void *b);

/*
 * A pair of 32-bit values as one int8 datum of a tuplesort, ordered by (hi,
 * lo) as unsigned numbers: the build sorts (band key, row id), the check
 * (row id, band key). The sign bit is flipped so that int8's signed order is
 * the unsigned order.
 */
#define LSH_SORT_FLIP (UINT64CONST(1) << 63)
static inline Datum
lsh_sort_datum(uint32 hi, uint32 lo)
{
	return Int64GetDatum((int64) ((((uint64) hi << 32) | lo) ^ LSH_SORT_FLIP));
}
static inline void
lsh_sort_pair(Datum d, uint32 *hi, uint32 *lo)
{
	uint64		v = ((uint64) DatumGetInt64(d)) ^ LSH_SORT_FLIP;

	*hi = (uint32) (v >> 32);
	*lo = (uint32) v;
}

/*
 * lsh_access.cpp: checked page access. A walk remembers the index's block
 * count (the bound of every chain) and, along a level, the high key the next
 * page's low key must equal. Call lsh_walk_chain before each new chain.
 */
typedef struct LshWalk
{
	Relation	index;
	BlockNumber nblocks;		/* known size, refreshed when a link goes beyond it */
	BlockNumber steps;			/* pages read in the current chain */
	bool		check_low;		/* the next page read must have low key low */
	bool		low_from_parent;	/* low is a parent's separator, not a left sibling's high key */
	uint32		low;
	BufferAccessStrategy strategy;
	/* NULL: damage is XX002; else it is passed here and the walk goes on where it can (the check) */
	void		(*report) (void *arg, BlockNumber blkno, const char *problem);
	void	   *report_arg;
	/* a buffer that held recent_blkno, for the next read of it (lsh_prefetch.cpp) */
	BlockNumber recent_blkno;
	Buffer		recent_buf;
} LshWalk;

/* tree heights beyond this are damage: 4 levels already address more than 32-bit row ids */
#define LSH_MAX_HEIGHT		16
#define LSH_PAGE_TREE		(LSH_PAGE_LEAF | LSH_PAGE_INTERNAL)
#define LSH_PAGE_ANY		(LSH_PAGE_META | LSH_PAGE_DATA | LSH_PAGE_TREE | LSH_PAGE_PENDING)

const char *lsh_page_problem(Page page, uint16 types, int level, const LshIndexParams *params);
const char *lsh_slot_problem(const LshSlotHeader *slot);
[[noreturn]] void lsh_corrupted(Relation index, const char *what, BlockNumber blkno);
Buffer		lsh_read_meta(Relation index, int mode, LshMetaPage *meta);
void		lsh_walk_init(LshWalk *w, Relation index, BufferAccessStrategy strategy);
void		lsh_walk_chain(LshWalk *w);
void		lsh_walk_check_block(LshWalk *w, BlockNumber blkno, BlockNumber held);
Buffer		lsh_walk_read(LshWalk *w, BlockNumber blkno, int lockmode, uint16 types, int level,
						  const LshIndexParams *params, BlockNumber held, Page *pagep);
BlockNumber	lsh_walk_right(LshWalk *w, Page page);
Buffer		lsh_read_block(Relation index, BlockNumber blkno, int lockmode, BufferAccessStrategy strategy,
						   const LshIndexParams *params, Page *pagep);
void		lsh_walk_expect_low(LshWalk *w, bool has_low, uint32 low);
void		lsh_check_key_in_leaf(Relation index, Page page, BlockNumber blkno, uint32 key);
void		lsh_check_heap_tid(Relation index, Relation heap, BlockNumber *heap_nblocks,
							   const ItemPointerData *tid, BlockNumber blkno);

/* lsh_prefetch.cpp: warming the pages a scan is about to read (hints only) */
Buffer		lsh_walk_prefetch(LshWalk *w, BlockNumber blkno);
void		lsh_prefetch_head(Buffer buf);
void		lsh_prefetch_lines(Buffer buf);
void		lsh_prefetch_leaf_at(Buffer buf, uint32 key);
void		lsh_walk_recent(LshWalk *w, BlockNumber blkno, Buffer buf);
void		lsh_prefetch_address(const void *p);
Buffer		lsh_walk_pin(LshWalk *w, BlockNumber blkno);

/*
 * lsh_cursor.cpp: the leaf cursor, one level of the band tree in key order
 * through the checked walk (scans, VACUUM, the all-pairs walk, the check).
 * lsh_cursor_next returns the next page in page/blkno, pinned and locked in
 * the cursor's mode until the next call or lsh_cursor_release.
 */
typedef struct LshCursor
{
	LshWalk    *walk;			/* the caller's checked walk */
	int			lockmode;
	int			level;			/* 0: leaves */
	uint32		lo;				/* range cursor: the keys asked for */
	uint32		hi;				/* stop after the page whose high key reaches past hi */
	bool		check_lo;		/* the first page must hold lo (a descent's leaf) */
	BlockNumber next;			/* the next page, InvalidBlockNumber at the end */
	BlockNumber blkno;			/* the current page */
	Buffer		buf;			/* InvalidBuffer when no page is held */
	Page		page;
} LshCursor;

void		lsh_cursor_range(LshCursor *cur, LshWalk *walk, const LshMetaPageData *meta,
							 uint32 lo, uint32 hi);
void		lsh_cursor_range_from(LshCursor *cur, LshWalk *walk, BlockNumber first, bool has_low,
								  uint32 low, uint32 lo, uint32 hi);
void		lsh_cursor_level(LshCursor *cur, LshWalk *walk, BlockNumber first, int lockmode,
							 int level);
bool		lsh_cursor_next(LshCursor *cur);
void		lsh_cursor_release(LshCursor *cur);

/* lsh_build.cpp */
IndexBuildResult *lshbuild(Relation heap, Relation index, struct IndexInfo *indexInfo);
void		lshbuildempty(Relation index);

/* lsh_insert.cpp */
bool		lshinsert(Relation index, Datum *values, bool *isnull, ItemPointer heap_tid,
					  Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
					  struct IndexInfo *indexInfo);
void		lsh_tree_insert(Relation index, Buffer metabuf, uint32 key, uint32 rowid);

/* lsh_scan.cpp */
/* lsh_selfuncs.cpp: selectivity of "a % b" (args a, b) at a threshold */
double		lsh_similar_restriction_sel(struct PlannerInfo *root, List *args, int varRelid, double threshold);
int			lsh_probe_depth(const LshIndexParams *params, double threshold);
double		lsh_probe_depth_recall(const LshIndexParams *params, int depth, double threshold);
IndexScanDesc lshbeginscan(Relation index, int nkeys, int norderbys);
void		lshrescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys);
bool		lshgettuple(IndexScanDesc scan, ScanDirection dir);
int64		lshgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
void		lshendscan(IndexScanDesc scan);

/* lsh_vacuum.cpp */
IndexBulkDeleteResult *lshbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
									 IndexBulkDeleteCallback callback, void *callback_state);
IndexBulkDeleteResult *lshvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats);

/* lsh_check_heap.cpp: minhash_lsh_check's heapallindexed cross-check */
typedef struct LshHeapCheck LshHeapCheck;
LshHeapCheck *lsh_heapcheck_begin(Relation heap, Relation index, Snapshot snapshot);
void		lsh_heapcheck_add_slot(LshHeapCheck *hc, const LshIndexParams *params,
								   const LshSlotHeader *slot);
void		lsh_heapcheck_finish(LshHeapCheck *hc, void (*report) (void *arg, const char *msg),
								 void *arg);

/* lsh_cost.cpp */
void		lshcostestimate(struct PlannerInfo *root, struct IndexPath *path, double loop_count,
							Cost *indexStartupCost, Cost *indexTotalCost,
							Selectivity *indexSelectivity, double *indexCorrelation,
							double *indexPages);

/* lsh_validate.cpp */
bool		lshvalidate(Oid opclassoid);
void		lsh_require_signatures(Relation heap, Relation index, const struct IndexInfo *indexInfo);

#endif
