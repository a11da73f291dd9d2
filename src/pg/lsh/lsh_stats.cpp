/*
 * minhash_lsh_stats(index): the parameters of an lsh index and a census of
 * its pages, rows and entries. Like minhash_lsh_check, it requires ownership
 * of the table (lsh_open_owned).
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "pg/lsh/lsh.h"

extern "C" {
#include "access/htup_details.h"
#include "access/table.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(minhash_lsh_stats);
}

/*
 * minhash_lsh_stats: the parameters and a census of pages, rows and entries,
 * from one pass over the index (AccessShareLock: concurrent writes may make
 * the figures a moment's snapshot, not an exact one).
 */
extern "C" Datum
minhash_lsh_stats(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Datum		distributed;

	/* a Citus table's index is a shell: its shards' indexes, summed */
	if (mh_citus_lsh_stats(fcinfo, &distributed))
		PG_RETURN_DATUM(distributed);

	Relation	heap;
	Relation	index = lsh_open_owned(indexoid, AccessShareLock, &heap, "minhash_lsh_stats");
	TupleDesc	tupdesc;
	LshMetaPage meta;
	Buffer		metabuf;
	LshMetaPageData m;
	LshIndexParams params;
	BlockNumber nblocks;
	int64		data_pages = 0, leaf_pages = 0, internal_pages = 0, unused_pages = 0;
	int64		live = 0, dead = 0, free_slots = 0, entries = 0, entry_bytes = 0;
	Datum		values[18];
	bool		nulls[18] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	m = *meta;
	UnlockReleaseBuffer(metabuf);
	lsh_meta_params(&m, &params);
	nblocks = RelationGetNumberOfBlocks(index);

	for (BlockNumber blkno = LSH_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Page		page;
		/* the readers' page checks: a census of a damaged index would mislead */
		Buffer		buf = lsh_read_block(index, blkno, BUFFER_LOCK_SHARE, NULL, &params, &page);

		if (PageIsNew(page))
			unused_pages++;
		else if (LshPageType(page) == LSH_PAGE_DATA)
		{
			data_pages++;
			for (int s = 0; s < m.slots_per_page; s++)
			{
				uint16		state = LshDataSlot(page, s, params.slot_size)->state;

				live += state == LSH_SLOT_LIVE;
				dead += state == LSH_SLOT_DEAD;
				free_slots += state == LSH_SLOT_FREE;
			}
		}
		else if (LshPageType(page) == LSH_PAGE_LEAF)
		{
			leaf_pages++;
			entries += lsh_leaf_count(page);
			entry_bytes += ((PageHeader) page)->pd_lower - LSH_CONTENT_START;
		}
		else if (LshPageType(page) == LSH_PAGE_INTERNAL)
			internal_pages++;
		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
	}
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);

	values[0] = Int32GetDatum(m.num_perm);
	values[1] = Int64GetDatum((int64) m.seed);
	values[2] = Int32GetDatum(m.bands);
	values[3] = Int32GetDatum(m.rows);
	values[4] = Float8GetDatum(m.threshold);
	values[5] = Int32GetDatum(m.root == InvalidBlockNumber ? 0 : m.height);
	values[6] = Int64GetDatum(nblocks);
	values[7] = Int64GetDatum(data_pages);
	values[8] = Int64GetDatum(leaf_pages);
	values[9] = Int64GetDatum(internal_pages);
	values[10] = Int64GetDatum(unused_pages);
	values[11] = Int64GetDatum(live);
	values[12] = Int64GetDatum(dead);
	values[13] = Int64GetDatum(free_slots);
	values[14] = Int64GetDatum(entries);
	values[15] = Float8GetDatum(leaf_pages > 0 ? (double) entry_bytes / (leaf_pages * LSH_CONTENT_SIZE) : 0.0);
	if (m.num_perm == 0)
	{
		nulls[0] = nulls[1] = nulls[2] = nulls[3] = nulls[4] = true;
	}
	/* version 3: the pending list (1.0's declaration of the function has 16 columns: heap_form_tuple takes natts) */
	values[16] = Int64GetDatum(LSH_HAS_PENDING(m.version) ? (int64) m.pending_pages : 0);
	values[17] = Int64GetDatum(LSH_HAS_PENDING(m.version) ? (int64) m.pending_rows : 0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
