/*
 * All similar pairs and duplicate clusters of a table, read off an lsh index
 * in one pass (minhash_similar_pairs, minhash_clusters; docs/pairs.md).
 *
 * The pipeline, one file per stage:
 *  pairs_setup.cpp    arguments, relations, privileges, the key and text expressions
 *  pairs_merge.cpp    the leaves of every part in key order (a merge of cursors)
 *  pairs_walk.cpp     the walk: band groups, candidate pairs, verification
 *  pairs_parallel.cpp the walk split into key ranges among parallel workers
 *  pairs_rows.cpp     rows by row id: snapshot visibility, key, shingles (bounded cache)
 *  pairs_table_order.cpp  the same in table order, for tables larger than the cache
 *  pairs_table_order_parallel.cpp  that pass shared by parallel workers
 *  pairs_exact.cpp    shingle hashes and exact Jaccard (the core, behind noexcept)
 *  pairs_funcs.cpp    minhash_similar_pairs
 *  pairs_clusters.cpp minhash_clusters (union-find, representative mode)
 *  pairs_cluster_finish.{h,cpp}  from pairs to clusters (also for Citus)
 *  pairs_match.cpp    minhash_match: a batch of rows against the index, one merge
 *  pairs_pages.h      data pages by row id (hints, checks), for the walk and match
 *
 * Partitioned indexes: the walk merges the sorted leaf levels of every
 * partition's index (a k-way merge of leaf cursors), so a band group holds
 * the rows of all partitions sharing that band key and cross-partition pairs
 * are found exactly as pairs within one index. Rows are named by a 64-bit
 * global row id, the partition's base plus its row id within its index.
 *
 * Dedup without memory: two rows that share several bands meet in several
 * band groups. A candidate pair met in the group of key K is verified only
 * if K is the first key the two stored signatures share at the probe depth
 * (lsh_probe_first_key: the first band whose keys match, as a % probe
 * matches them); that group is met exactly once in the walk (row ids are
 * deduplicated within a group), so every pair comes out once with no set of
 * pairs seen.
 */
#ifndef MINHASH_PG_PAIRS_H
#define MINHASH_PG_PAIRS_H

#include "pg/pg_prelude.h"

#include "core/shingle.h"
#include "pg/lsh/lsh.h"

extern "C" {
#include "access/relscan.h"
#include "access/tableam.h"
#include "executor/executor.h"
#include "utils/snapshot.h"
}

/* row cache entry states */
#define PAIRS_ROW_EMPTY		0
#define PAIRS_ROW_INVISIBLE	1	/* not visible to the snapshot, or key NULL, or TID moved */
#define PAIRS_ROW_VISIBLE	2

/* distinct shingle hashes of a row's text, sorted ascending */
typedef struct PairsShingles
{
	int32		n;
	uint64		h[FLEXIBLE_ARRAY_MEMBER];
} PairsShingles;

/* What the walk knows of a row: one heap fetch per row while it stays cached. */
typedef struct PairsRow
{
	uint64		rowid;			/* global row id: part base + row id in its index */
	uint8		status;			/* PAIRS_ROW_* */
	bool		text_isnull;	/* exact mode: the text is NULL (never similar) */
	ItemPointerData tid;		/* the heap TID the slot named when fetched */
	Datum		key;			/* in the cache's arena when by reference */
	Datum		keep;			/* minhash_clusters' keep column, likewise (run->keep_type) */
	bool		keep_isnull;
	PairsShingles *shingles;	/* exact mode; NULL with a text: too large, use the estimate */
	void	   *sig;			/* heap_verify: the row's signature values (NULL: none) */
} PairsRow;

