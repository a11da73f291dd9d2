/*
 * The on-disk format of an lsh index: the pages, their accessors, and the
 * checks every reader applies to a page before it trusts it (lsh_page.cpp).
 * What the pages mean to the access method -- locking, the walk, inserts,
 * scans -- is in lsh.h and the files it names. docs/lsh.md, "On-disk format",
 * describes the same for users.
 *
 * Versions are listed at LSH_VERSION; this build reads and writes every one
 * of them. Every page has the standard page header and a 24-byte special
 * space (LshPageOpaqueData) whose page_id marks lsh pages and whose flags
 * give the page type.
 *
 *  block 0: metapage (LshMetaPageData after the page header): magic, version,
 *      k, bands, rows, slots per data page, seed, the tree's root, height and
 *      leftmost leaf, the head of the free-slot list, the number of allocated
 *      slots, a structure-change counter, key-multiplicity statistics of the
 *      last build (for the cost estimate) and the options as given; from
 *      version 2 the per-depth statistics, from version 3 the pending list's
 *      ends and counts, from version 5 the width of the signatures and of
 *      the values the data slots keep. k = 0 until the first signature is
 *      seen (an index built on an empty table without typmod).
 *
 *  data pages: the signature store. An array of fixed-size slots right after
 *      the page header; no line pointers. A slot is
 *          ItemPointerData tid (6 bytes) | uint16 state | values[k]
 *      where the values are uint32 (8 + 4k bytes: 520 at k = 128, 15 slots a
 *      page) or, from version 5, the low 16 or 8 bits of each packed as
 *      uint16 or uint8 (slot_width; 136 bytes at k = 128 and 8 bits, 59 a
 *      page), the slot rounded up to 4 bytes. state is FREE, LIVE or
 *      DEAD (removed by VACUUM, awaiting the removal of its band entries). A
 *      row is addressed by a 32-bit row id = block * slots_per_page + slot.
 *      Data pages with a free slot form a singly linked list (opaque.next)
 *      whose head is in the metapage; a page is on the list exactly when it
 *      has a free slot (flag LSH_IN_FREELIST), maintained atomically with the
 *      metapage in one WAL record.
 *
 *  band tree: the band entries {uint32 key; uint32 rowid} in a B+-tree keyed
 *      by key. From version 2: key = [band number][bits of value 1][bits of
 *      value 2]... (core/lsh_prefix.h), so the rows agreeing with a query on
 *      the first m values of a band are one key range (a probe at depth m);
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
 *      Leaves hold their entries from the page header up to pd_lower, 8 bytes
 *      each, or 7 when the leaf's key range fits 24 bits: first those a whole
 *      write of the leaf (build, split, VACUUM) put there in key order, then
 *      those appended since (inserts, the pending list's merge), unsorted, so
 *      that an append's WAL delta is tiny; from version 4 opaque.count says
 *      how many lead in key order (see "Leaves" below). Internal pages
 *      hold sorted {uint32 key; BlockNumber child} where key is the child's
 *      low key (entry 0's key equals the page's low key). Every tree page
 *      stores its low key, high key (if it has a right sibling) and right
 *      sibling, so equal keys may run across leaves: a lookup descends to the
 *      leftmost leaf that may hold the key and follows right links while the
 *      leaf's high key equals it. The leaf level in key order lets a walker
 *      (e.g. all-pairs search) see every group of equal band keys in one pass.
 *
 *  pending pages (version 3 on): the pending list of fast inserts
 *      (lsh_pending.h). Rows up to pd_lower: on a keyed page
 *      (LSH_PENDING_KEYED, opaque.count = the index's bands) a uint32 row id
 *      and the row's band keys each (65 a page at 30 bands), on a plain page
 *      (written by 1.1) row ids only (2038 a page); opaque.next is the next
 *      pending page. The list runs from the metapage's pending_head to
 *      pending_tail; merged pages go to the pending_free list and are only
 *      ever reused as pending pages (a page's type never changes).
 */
#ifndef MINHASH_PG_LSH_PAGE_H
#define MINHASH_PG_LSH_PAGE_H

#include "pg/pg_prelude.h"

#include "core/lsh_layout.h"

extern "C" {
#include "storage/block.h"
#include "storage/bufpage.h"
#include "storage/itemptr.h"
}

struct LshIndexParams;

