/*
 * From similar pairs to clusters (pairs_cluster_finish.h): the sorts that
 * put rows in order and the two passes that name each cluster after its
 * first row, shared by minhash_clusters on one server and on Citus.
 */
#include "pg/pg_prelude.h"

#include "pg/pairs/pairs_cluster_finish.h"

extern "C" {
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/datum.h"
}

/*
 * Appends to a sort's keys the order of rows: [keep,] key, row id (the
 * columns where a tuple holds them; keepcol unused without keep). NULL keep
 * values sort last whichever way the column is ordered: a row with a value is
 * preferred to one without.
 */
int
cluster_row_order(const ClusterFinish *cf, int n, AttrNumber keepcol, AttrNumber keycol,
				  AttrNumber rowidcol, AttrNumber *cols, Oid *ops, Oid *colls, bool *nullsfirst)
{
	if (cf->has_keep)
	{
		cols[n] = keepcol;
		ops[n] = cf->keep_op;
		colls[n] = cf->keep_collation;
		nullsfirst[n++] = false;
	}
	cols[n] = keycol;
	ops[n] = cf->key_lt;
	colls[n] = cf->key_collation;
	nullsfirst[n++] = false;
	cols[n] = rowidcol;
	ops[n] = Int8LessOperator;
	colls[n] = InvalidOid;
	nullsfirst[n++] = false;
	return n;
}

/* a tuple descriptor's column for the keep column */
void
cluster_keep_entry(const ClusterFinish *cf, TupleDesc desc, AttrNumber col, const char *name)
{
	TupleDescInitEntry(desc, col, name, cf->keep_type, -1, 0);
	TupleDescInitEntryCollation(desc, col, cf->keep_collation);
}

static void
emit(ClusterFinish *cf, Datum key, Datum cluster_id)
{
	Datum		values[2] = {key, cluster_id};
	bool		nulls[2] = {false, false};

	tuplestore_putvalues(cf->out, cf->outdesc, values, nulls);
}

/* connected: the rows met in pairs, in a tuplestore (spilling beyond work_mem) */
void
cluster_members_begin(ClusterFinish *cf)
{
	cf->memberdesc = CreateTemplateTupleDesc(cf->has_keep ? 3 : 2);
	TupleDescInitEntry(cf->memberdesc, 1, "rowid", INT8OID, -1, 0);
	TupleDescInitEntry(cf->memberdesc, 2, "key", cf->key_type, -1, 0);
	if (cf->has_keep)
		cluster_keep_entry(cf, cf->memberdesc, 3, "keep");
	cf->members = tuplestore_begin_heap(false, false, work_mem);
}

/* connected: a row met in a pair, once */
void
cluster_add_member(ClusterFinish *cf, const ClusterRow *r)
{
	Datum		values[3];
	bool		nulls[3] = {false, false, r->keep_isnull};

	if (cluster_bit_test(cf->seen, r->rowid))
		return;
	cluster_bit_set(cf->seen, r->rowid);
	values[0] = Int64GetDatum(r->rowid);
	values[1] = r->key;
	values[2] = r->keep;
	tuplestore_putvalues(cf->members, cf->memberdesc, values, nulls);
}

/*
 * Components: sort (root, [keep,] key, rowid); the key of each root's first
 * row is its cluster id. A component of one row (on one server, a row of a
 * class edge that did not hold) is no cluster: a row is listed once its
 * component has a second. Ends the members' tuplestore.
 */
