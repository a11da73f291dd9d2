/*
 * From similar pairs to clusters: what minhash_clusters does with its pairs
 * once they come, whether from the index walk (pairs_clusters.cpp) or from
 * Citus's distributed execution (citus_pairs.cpp). Both name rows by 32-bit
 * ids and order them by [keep column,] key, row id; the first row of a
 * cluster in that order names it.
 *
 *  connected       union-find over row ids, each row met in a pair kept once
 *                  with its key; components sorted by (root, order of rows)
 *  representative  both directions of every pair sorted by the first row;
 *                  the greedy pass over them (cluster_finish_representative)
 *
 * A plain struct: callers keep it in a frame that may longjmp, and the
 * tuplesorts, tuplestores and bitmaps it points to are palloc'd in the
 * caller's context.
 */
#ifndef MINHASH_PG_PAIRS_CLUSTER_FINISH_H
#define MINHASH_PG_PAIRS_CLUSTER_FINISH_H

#include "pg/pg_prelude.h"

extern "C" {
#include "executor/tuptable.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"
}

/* a row as the sorts see it */
typedef struct ClusterRow
{
	Datum		key;
	uint32		rowid;
	Datum		keep;			/* the keep column, when there is one */
	bool		keep_isnull;
} ClusterRow;

typedef struct ClusterFinish
{
	/* the order of rows: [keep,] key, row id */
	Oid			key_type;
	Oid			key_collation;
	Oid			key_lt;			/* the key type's < */
	int16		key_typlen;
	bool		key_typbyval;
	bool		has_keep;		/* the order starts with the keep column */
	Oid			keep_type;
	Oid			keep_collation;
	Oid			keep_op;		/* its type's < (ascending) or > (keep_desc) */

	Tuplestorestate *out;		/* the result: (key, cluster_id) */
	TupleDesc	outdesc;

	/* bit per row id, zeroed: connected, already a member; representative, taken */
	uint8	   *seen;

	/* connected: union-find over row ids, and the rows met in pairs */
	uint32	   *parent;
	Tuplestorestate *members;	/* (rowid, key[, keep]) of each row, once */
	TupleDesc	memberdesc;

	/* representative: both directions of every pair, sorted by the first row */
	Tuplesortstate *edges;		/* (key_x, rowid_x, key_y, rowid_y[, keep_x]) */
	TupleDesc	edgedesc;
	TupleTableSlot *edgeslot;
} ClusterFinish;

static inline bool
cluster_bit_test(const uint8 *bits, uint64 i)
{
	return (bits[i >> 3] & (1 << (i & 7))) != 0;
}

static inline void
cluster_bit_set(uint8 *bits, uint64 i)
{
	bits[i >> 3] |= (uint8) (1 << (i & 7));
}

/* root of x, halving the path on the way */
static inline uint32
cluster_uf_find(uint32 *parent, uint32 x)
{
	while (parent[x] != x)
	{
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* the larger root joins the smaller: roots only decrease, so finds stay short */
static inline void
cluster_uf_union(uint32 *parent, uint32 x, uint32 y)
{
	x = cluster_uf_find(parent, x);
	y = cluster_uf_find(parent, y);
	if (x < y)
		parent[y] = x;
	else if (y < x)
		parent[x] = y;
}

int			cluster_row_order(const ClusterFinish *cf, int n, AttrNumber keepcol, AttrNumber keycol,
							  AttrNumber rowidcol, AttrNumber *cols, Oid *ops, Oid *colls,
							  bool *nullsfirst);
void		cluster_keep_entry(const ClusterFinish *cf, TupleDesc desc, AttrNumber col,
							   const char *name);

/* connected */
void		cluster_members_begin(ClusterFinish *cf);
void		cluster_add_member(ClusterFinish *cf, const ClusterRow *r);
void		cluster_finish_connected(ClusterFinish *cf);

/* representative */
void		cluster_edges_begin(ClusterFinish *cf);
void		cluster_put_edge(ClusterFinish *cf, const ClusterRow *x, const ClusterRow *y);
void		cluster_finish_representative(ClusterFinish *cf);

#endif
