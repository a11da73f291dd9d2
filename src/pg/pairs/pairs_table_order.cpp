/*
 * Rows resolved in table order, for tables larger than the cache.
 *
 * The walk verifies pairs in band-key order, which is random in the table.
 * Resolving each pair's rows as it comes (pairs_rows.cpp) costs a random
 * heap read per row not in the row cache. While table and index stay in
 * memory that is cheap; beyond memory each is a disk read (about 1.7 ms
 * each on this project's test machines: a 10M-row walk would take hours).
 *
 * So when the table and the index together exceed effective_cache_size
 * (PostgreSQL's own estimate of the memory caching them), pairs are
 * deferred instead (docs/pairs.md, "Tables larger than memory"):
 *  1. each verified pair's two ends go into a sort by (part, heap TID);
 *  2. one pass in that order reads each row once, front to back through the
 *     table, and puts (end, visible, key[, keep]) into a second sort by end; dense
 *     runs of blocks are left to the kernel's read-ahead, the blocks after
 *     a jump prefetched (pairs_table_order.h); parallel workers share the
 *     pass when the walk may use them (pairs_table_order_parallel.cpp);
 *  3. reading that back brings the two ends of each pair together again;
 *     the pair is emitted when both rows are visible.
 * Both sorts are tuplesorts of half of work_mem each, spilling to temporary
 * files; the row cache is not used.
 *
 * Before the walk the index itself is read front to back when it fits
 * effective_cache_size: the walk reads nearly every page of it, in random
 * order, and a sequential read costs a fraction of random ones.
 *
 * Exact verification needs each row's text, not just its key, and an index
 * with compact slots each row's signature: both keep the row cache.
 */
#include "pg/pg_prelude.h"

#include "pg/pairs/pairs_table_order.h"

extern "C" {
#include "catalog/pg_am.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "utils/tuplesort.h"
}

/* the columns of the two sorts */
enum
{
	END_PART = 1,				/* the part (partition) the row is in */
	END_TID,					/* its heap TID, as its slot named it */
	END_NUMBER,					/* 2 * pair number + side */
	END_ROWID,					/* global row id */
	END_SIM,					/* the pair's similarity */
	END_NCOLS = END_SIM
};
enum
{
	ROW_NUMBER = 1,				/* END_NUMBER */
	ROW_ROWID,
	ROW_SIM,
	ROW_KEY,					/* NULL: the row is not visible (or has no key) */
	ROW_KEEP,					/* minhash_clusters' keep column, when it has one */
	ROW_NCOLS = ROW_KEEP
};

/* kB for each of the two sorts, which are filled and read at once */
#define SORT_MEM	Max(work_mem / 2, 64)

/* ends read ahead of the fetches, so their heap blocks can be prefetched */
#define LOOKAHEAD	256

struct PairsDeferred
{
	Tuplesortstate *ends;
	TupleDesc	ends_desc;
	TupleTableSlot *ends_in;
	TupleTableSlot *ends_out;
	Tuplesortstate *rows;
	TupleDesc	rows_desc;
	int			rows_ncols;		/* ROW_KEEP with a keep column, else ROW_KEY */
	TupleTableSlot *rows_in;
	uint64		npairs;
	uint64		rows_fetched;
};

/*
 * Read the whole index front to back when it fits the cache, through a
 * small ring of buffers (as a sequential scan, pg_prewarm's 'read' mode):
 * the walk then finds its pages in memory. Sequential reads let the kernel
 * read ahead in large requests, where posix_fadvise on every block (the
 * first way, pg_prewarm's 'prefetch') makes one small request per block:
 * the cost pairs_table_order.h measured for the table. For the index the two
 * took the same time at 10M rows here
 * (bench/notes/2026-11-24-10m-all-pairs-shared-pass.md); this one also says,
 * at DEBUG1, when the read is done.
 */