void
cluster_finish_connected(ClusterFinish *cf)
{
	TupleDesc	desc = CreateTemplateTupleDesc(cf->has_keep ? 4 : 3);
	AttrNumber	cols[4] = {1};
	Oid			ops[4] = {Int8LessOperator};
	Oid			colls[4] = {InvalidOid};
	bool		nullsfirst[4] = {false};
	int			nkeys = cluster_row_order(cf, 1, 4, 2, 3, cols, ops, colls, nullsfirst);
	Tuplesortstate *sort;
	TupleTableSlot *in;
	TupleTableSlot *slot;
	TupleTableSlot *sorted;
	bool		have_root = false;
	int64		root = 0;
	Datum		cluster_id = (Datum) 0;
	bool		first_listed = false;
	uint64		n = 0;

	TupleDescInitEntry(desc, 1, "root", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "key", cf->key_type, -1, 0);
	TupleDescInitEntryCollation(desc, 2, cf->key_collation);
	TupleDescInitEntry(desc, 3, "rowid", INT8OID, -1, 0);
	if (cf->has_keep)
		cluster_keep_entry(cf, desc, 4, "keep");
	sort = tuplesort_begin_heap(desc, nkeys, cols, ops, colls, nullsfirst, work_mem, NULL,
								TUPLESORT_NONE);
	in = MakeSingleTupleTableSlot(cf->memberdesc, &TTSOpsMinimalTuple);
	slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	sorted = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);

	tuplestore_rescan(cf->members);
	while (tuplestore_gettupleslot(cf->members, true, false, in))
	{
		uint32		rowid;

		if ((++n & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		slot_getallattrs(in);
		rowid = (uint32) DatumGetInt64(in->tts_values[0]);
		ExecClearTuple(slot);
		slot->tts_values[0] = Int64GetDatum(cluster_uf_find(cf->parent, rowid));
		slot->tts_values[1] = in->tts_values[1];
		slot->tts_values[2] = in->tts_values[0];
		memset(slot->tts_isnull, 0, sizeof(bool) * 3);
		if (cf->has_keep)
		{
			slot->tts_values[3] = in->tts_values[2];
			slot->tts_isnull[3] = in->tts_isnull[2];
		}
		ExecStoreVirtualTuple(slot);
		tuplesort_puttupleslot(sort, slot);
	}
	tuplesort_performsort(sort);
	while (tuplesort_gettupleslot(sort, true, false, sorted, NULL))
	{
		int64		r;

		if ((++n & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		slot_getallattrs(sorted);
		r = DatumGetInt64(sorted->tts_values[0]);
		if (!have_root || r != root)
		{
			/* the key of the component's first row; copied, the slot is reused */
			if (have_root && !cf->key_typbyval)
				pfree(DatumGetPointer(cluster_id));
			have_root = true;
			root = r;
			cluster_id = datumCopy(sorted->tts_values[1], cf->key_typbyval, cf->key_typlen);
			first_listed = false;
			continue;
		}
		if (!first_listed)
		{
			/* a second row: the component is a cluster, its first row listed now */
			emit(cf, cluster_id, cluster_id);
			first_listed = true;
		}
		emit(cf, sorted->tts_values[1], cluster_id);
	}
	tuplesort_end(sort);
	ExecDropSingleTupleTableSlot(in);
	ExecDropSingleTupleTableSlot(slot);
	ExecDropSingleTupleTableSlot(sorted);
	tuplestore_end(cf->members);
}

/* representative: by the first row ([keep_x,] key_x, rowid_x), then key_y, rowid_y */
void
cluster_edges_begin(ClusterFinish *cf)
{
	AttrNumber	cols[5];
	Oid			ops[5];
	Oid			colls[5];
	bool		nullsfirst[5];
	int			nkeys = cluster_row_order(cf, 0, 5, 1, 2, cols, ops, colls, nullsfirst);

	cols[nkeys] = 3;
	ops[nkeys] = cf->key_lt;
	colls[nkeys] = cf->key_collation;
	nullsfirst[nkeys++] = false;
	cols[nkeys] = 4;
	ops[nkeys] = Int8LessOperator;
	colls[nkeys] = InvalidOid;
	nullsfirst[nkeys++] = false;
	cf->edgedesc = CreateTemplateTupleDesc(cf->has_keep ? 5 : 4);
	TupleDescInitEntry(cf->edgedesc, 1, "key_x", cf->key_type, -1, 0);
	TupleDescInitEntryCollation(cf->edgedesc, 1, cf->key_collation);
	TupleDescInitEntry(cf->edgedesc, 2, "rowid_x", INT8OID, -1, 0);
	TupleDescInitEntry(cf->edgedesc, 3, "key_y", cf->key_type, -1, 0);
	TupleDescInitEntryCollation(cf->edgedesc, 3, cf->key_collation);
	TupleDescInitEntry(cf->edgedesc, 4, "rowid_y", INT8OID, -1, 0);
	if (cf->has_keep)
		cluster_keep_entry(cf, cf->edgedesc, 5, "keep_x");
	cf->edges = tuplesort_begin_heap(cf->edgedesc, nkeys, cols, ops, colls, nullsfirst, work_mem,
									 NULL, TUPLESORT_NONE);
	cf->edgeslot = MakeSingleTupleTableSlot(cf->edgedesc, &TTSOpsVirtual);
}

/* representative: x's pair with y, to be met when x's turn comes */
void
cluster_put_edge(ClusterFinish *cf, const ClusterRow *x, const ClusterRow *y)
{
	TupleTableSlot *slot = cf->edgeslot;

	ExecClearTuple(slot);
	slot->tts_values[0] = x->key;
	slot->tts_values[1] = Int64GetDatum(x->rowid);
	slot->tts_values[2] = y->key;
	slot->tts_values[3] = Int64GetDatum(y->rowid);
	memset(slot->tts_isnull, 0, sizeof(bool) * 4);
	if (cf->has_keep)
	{
		slot->tts_values[4] = x->keep;
		slot->tts_isnull[4] = x->keep_isnull;
	}
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(cf->edges, slot);
}

/*
 * Representatives: rows in order ([keep,] key, row id); a row not yet taken
 * takes every neighbour not yet taken. Its neighbours before it are all
 * taken by then (had one been free at its own turn, it would have taken this
 * row), so the representative is its cluster's first row: the smallest key,
 * or the row kept by the keep column. Every member is a neighbour of its
 * representative: similar to it, at the threshold. Ends the edges' sort.
 */
void
cluster_finish_representative(ClusterFinish *cf)
{
	uint8	   *taken = cf->seen;
	TupleTableSlot *sorted = MakeSingleTupleTableSlot(cf->edgedesc, &TTSOpsMinimalTuple);
	bool		have_x = false;
	uint32		x = 0;
	Datum		xkey = (Datum) 0;
	bool		is_rep = false;
	uint64		members = 0;
	uint64		n = 0;

	tuplesort_performsort(cf->edges);
	for (;;)
	{
		bool		more = tuplesort_gettupleslot(cf->edges, true, false, sorted, NULL);
		uint32		rx = 0;

		if ((++n & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (more)
		{
			slot_getallattrs(sorted);
			rx = (uint32) DatumGetInt64(sorted->tts_values[1]);
		}
		if (have_x && (!more || rx != x))
		{
			/* the previous row's neighbours are done */
			if (is_rep && members > 0)
				emit(cf, xkey, xkey);
			have_x = false;
		}
		if (!more)
			break;
		if (!have_x)
		{
			if (!cf->key_typbyval && xkey != (Datum) 0)
				pfree(DatumGetPointer(xkey));
			have_x = true;
			x = rx;
			xkey = datumCopy(sorted->tts_values[0], cf->key_typbyval, cf->key_typlen);
			is_rep = !cluster_bit_test(taken, x);
			if (is_rep)
				cluster_bit_set(taken, x);
			members = 0;
		}
		if (is_rep)
		{
			uint32		y = (uint32) DatumGetInt64(sorted->tts_values[3]);

			if (!cluster_bit_test(taken, y))
			{
				cluster_bit_set(taken, y);
				emit(cf, sorted->tts_values[2], xkey);
				members++;
			}
		}
	}
	tuplesort_end(cf->edges);
	ExecDropSingleTupleTableSlot(sorted);
	ExecDropSingleTupleTableSlot(cf->edgeslot);
}
