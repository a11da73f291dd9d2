/*
 * lsh: an LSH-band index access method for minhash signatures.
 *
 * A row's signature (k values) is cut into b bands of r values; two rows are
 * candidates when they agree on every value of at least one band, which
 * happens with probability 1 - (1 - s^r)^b for Jaccard similarity s. The
 * index keeps, per row, the signature itself (to verify candidates without a
 * heap visit) and one 7- or 8-byte entry per band, keyed by a 32-bit key of
 * the band. For compact signatures (format 5) it may keep fewer bits of each
 * value than the signature has: verification is then a prefilter that never
 * rejects a match, and the executor rechecks what passes against the table
 * (xs_recheck). See docs/lsh.md for the user-facing side.
 *
 * The pages and their checks are in lsh_page.h; this header has what the
 * access method does with them: the callbacks, the checked walk, the leaf
 * cursor, the descent and the parameters.
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
#include "pg/minhash.h"
#include "pg/lsh/lsh_array.h"
#include "pg/lsh/lsh_page.h"

extern "C" {
#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/reloptions.h"
#include "storage/lockdefs.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/rel.h"
#include "utils/snapshot.h"
}

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

/*
 * fastupdate when the index has no reloptions at all (rd_options is NULL
 * then, so the reloption's own default never applies): on, as GIN's.
 */
#define LSH_DEFAULT_FASTUPDATE	true

/* Subphases of CREATE INDEX, for pg_stat_progress_create_index */
#define LSH_PHASE_SCAN		2
#define LSH_PHASE_SORT		3
#define LSH_PHASE_LOAD		4

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
	int			verify_bits;	/* bits of each value a data slot keeps; 0: not given */
} LshOptions;

/* the parameters of an index, fixed once k is known */
typedef struct LshIndexParams
{
	int			num_perm;
	uint64		seed;
	int			family;
	int			bands;
	int			rows;
	int			slots_per_page;
	uint32		version;		/* on-disk version, LSH_VERSION_EXACT to LSH_VERSION */
	minhash::PrefixLayout layout;	/* the band key layout (prefix keys from version 2) */
	int			sig_width;		/* width code of the signatures (0 = 32 bits, 1 = 16, 2 = 8) */
	int			slot_width;		/* width code of the values a slot keeps: sig_width or narrower */
	Size		slot_size;		/* bytes of a data slot */
} LshIndexParams;

/*
 * Does the index keep every bit of the signatures' values? Then it verifies
 * candidates itself, with exactly the operators' estimate, and a slot gives
 * its row's band keys back; else its slots' narrower values only rule rows
 * out, what passes is rechecked against the table, and a row's band keys
 * (computed from the signature's values) are in its entries and on its
 * pending page only.
 */
static inline bool
lsh_verifies_exactly(const LshIndexParams *params)
{
	return params->slot_width == params->sig_width;
}

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
	uint64		pending_copied;	/* scans that read the pending list from a backend's copy */
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
bool		lsh_index_too_new(Relation index, Snapshot snapshot);
Relation	lsh_open_owned(Oid indexoid, LOCKMODE mode, Relation *heap, const char *funcname);
char	   *lshbuildphasename(int64 phasenum);

/* lsh_meta.cpp: pages, the metapage and the parameters */
void		lsh_init_page(Page page, uint16 type, uint16 level);
void		lsh_init_data_page(Page page, int num_perm, int slot_width);
void		lsh_init_metapage(Page page, const LshOptions *opts);
Buffer		lsh_new_buffer(Relation index);
void		lsh_meta_params(const LshMetaPageData *meta, LshIndexParams *params);
bool		lsh_choose_bands(const LshMetaPageData *meta, int num_perm, int *bands, int *rows,
							 double *threshold);
void		lsh_resolve_params(LshMetaPage meta, int num_perm, uint64 seed, int family, int width);
bool		lsh_signature_matches(const LshIndexParams *params, const MinHashSig *sig);
void		lsh_check_signature(Relation index, const LshIndexParams *params, const MinHashSig *sig,
								const char *what);