#define LSH_MAGIC			0x4C534831	/* "LSH1" */
/*
 * On-disk versions. 1 (minhash 1.0): band key = XXH3 of the band folded to 32
 * bits, exact band match only. 2 (1.1): prefix-preserving band keys (see
 * core/lsh_prefix.h) and per-depth build statistics; probes at any depth.
 * 3 (1.1): version 2 plus the pending list of fast inserts (lsh_pending.h).
 * 4 (1.1): version 3 plus sorted leaves: a leaf's first opaque.count entries
 * are in key order (lsh_leaf_sorted), so a probe binary-searches them and
 * reads only the entries appended since; a version-3 leaf is read whole.
 * 5 (1.1): version 4 plus compact signatures: the metapage records the width
 * of the indexed signatures (32, 16 or 8 bits) and of the values a data slot
 * keeps (the same, or narrower: then verification is a prefilter and the
 * table has the last word), and band keys are computed from the slots'
 * values. An index of 32-bit signatures with 32-bit slots is laid out as in
 * version 4.
 * All are read and written; a version-1 index keeps 1.0's capabilities, a
 * version-2 one has no pending list (inserts go straight to the tree), until
 * REINDEX; versions 1 to 4 hold 32-bit signatures only.
 */
#define LSH_VERSION			5
#define LSH_VERSION_SORTED	4	/* sorted leaves, 32-bit signatures only */
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
	 * From version 2: sum over distinct key prefixes of depth m (m = 1..32,
	 * element m - 1) of (entries with that prefix)^2, from the last build, as
	 * build_sumsq is for whole keys.
	 */
	uint64		build_prefix_sumsq[LSH_PREFIX_STATS];
	/*
	 * From version 3: the pending list (lsh_pending.h). Rows inserted with
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
	/*
	 * Merge rounds so far (wrapping; 0 where 1.1 merged): the record that
	 * unlinks merged pages adds one, so that a backend's copy of the
	 * list (lsh_pending_cache.h) knows the list changed at its head. A pad
	 * before, always zero.
	 */
	uint32		pending_merges;
	uint64		pending_rows;
	/*
	 * From version 5: the width codes (as in a signature's flags: 0 = 32
	 * bits, 1 = 16, 2 = 8) of the indexed signatures and of the values their
	 * data slots keep (slot_width >= sig_width: the same or fewer bits), and
	 * the option verify_bits as given (0 if not given). Before version 5 all
	 * are 32 bits.
	 */
	uint16		sig_width;
	uint16		slot_width;
	int32		opt_verify_bits;
} LshMetaPageData;

typedef LshMetaPageData *LshMetaPage;

/*
 * A version-1 metapage ends before the per-depth statistics, a version-2 one
 * before the pending list, versions 3 and 4 before the widths.
 */
#define LSH_META_SIZE_V1	offsetof(LshMetaPageData, build_prefix_sumsq)
#define LSH_META_SIZE_V2	offsetof(LshMetaPageData, pending_head)
#define LSH_META_SIZE_V4	offsetof(LshMetaPageData, sig_width)
static inline Size
lsh_meta_size(uint32 version)
{
	return version == LSH_VERSION_EXACT ? LSH_META_SIZE_V1 :
		version == LSH_VERSION_PREFIX ? LSH_META_SIZE_V2 :
		version < LSH_VERSION ? LSH_META_SIZE_V4 : sizeof(LshMetaPageData);
}

/*
 * What is wrong with a metapage of this version whose contents end length
 * bytes after its start (pd_lower), or NULL. Versions 1 and 2 wrote exactly
 * their size and no later build lengthens one without writing the current
 * version: a longer one is a newer index whose version number was damaged,
 * whose pages would be read in the wrong format. Later versions may carry
 * more than their size.
 */
static inline const char *
lsh_meta_length_problem(uint32 version, long length)
{
	if (length < (long) lsh_meta_size(version))
		return "metapage with invalid pd_lower";
	if (version < LSH_VERSION_PENDING && length > (long) lsh_meta_size(version))
		return "metapage longer than its version's";
	return NULL;
}