typedef struct PairsArgs
{
	Oid			indexoid;
	const char *key_column;
	Oid			key_type;		/* type the keys are returned as */
	double		threshold;
	bool		exact;
	const char *text_column;	/* NULL: from the index expression */
	text	   *unit;			/* NULL: from the index expression, else 'word' */
	int32		k;				/* -1: from the index expression, else 0 (the default) */
	const char *keep_column;	/* minhash_clusters: the column choosing the row kept, or NULL */
	const char *funcname;		/* for messages */
	Oid			ext_namespace;	/* schema of the extension's functions */
	Size		cache_bytes;	/* the row cache's table; 0: half of work_mem */
} PairsArgs;

struct PairsRun;

/* Called once per pair (a's key sorts before b's when the key type has an order). */
typedef void (*PairsEmitFn) (struct PairsRun *run, void *arg, const PairsRow *a,
							 const PairsRow *b, double similarity);

/* One lsh index walked: the index itself, or one partition's index. */
typedef struct PairsPart
{
	Relation	heap;
	Relation	index;
	BlockNumber leftmost;
	BlockNumber nblocks;		/* index size when the walk started */
	uint64		nrowids;		/* row ids of rows visible to the snapshot are below this */
	uint64		base;			/* global row id of its row id 0 */
	IndexFetchTableData *fetch;
	TupleTableSlot *slot;
	ExprState  *key_expr;		/* the key column, coerced to key_type */
	Node	   *key_node;		/* key_expr before it was prepared */
	bool		key_as_owner;	/* key_expr calls user code: run it as the table owner */
	ExprState  *keep_expr;		/* the keep column, as it is (a Var: no code runs) */
	Node	   *keep_node;
	ExprState  *text_expr;		/* exact mode: the text to shingle */
	bool		text_as_owner;	/* text_expr is the index's: run it as the table owner */
	ExprState  *sig_expr;		/* heap_verify: the indexed signature (column or expression) */
	bool		sig_as_owner;	/* sig_expr is an index expression: run it as the table owner */
	uint8	   *checked;		/* pairs_walk: bit per block checked to be a data page */
	BlockNumber heap_nblocks;	/* the table's known size, for checking stored TIDs */
} PairsPart;

typedef struct PairsRun
{
	PairsArgs	args;
	const char *indexname;		/* the index named in the call (for messages) */
	int			nparts;			/* 1 for a plain index */
	PairsPart  *parts;			/* in ascending base order */
	LshIndexParams params;		/* shared by all parts; num_perm = 0: nothing inserted */
	/*
	 * The probe rule at the threshold (lsh_probe.cpp), the % operator's: a
	 * band group is a run of keys equal under key_mask (lsh_probe_mask: the
	 * prefix of the probe depth; all bits for whole bands), and a pair is
	 * verified in the group of the first key its rows share
	 * (lsh_probe_first_key).
	 */
	uint32		key_mask;
	int			depth;
	/*
	 * The index keeps fewer bits of each value than its signatures have
	 * (compact slots): the walk only rules pairs out, and the rows'
	 * signatures, fetched with them, decide (pairs_emit_verified).
	 */
	bool		heap_verify;
	uint64		nrowids;		/* global row ids are below this */
	Relation	parentheap;		/* a partitioned index and its table, else NULL */
	Relation	parentindex;

	/* rows: heap fetches under the query's snapshot */
	Snapshot	snapshot;
	EState	   *estate;
	ExprContext *econtext;
	minhash::ShingleSpec spec;	/* exact mode */
	Oid			text_config;	/* exact mode: words from this text search
								 * configuration (minhash(text, regconfig, ...)),
								 * or InvalidOid: spec.unit */
	int16		key_typlen;
	bool		key_typbyval;
	FmgrInfo	key_cmp;		/* btree comparison of key_type, if key_has_cmp */
	bool		key_has_cmp;
	Oid			key_collation;
	/* the keep column (args.keep_column), read with the key; InvalidOid: none */
	Oid			keep_type;
	Oid			keep_collation;
	int16		keep_typlen;
	bool		keep_typbyval;

	/*
	 * minhash_clusters without exact: large band groups are reduced to their
	 * classes of identical signatures (pairs_walk.cpp, collapse_group).
	 */
	bool		collapse;

	/* exact mode: row ids of texts too large for their shingles (pairs_rows.cpp), or NULL */
	struct HTAB *too_large;

	/* pairs kept for resolution in table order, or NULL (pairs_table_order.cpp) */
	struct PairsDeferred *deferred;

	/* the row cache (pairs_rows.cpp) */
	MemoryContext cache_cxt;	/* keys and shingles of cached rows */
	PairsRow   *cache;
	uint32		cache_cap;		/* power of two */
	uint32		cache_count;
	uint32		cache_max;		/* entries before a reset */
	Size		cache_arena_max;

	/* the walk (pairs_walk.cpp) */
	MemoryContext cxt;			/* everything of the run */
	Size		budget;			/* bytes for one group's signatures */
	TimestampTz started;
	TimestampTz last_notice;
	int			last_decile;

	/* counters, reported at DEBUG1 and in progress NOTICEs */
	uint64		leaves;
	uint64		entries;
	uint64		groups;			/* band groups of two rows or more */
	uint64		spilled_groups;
	uint64		collapsed_groups;	/* reduced to classes of identical signatures */
	uint64		candidates;		/* pairs verified (first shared band) */
	uint64		pairs;			/* pairs emitted */
	uint64		deferred_pairs; /* pairs verified, their rows to resolve in table order */
	uint64		fetches;		/* heap fetches */
	uint64		cache_resets;
} PairsRun;