void		lsh_band_keys(const LshIndexParams *params, const uint32 *values, uint32 *keys);
/* a signature's (in its index form, DatumGetMinHashSig) and (lsh_verifies_exactly) a stored slot's band keys */
void		lsh_sig_band_keys(const LshIndexParams *params, const MinHashSig *sig, uint32 *keys);
void		lsh_slot_band_keys(const LshIndexParams *params, const LshSlotHeader *slot, uint32 *keys);
/* values32 (an index form's) packed at the slot width into out, as a slot stores them */
void		lsh_pack_values(const LshIndexParams *params, const uint32 *values32, void *out);
/* a slot's values, zero-extended to 32 bits */
void		lsh_slot_values32(const LshIndexParams *params, const LshSlotHeader *slot, uint32 *out);
/* positions where two arrays of values packed at the slot width agree */
int			lsh_matching(const LshIndexParams *params, const void *a, const void *b);
void		lsh_notice_format1(Relation index);

/* lsh_probe.cpp: the probe rule shared by scans, all pairs, minhash_match and Citus */
int			lsh_probe_depth(const LshIndexParams *params, double threshold);
int			lsh_prefix_depth(const LshIndexParams *params, double threshold);
double		lsh_probe_depth_recall(const LshIndexParams *params, int depth, double threshold);
double		lsh_candidate_probability(const LshIndexParams *params, int depth, double s);
uint32		lsh_probe_mask(const LshIndexParams *params, int depth);
void		lsh_probe_range(const LshIndexParams *params, uint32 key, int depth, uint32 *lo, uint32 *hi);
bool		lsh_probe_first_key(const LshIndexParams *params, int depth, const uint32 *a,
								const uint32 *b, uint32 key);

/* lsh_slots.cpp: the signature store */
uint32		lsh_rowid(const LshIndexParams *params, BlockNumber blkno, int slot);
BlockNumber	lsh_rowid_block(const LshIndexParams *params, uint32 rowid);
int			lsh_rowid_slot(const LshIndexParams *params, uint32 rowid);
void		lsh_free_list_push(BlockNumber *head, Page page, BlockNumber blkno);
LshSlotHeader *lsh_slot_read(Relation index, Page page, const LshIndexParams *params, int slot,
							 BlockNumber blkno, const char **problem = NULL);

/* A data slot for a new signature: found by lsh_slot_alloc, filled by lsh_slot_store (lsh_slots.cpp). */
typedef struct LshNewSlot
{
	LshIndexParams params;		/* the index's, or those the first signature fixes */
	bool		first;			/* the index's first signature: the metapage becomes meta_first */
	LshMetaPageData meta_first;
	Buffer		buf;			/* the data page, EXCLUSIVE */
	bool		fresh;			/* a new page, initialised by lsh_slot_store */
	int			slot;
	uint32		rowid;
} LshNewSlot;

struct LshWalk;
struct LshWalRecord;
void		lsh_slot_alloc(Relation index, Buffer metabuf, const MinHashSig *sig, struct LshWalk *w,
						   LshNewSlot *t);
void		lsh_slot_store(struct LshWalRecord *r, int m, LshMetaPage meta, const LshNewSlot *t,
						   const MinHashSig *sig, ItemPointer tid);

/*
 * Where a block was last found in shared buffers, so that
 * the next read of it pins that buffer with ReadRecentBuffer instead of
 * looking the block up in the shared buffer table (a cache miss or two in
 * gigabytes of shared buffers). Only a hint: ReadRecentBuffer checks that
 * the buffer still holds the block, so a stale hint costs no more than the
 * lookup it failed to save. The one buffer hint of the lsh code, kept for
 * each metapage (lsh_read_meta), each leaf of the cached tree levels
 * (lsh_tree.cpp), a walk's next block (LshWalk) and the all-pairs walk's
 * data pages (pairs_walk.cpp). All zero: no hint.
 */