static void
read_indexes_ahead(PairsRun *run)
{
	uint64		blocks = 0;
	BufferAccessStrategy ring;

	for (int p = 0; p < run->nparts; p++)
		blocks += run->parts[p].nblocks;
	if (blocks > (uint64) effective_cache_size)
		return;
	ring = GetAccessStrategy(BAS_BULKREAD);
	for (int p = 0; p < run->nparts; p++)
		for (BlockNumber b = 0; b < run->parts[p].nblocks; b++)
		{
			if ((b & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			ReleaseBuffer(ReadBufferExtended(run->parts[p].index, MAIN_FORKNUM, b, RBM_NORMAL,
											 ring));
		}
	FreeAccessStrategy(ring);
	elog(DEBUG1, "%s: index \"%s\" read ahead, " UINT64_FORMAT " blocks", run->args.funcname,
		 run->indexname, blocks);
}

/*
 * Before the walk: read the index ahead if it fits the cache, and defer the
 * rows' resolution to table order if table and index do not.
 */
void
pairs_table_order_begin(PairsRun *run)
{
	uint64		blocks = 0;
	PairsDeferred *d;
	MemoryContext oldcxt;
	AttrNumber	cols[2] = {END_PART, END_TID};
	Oid			ops[2] = {Int4LessOperator, TIDLessOperator};
	Oid			colls[2] = {InvalidOid, InvalidOid};
	bool		nullsfirst[2] = {false, false};

	read_indexes_ahead(run);
	if (run->args.exact || run->heap_verify)
		return;					/* needs the rows' text or signatures: the row cache */
	for (int p = 0; p < run->nparts; p++)
		blocks += run->parts[p].nblocks + RelationGetNumberOfBlocks(run->parts[p].heap);
	if (blocks <= (uint64) effective_cache_size)
		return;

	oldcxt = MemoryContextSwitchTo(run->cxt);
	d = (PairsDeferred *) palloc0(sizeof(PairsDeferred));
	d->ends_desc = CreateTemplateTupleDesc(END_NCOLS);
	TupleDescInitEntry(d->ends_desc, END_PART, "part", INT4OID, -1, 0);
	TupleDescInitEntry(d->ends_desc, END_TID, "tid", TIDOID, -1, 0);
	TupleDescInitEntry(d->ends_desc, END_NUMBER, "number", INT8OID, -1, 0);
	TupleDescInitEntry(d->ends_desc, END_ROWID, "rowid", INT8OID, -1, 0);
	TupleDescInitEntry(d->ends_desc, END_SIM, "sim", FLOAT8OID, -1, 0);
	d->ends = tuplesort_begin_heap(d->ends_desc, 2, cols, ops, colls, nullsfirst, SORT_MEM,
								   NULL, TUPLESORT_NONE);
	d->ends_in = MakeSingleTupleTableSlot(d->ends_desc, &TTSOpsVirtual);
	run->deferred = d;
	MemoryContextSwitchTo(oldcxt);
	elog(DEBUG1, "%s: table and index of \"%s\" exceed effective_cache_size: rows resolved in table order",
		 run->args.funcname, run->indexname);
}

static void
put_end(PairsDeferred *d, int part, ItemPointer tid, int64 number, uint64 rowid, double sim)
{
	TupleTableSlot *slot = d->ends_in;

	ExecClearTuple(slot);
	slot->tts_values[END_PART - 1] = Int32GetDatum(part);
	slot->tts_values[END_TID - 1] = PointerGetDatum(tid);
	slot->tts_values[END_NUMBER - 1] = Int64GetDatum(number);
	slot->tts_values[END_ROWID - 1] = Int64GetDatum((int64) rowid);
	slot->tts_values[END_SIM - 1] = Float8GetDatum(sim);
	memset(slot->tts_isnull, 0, sizeof(bool) * END_NCOLS);
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(d->ends, slot);
}

/* a verified pair, kept for the pass in table order */
void
pairs_table_order_add(PairsRun *run, uint64 ida, ItemPointer tida, uint64 idb, ItemPointer tidb,
					  double sim)
{
	PairsDeferred *d = run->deferred;
	int64		number = (int64) d->npairs++ * 2;

	run->deferred_pairs++;

	put_end(d, pairs_part_of(run, ida), tida, number, ida, sim);
	put_end(d, pairs_part_of(run, idb), tidb, number + 1, idb, sim);
}

/* the next end in table order into e; false at the end */
bool
pairs_table_order_next_end(PairsDeferred *d, PairsEnd *e)
{
	TupleTableSlot *slot = d->ends_out;

	if (!tuplesort_gettupleslot(d->ends, true, false, slot, NULL))
		return false;
	slot_getallattrs(slot);
	e->part = DatumGetInt32(slot->tts_values[END_PART - 1]);
	e->tid = *(ItemPointer) DatumGetPointer(slot->tts_values[END_TID - 1]);
	e->number = DatumGetInt64(slot->tts_values[END_NUMBER - 1]);
	e->rowid = DatumGetInt64(slot->tts_values[END_ROWID - 1]);
	e->sim = DatumGetFloat8(slot->tts_values[END_SIM - 1]);
	return true;
}

/* an end's row, resolved: into the sort by end number (key NULL: not visible) */
void
pairs_table_order_put_row(PairsDeferred *d, int64 number, int64 rowid, double sim, bool visible,
						  Datum key, Datum keep, bool keep_isnull)
{
	TupleTableSlot *out = d->rows_in;

	ExecClearTuple(out);
	out->tts_values[ROW_NUMBER - 1] = Int64GetDatum(number);
	out->tts_values[ROW_ROWID - 1] = Int64GetDatum(rowid);
	out->tts_values[ROW_SIM - 1] = Float8GetDatum(sim);
	out->tts_values[ROW_KEY - 1] = visible ? key : (Datum) 0;
	memset(out->tts_isnull, 0, sizeof(bool) * d->rows_ncols);
	out->tts_isnull[ROW_KEY - 1] = !visible;
	if (d->rows_ncols == ROW_KEEP)
	{
		out->tts_values[ROW_KEEP - 1] = visible && !keep_isnull ? keep : (Datum) 0;
		out->tts_isnull[ROW_KEEP - 1] = !visible || keep_isnull;
	}
	ExecStoreVirtualTuple(out);
	tuplesort_puttupleslot(d->rows, out);
}

void
pairs_last_row_init(PairsLastRow *last)
{
	last->part = -1;
	ItemPointerSetInvalid(&last->tid);
	last->visible = false;
	last->key = (Datum) 0;
	last->keep = (Datum) 0;
	last->keep_isnull = true;
	last->fetched = 0;
}

/*
 * e's row: true and its key in last->key (and keep column in last->keep) if
 * visible; fetched unless it is the last row
 */
bool
pairs_fetch_end(PairsRun *run, PairsLastRow *last, const PairsEnd *e)
{
	if (e->part != last->part || !ItemPointerEquals((ItemPointer) &e->tid, &last->tid))
	{
		last->visible = pairs_fetch_key(run, e->part, (ItemPointer) &e->tid, &last->key);
		last->keep_isnull = !last->visible || !OidIsValid(run->keep_type) ||
			!pairs_fetch_keep(run, e->part, &last->keep);
		last->part = e->part;
		last->tid = e->tid;
		last->fetched++;
	}
	return last->visible;
}

/*
 * The pass in this backend: every end in table order, its row fetched once
 * (ends of one row are adjacent). A ring of LOOKAHEAD ends is read ahead so
 * the blocks after a jump are prefetched before they are fetched.
 */
static void
resolve_here(PairsRun *run, PairsDeferred *d)
{
	PairsEnd   *ring = (PairsEnd *) palloc(sizeof(PairsEnd) * LOOKAHEAD);
	int			head = 0;
	int			count = 0;
	bool		more = true;
	int32		prefetched_part = -1;
	BlockNumber prefetched_block = InvalidBlockNumber;
	PairsLastRow last;
	bool		visible;
	uint64		n = 0;

	pairs_last_row_init(&last);
	for (;;)
	{
		PairsEnd   *e;

		while (more && count < LOOKAHEAD)
		{
			PairsEnd   *in = &ring[(head + count) % LOOKAHEAD];

			if (!pairs_table_order_next_end(d, in))
			{
				more = false;
				break;
			}
			count++;
			pairs_prefetch_jump(run->parts[in->part].heap, in->part,
								ItemPointerGetBlockNumber(&in->tid), &prefetched_part,
								&prefetched_block);
		}
		if (count == 0)
			break;
		e = &ring[head];
		head = (head + 1) % LOOKAHEAD;
		count--;
		if ((++n & 0xFFF) == 0)
			CHECK_FOR_INTERRUPTS();

		visible = pairs_fetch_end(run, &last, e);
		pairs_table_order_put_row(d, e->number, e->rowid, e->sim, visible, last.key, last.keep,
								  last.keep_isnull);
	}
	d->rows_fetched += last.fetched;
	pairs_fetch_key_done(run);
	pfree(ring);
}

/*
 * Pass 2: every end's row, in table order, into a sort by end number; by
 * parallel workers (pairs_table_order_parallel.cpp) or in this backend.
 */
static void
resolve_in_table_order(PairsRun *run, PairsDeferred *d)
{
	int			ncols = d->rows_ncols = OidIsValid(run->keep_type) ? ROW_KEEP : ROW_KEY;
	TupleDesc	desc = d->rows_desc = CreateTemplateTupleDesc(ncols);
	AttrNumber	col = ROW_NUMBER;
	Oid			op = Int8LessOperator;
	Oid			coll = InvalidOid;
	bool		nullsfirst = false;

	TupleDescInitEntry(desc, ROW_NUMBER, "number", INT8OID, -1, 0);
	TupleDescInitEntry(desc, ROW_ROWID, "rowid", INT8OID, -1, 0);
	TupleDescInitEntry(desc, ROW_SIM, "sim", FLOAT8OID, -1, 0);
	TupleDescInitEntry(desc, ROW_KEY, "key", run->args.key_type, -1, 0);
	TupleDescInitEntryCollation(desc, ROW_KEY, run->key_collation);
	if (ncols == ROW_KEEP)
	{
		TupleDescInitEntry(desc, ROW_KEEP, "keep", run->keep_type, -1, 0);
		TupleDescInitEntryCollation(desc, ROW_KEEP, run->keep_collation);
	}
	d->rows = tuplesort_begin_heap(desc, 1, &col, &op, &coll, &nullsfirst, SORT_MEM, NULL,
								   TUPLESORT_NONE);
	d->rows_in = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	d->ends_out = MakeSingleTupleTableSlot(d->ends_desc, &TTSOpsMinimalTuple);

	tuplesort_performsort(d->ends);
	elog(DEBUG1, "%s: the ends of " UINT64_FORMAT " pairs sorted by table position",
		 run->args.funcname, d->npairs);
	if (!pairs_table_order_parallel(run, d, &d->rows_fetched))
		resolve_here(run, d);
	tuplesort_end(d->ends);
	d->ends = NULL;
	ExecDropSingleTupleTableSlot(d->ends_out);
	ExecDropSingleTupleTableSlot(d->rows_in);
}

/* one row of a pair, from the sort by end number */
static void
row_of(const PairsDeferred *d, TupleTableSlot *slot, PairsRow *r)
{
	slot_getallattrs(slot);
	memset(r, 0, sizeof(PairsRow));
	r->rowid = (uint64) DatumGetInt64(slot->tts_values[ROW_ROWID - 1]);
	r->status = slot->tts_isnull[ROW_KEY - 1] ? PAIRS_ROW_INVISIBLE : PAIRS_ROW_VISIBLE;
	r->key = slot->tts_values[ROW_KEY - 1];
	r->keep_isnull = d->rows_ncols != ROW_KEEP || slot->tts_isnull[ROW_KEEP - 1];
	r->keep = r->keep_isnull ? (Datum) 0 : slot->tts_values[ROW_KEEP - 1];
}

/*
 * After the walk: resolve the deferred pairs' rows in table order, then
 * emit each pair whose rows are both visible. Nothing to do unless
 * pairs_table_order_begin deferred them.
 */
void
pairs_table_order_finish(PairsRun *run, PairsEmitFn emit, void *arg)
{
	PairsDeferred *d = run->deferred;
	MemoryContext oldcxt;
	Tuplesortstate *rows;
	TupleTableSlot *first;
	TupleTableSlot *second;
	uint64		n = 0;

	if (d == NULL)
		return;
	oldcxt = MemoryContextSwitchTo(run->cxt);
	elog(DEBUG1, "%s: resolving the rows of " UINT64_FORMAT " pairs in table order",
		 run->args.funcname, d->npairs);
	resolve_in_table_order(run, d);
	rows = d->rows;
	elog(DEBUG1, "%s: " UINT64_FORMAT " rows fetched in table order", run->args.funcname,
		 d->rows_fetched);
	tuplesort_performsort(rows);
	first = MakeSingleTupleTableSlot(d->rows_desc, &TTSOpsMinimalTuple);
	second = MakeSingleTupleTableSlot(d->rows_desc, &TTSOpsMinimalTuple);
	MemoryContextSwitchTo(oldcxt);

	/* ends 2i and 2i + 1 are pair i: adjacent in this order */
	while (tuplesort_gettupleslot(rows, true, true, first, NULL))
	{
		PairsRow	a;
		PairsRow	b;

		if ((++n & 0xFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!tuplesort_gettupleslot(rows, true, true, second, NULL))
			elog(ERROR, "%s: a deferred pair lost its second row", run->args.funcname);
		row_of(d, first, &a);
		row_of(d, second, &b);
		if (DatumGetFloat8(first->tts_values[ROW_SIM - 1]) < 0)
		{
			/* a class record of a collapsing walk (pairs.h): a first, visible or not */
			emit(run, arg, &a, &b, DatumGetFloat8(first->tts_values[ROW_SIM - 1]));
		}
		else if (a.status == PAIRS_ROW_VISIBLE && b.status == PAIRS_ROW_VISIBLE)
		{
			double		sim = DatumGetFloat8(first->tts_values[ROW_SIM - 1]);

			run->pairs++;
			if (pairs_compare_keys(run, a.key, b.key) > 0)
				emit(run, arg, &b, &a, sim);
			else
				emit(run, arg, &a, &b, sim);
		}
	}
	tuplesort_end(rows);
	ExecDropSingleTupleTableSlot(first);
	ExecDropSingleTupleTableSlot(second);
	run->deferred = NULL;
}