/* pairs_setup.cpp */
void		pairs_begin(PairsRun *run, const PairsArgs *args);
void		pairs_end(PairsRun *run);
void		pairs_parse_args(FunctionCallInfo fcinfo, PairsArgs *args, const char *funcname,
							 bool polymorphic, int threshold_arg, int exact_arg);
double		pairs_threshold_arg(FunctionCallInfo fcinfo, int argno);
const char *pairs_name_arg(FunctionCallInfo fcinfo, int argno, const char *what, bool required);
int			pairs_compare_keys(PairsRun *run, Datum a, Datum b);
/* also for Citus tables (citus_pairs.cpp), whose pairs come from distributed SQL */
void		pairs_check_index(Relation index);
AttrNumber	pairs_column_attnum(Relation heap, const char *name, const char *what);
Node	   *pairs_key_coercion(const PairsArgs *args, Relation heap, AttrNumber attnum);
void		pairs_check_keep_order(const char *keep_column, Oid typid);
void		pairs_notice_too_large(const char *funcname, long n);
Var		   *pairs_text_column(const PairsArgs *args, Relation heap);
bool		pairs_text_as_owner(const PairsArgs *args, Relation heap, Node *textexpr);

/* the part a global row id belongs to */
static inline int
pairs_part_of(const PairsRun *run, uint64 gid)
{
	int			lo = 0;
	int			hi = run->nparts - 1;

	while (lo < hi)
	{
		int			mid = (lo + hi + 1) / 2;

		if (run->parts[mid].base <= gid)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* pairs_walk.cpp */
void		pairs_walk(PairsRun *run, PairsEmitFn emit, void *arg);

/*
 * Besides verified pairs, a collapsing walk (run->collapse) sends two kinds
 * of record through the same channel (serial, parallel queue, table order),
 * marked by a similarity below zero; their rows are resolved like a pair's
 * and handed to the emit function visible or not, a first:
 *  PAIRS_SAME            b has the same signature as a, the first row (the
 *                        smallest row id) of that class of identical rows;
 *  pairs_class_edge(s)   a and b, the first rows of two classes, are similar
 *                        (s), and so is every row of one to every row of the
 *                        other.
 */
#define PAIRS_SAME	(-1.0)

static inline double
pairs_class_edge(double sim)
{
	return -2.0 - sim;
}

static inline bool
pairs_is_class_edge(double sim)
{
	return sim <= -2.0;
}

static inline double
pairs_class_edge_similarity(double sim)
{
	return -2.0 - sim;
}

/*
 * A walk over compact slots (run->heap_verify) only rules pairs out: it sends
 * the others, marked by a similarity of 2 or more, with the band of the group
 * it met them in; pairs_emit_verified decides on the rows' signatures, and
 * emits a pair in the group of the first key the two share only
 * (lsh_probe_first_key, which needs the signatures' values).
 */
static inline double
pairs_in_band(int band)
{
	return 2.0 + band;
}

static inline bool
pairs_is_in_band(double sim)
{
	return sim >= 2.0;
}

static inline int
pairs_in_band_band(double sim)
{
	return (int) (sim - 2.0);
}

/*
 * A key of that band for lsh_probe_first_key: compact signatures are in
 * format 5 indexes only, whose keys carry their band in the top bits, and
 * the rule reads nothing else of the key.
 */
static inline uint32
pairs_in_band_key(const LshIndexParams *params, int band)
{
	int			bb = params->layout.band_bits;

	Assert(params->version != LSH_VERSION_EXACT);
	return bb == 0 ? 0 : (uint32) band << (32 - bb);
}

/* A pair that passed verification in the walk, before its rows are resolved. */
typedef void (*PairsVerifiedFn) (PairsRun *run, void *arg, uint64 ida, ItemPointer tida,
								 uint64 idb, ItemPointer tidb, double similarity);
typedef struct PairsWalk PairsWalk;

PairsWalk  *pairs_walk_begin(PairsRun *run, PairsVerifiedFn verified, void *arg, bool ranged);
void		pairs_walk_range(PairsWalk *w, uint32 lo, uint32 hi);
void		pairs_walk_end(PairsWalk *w);
void		pairs_walk_summary(PairsRun *run);
void		pairs_emit_verified(PairsRun *run, PairsEmitFn emit, void *arg, uint64 ida,
								ItemPointer tida, uint64 idb, ItemPointer tidb, double sim);

/* a walk in this backend (serial, or the leader's share) emits its pairs directly */
typedef struct PairsDirectOut
{
	PairsEmitFn emit;
	void	   *arg;
} PairsDirectOut;
void		pairs_direct_verified(PairsRun *run, void *arg, uint64 ida, ItemPointer tida, uint64 idb,
								  ItemPointer tidb, double sim);
void		pairs_report_progress(PairsRun *run, double done);

/* pairs_parallel.cpp */
extern int	pairs_min_parallel_index_size;
void		pairs_parallel_init(void);
int			pairs_parallel_workers(const PairsRun *run);
bool		pairs_parallel_walk(PairsRun *run, PairsEmitFn emit, void *arg);

/* pairs_rows.cpp */
void		pairs_cache_init(PairsRun *run);
void		pairs_resolve(PairsRun *run, uint64 ida, ItemPointer tida, uint64 idb,
						  ItemPointer tidb, PairsRow **a, PairsRow **b);
PairsRow   *pairs_resolve_one(PairsRun *run, uint64 id, ItemPointer tid);

bool		pairs_fetch_key(PairsRun *run, int part, ItemPointer tid, Datum *key);
bool		pairs_fetch_keep(PairsRun *run, int part, Datum *keep);
void		pairs_prepare_key(PairsRun *run, PairsPart *part);
void		pairs_fetch_key_done(PairsRun *run);

/* pairs_table_order.cpp */
typedef struct PairsDeferred PairsDeferred;
void		pairs_table_order_begin(PairsRun *run);
void		pairs_table_order_add(PairsRun *run, uint64 ida, ItemPointer tida, uint64 idb,
								  ItemPointer tidb, double sim);
void		pairs_table_order_finish(PairsRun *run, PairsEmitFn emit, void *arg);

/* pairs_exact.cpp */
size_t		pairs_shingle_limit(void);
PairsShingles *pairs_shingles(text *doc, const minhash::ShingleSpec *spec, Oid config);
double		pairs_exact_jaccard(const PairsShingles *a, const PairsShingles *b);

#endif