typedef struct LshBufferHint
{
	Oid			relid;			/* the index whose block it is */
	BlockNumber blkno;
	Buffer		buffer;
} LshBufferHint;

/* The hint's buffer if it is one for blkno of index, else InvalidBuffer: unpinned, for prefetching only. */
static inline Buffer
lsh_hint_buffer(const LshBufferHint *h, Relation index, BlockNumber blkno)
{
	return h->relid == RelationGetRelid(index) && h->blkno == blkno ? h->buffer : InvalidBuffer;
}

static inline void
lsh_hint_remember(LshBufferHint *h, Relation index, BlockNumber blkno, Buffer buf)
{
	h->relid = RelationGetRelid(index);
	h->blkno = blkno;
	h->buffer = buf;
}

/*
 * The hint's buffer, pinned, if the hint is one for blkno of index and that
 * buffer still holds the block (ReadRecentBuffer checks); else InvalidBuffer,
 * and the hint is dropped.
 */
static inline Buffer
lsh_hint_pin(LshBufferHint *h, Relation index, BlockNumber blkno)
{
	Buffer		buf = lsh_hint_buffer(h, index, blkno);

	if (BufferIsValid(buf) && ReadRecentBuffer(MH_REL_LOCATOR(index), MAIN_FORKNUM, blkno, buf))
		return buf;
	h->buffer = InvalidBuffer;
	return InvalidBuffer;
}

/* blkno of index, pinned: through the hint, else read and remembered in it. */
static inline Buffer
lsh_hint_read(LshBufferHint *h, Relation index, BlockNumber blkno)
{
	Buffer		buf = lsh_hint_pin(h, index, blkno);

	if (!BufferIsValid(buf))
	{
		buf = ReadBuffer(index, blkno);
		lsh_hint_remember(h, index, blkno, buf);
	}
	return buf;
}

/* lsh_tree.cpp: the band tree's descent and leaves */
int			lsh_child_search(const LshEntry *e, int n, uint32 key, bool leftmost);
int			lsh_child_index(Page page, uint32 key, bool leftmost);
BlockNumber	lsh_find_leaf(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost);
BlockNumber	lsh_find_leaf_low(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost,
							  bool *has_low, uint32 *low);
BlockNumber	lsh_find_leaf_hinted(Relation index, const LshMetaPageData *meta, uint32 key, bool leftmost,
								 bool *has_low, uint32 *low, int *hint);
BlockNumber	lsh_find_leaf_keep_copy(Relation index, const LshMetaPageData *meta, uint32 key,
										bool leftmost, bool *has_low, uint32 *low);
LshBufferHint *lsh_leaf_hint(Relation index, int hint);
LshBufferHint *lsh_leaf_hint_for(Relation index, int hint, BlockNumber blkno);
void		lsh_leaf_hint_prefetch(Relation index, int hint);
void		lsh_sort_entries(LshEntry *e, Size n);
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
	/* where the next read may find its block (lsh_walk_recent), used once */
	LshBufferHint recent;
} LshWalk;

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

/* lsh_selfuncs.cpp: selectivity of "a % b" (args a, b) at a threshold; the build's statistics */
namespace minhash { struct BandMoments; }
double		lsh_similar_restriction_sel(struct PlannerInfo *root, List *args, int varRelid, double threshold);
bool		lsh_meta_moments(const LshMetaPageData *meta, minhash::BandMoments *moments);

/* lsh_scan.cpp */
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
LshHeapCheck *lsh_heapcheck_begin(Relation heap, Relation index, Snapshot snapshot,
								  const LshIndexParams *params);
void		lsh_heapcheck_add_slot(LshHeapCheck *hc, const LshIndexParams *params,
								   const LshSlotHeader *slot);
void		lsh_heapcheck_add_keys(LshHeapCheck *hc, const ItemPointerData *tid, const uint32 *keys, int n);
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