/* versions this build reads */
#define LSH_VERSION_KNOWN(v)	((v) >= LSH_VERSION_EXACT && (v) <= LSH_VERSION)
/* the metapage has the pending list's fields */
#define LSH_HAS_PENDING(v)		((v) >= LSH_VERSION_PENDING)
/* the metapage has the widths (older versions hold 32-bit signatures) */
#define LSH_HAS_WIDTHS(v)		((v) >= LSH_VERSION)

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
	return version >= LSH_VERSION_SORTED ? Min((int) LshPageGetOpaque(page)->count, lsh_leaf_count(page)) : 0;
}

/* Append an entry; the caller has checked lsh_leaf_count < lsh_leaf_capacity. */
static inline void
lsh_leaf_append(Page page, uint32 key, uint32 rowid)
{
	lsh_leaf_put(page, lsh_leaf_count(page), key, rowid);
	((PageHeader) page)->pd_lower += lsh_leaf_entry_size(page);
}

/*
 * A data slot: its header, then k values of slot_width (a width code, as in
 * a signature's flags), rounded up to 4 bytes (core/lsh_layout.h). Readers
 * take the slot size from LshIndexParams.slot_size.
 */
static inline Size
lsh_slot_size(int num_perm, int slot_width)
{
	return (Size) minhash::lsh_layout::slot_size(num_perm, 4 >> slot_width);
}
/* the 32-bit slot of format 1 to 4 (and of format 5 at 32 bits) */
#define LSH_SLOT_SIZE(k)	lsh_slot_size((k), 0)
#define LshDataSlot(page, i, slot_size) \
	((LshSlotHeader *) ((char *) (page) + LSH_CONTENT_START + (Size) (i) * (slot_size)))
/* the slot's values, packed at its index's slot width */
#define LshSlotValues(slot) ((void *) ((char *) (slot) + sizeof(LshSlotHeader)))

/*
 * Pending pages. A keyed page holds, for each row, its row id followed by
 * its band keys (opaque.count of them, the index's bands), so that a scan
 * keeps the rows whose keys a probe would find in the tree and verifies only
 * those; a plain page (1.1's) holds row ids only. At least eight rows fit a
 * keyed page: an index with more bands keeps plain pages.
 */
#define LSH_PENDING_MAX_BANDS	((int) (LSH_CONTENT_SIZE / (8 * sizeof(uint32))) - 1)

/* uint32 words of one row on a pending page: its row id [and band keys] */
static inline int
lsh_pending_row_words(Page page)
{
	const LshPageOpaque opaque = LshPageGetOpaque(page);

	return (opaque->flags & LSH_PENDING_KEYED) ? 1 + opaque->count : 1;
}

static inline int
lsh_pending_row_size(Page page)
{
	return lsh_pending_row_words(page) * (int) sizeof(uint32);
}

static inline int
lsh_pending_count(Page page)
{
	return lsh_count_entries(page, lsh_pending_row_size(page));
}

static inline int
lsh_pending_capacity(Page page)
{
	return (int) (LSH_CONTENT_SIZE / lsh_pending_row_size(page));
}

/* row i of a pending page: its row id, then its band keys on a keyed page */
static inline uint32 *
lsh_pending_row(Page page, int i)
{
	return (uint32 *) ((char *) page + LSH_CONTENT_START) + (Size) i * lsh_pending_row_words(page);
}

/* tree heights beyond this are damage: 4 levels already address more than 32-bit row ids */
#define LSH_MAX_HEIGHT		16
#define LSH_PAGE_TREE		(LSH_PAGE_LEAF | LSH_PAGE_INTERNAL)
#define LSH_PAGE_ANY		(LSH_PAGE_META | LSH_PAGE_DATA | LSH_PAGE_TREE | LSH_PAGE_PENDING)

/* lsh_slots_per_page: the slots of size lsh_slot_size(num_perm, slot_width) a data page holds */
static inline int
lsh_slots_per_page(int num_perm, int slot_width)
{
	return (int) (LSH_CONTENT_SIZE / lsh_slot_size(num_perm, slot_width));
}

/*
 * lsh_page.cpp: what is wrong with a page or a slot (NULL: nothing). Every
 * reader checks a page through these before it trusts it: the checked walk
 * (lsh_access.cpp) raises XX002, minhash_lsh_check lists the problem.
 */
const char *lsh_page_problem(Page page, uint16 types, int level, const LshIndexParams *params);
const char *lsh_pending_page_problem(Page page);
const char *lsh_slot_problem(const LshSlotHeader *slot);

#endif
