/*
 * minhash_lsh_check(index, heapallindexed => true): the index against its
 * table, in both directions.
 *
 *  - every LIVE slot that names a visible heap tuple must hold the signature
 *    the index expression computes from that tuple (else scans, which trust
 *    the stored signature and skip the recheck, would return the row for
 *    the wrong queries);
 *  - every visible heap tuple that the index covers (predicate true, value
 *    not NULL) must have a LIVE slot (else scans would miss it).
 *
 * Both sides go into one tuplesort (maintenance_work_mem, spilling beyond)
 * as (root TID, side) keys with a 64-bit digest of the signature; the sorted
 * stream brings each heap tuple next to the slots naming it. The heap side
 * comes from table_index_build_scan with the check's MVCC snapshot, which
 * evaluates the index expression and predicate (FormIndexDatum, ExecQual)
 * exactly as CREATE INDEX CONCURRENTLY does, and reports a heap-only tuple
 * under the TID of its HOT chain's root, as the index stores it. A digest is
 * XXH3 of the values and of (k, seed): two different signatures share one
 * with probability 2^-64. A slot whose row no longer satisfies a partial
 * index's predicate is not reported: the scan passes on only the rows that
 * satisfy it, as a build would.
 *
 * Index expressions are user code: they run as the table's owner inside a
 * security-restricted operation, as in REINDEX (minhash_owner_begin), so that
 * a superuser checking someone's index does not run that someone's functions
 * with superuser rights.
 */
#include "pg/pg_prelude.h"

#include "core/bbit.h"
#include "core/hash.h"
#include "pg/lsh/lsh.h"

extern "C" {
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"
}

/* side of a sort entry; a heap tuple sorts before the slots with its TID */
#define SIDE_HEAP	0			/* a visible heap tuple and its indexed value */
#define SIDE_NULL	1			/* a visible heap tuple whose indexed value is NULL */
#define SIDE_INDEX	2			/* a LIVE slot */
#define SIDE_KEYS	3			/* a LIVE row's band keys, where its slot cannot give them */

struct LshHeapCheck
{
	Relation	heap;
	Relation	index;
	Snapshot	snapshot;
	LshIndexParams params;		/* the index's: its slot width */
	TupleDesc	desc;
	TupleTableSlot *slot;
	Tuplesortstate *sort;
	MemoryContext tmpcxt;		/* per heap tuple: detoasted values */
};

static int64
sort_key(const ItemPointerData *tid, int side)
{
	/* block (32 bits), offset (16 bits), side (2 bits): non-negative in an int8 */
	return (int64) (((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 18) |
					((uint64) ItemPointerGetOffsetNumberNoCheck(tid) << 2) | (uint64) side);
}

/*
 * A signature's digest as the index stores it: its values at the slot width
 * (widened back to 32 bits), and its k, seed and width (the width code is 0
 * for 32 bits, so 32-bit digests are what they were before compact slots).
 */
static int64
sig_digest(int num_perm, uint64 seed, int sig_width, const uint32 *values)
{
	uint64		header[2] = {seed, (uint64) num_perm | ((uint64) sig_width << 16)};

	return (int64) (minhash::hash_bytes(values, sizeof(uint32) * num_perm) ^
					minhash::hash_bytes(header, sizeof(header)));
}

/* the band keys of a row, sorted ascending */
static int64
keys_digest(const uint32 *keys, int n)
{
	return (int64) minhash::hash_bytes(keys, sizeof(uint32) * n);
}

/*
 * An entry: its TID and side, the digest of the signature (as the slot keeps
 * it) and, for a heap tuple of an index whose slots cannot give band keys,
 * the digest of its band keys (SIDE_KEYS entries carry only that).
 */
static void
put_entry(LshHeapCheck *hc, const ItemPointerData *tid, int side, int64 digest, int64 keys)
{
	TupleTableSlot *slot = hc->slot;

	ExecClearTuple(slot);
	slot->tts_values[0] = Int64GetDatum(sort_key(tid, side));
	slot->tts_values[1] = Int64GetDatum(digest);
	slot->tts_values[2] = Int64GetDatum(keys);
	slot->tts_isnull[0] = false;
	slot->tts_isnull[1] = false;
	slot->tts_isnull[2] = false;
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(hc->sort, slot);
}

/*
 * Start the cross-check. snapshot is the check's registered MVCC snapshot;
 * the caller holds the check's locks on heap and index.
 */
LshHeapCheck *
lsh_heapcheck_begin(Relation heap, Relation index, Snapshot snapshot, const LshIndexParams *params)
{
	LshHeapCheck *hc = (LshHeapCheck *) palloc0(sizeof(LshHeapCheck));
	AttrNumber	attnums[2] = {1, 2};
	Oid			sortops[2] = {Int8LessOperator, Int8LessOperator};
	Oid			collations[2] = {InvalidOid, InvalidOid};
	bool		nullsfirst[2] = {false, false};
	/* sorted by (TID and side, digest); the keys' digest rides along */

	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check lsh index \"%s\" against its table",
						RelationGetRelationName(index)),
				 errdetail("The index is not valid (an interrupted CREATE INDEX CONCURRENTLY?): "
						   "it need not cover every row yet."),
				 errhint("Check it without heapallindexed, or REINDEX it.")));

	/* built while HOT chains were broken, after the snapshot (lsh.cpp) */
	if (lsh_index_too_new(index, snapshot))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("lsh index \"%s\" is too new for this transaction's snapshot",
						RelationGetRelationName(index)),
				 errhint("Run the check with heapallindexed in a new transaction or in READ COMMITTED.")));

	hc->heap = heap;
	hc->index = index;
	hc->snapshot = snapshot;
	hc->params = *params;
	hc->desc = CreateTemplateTupleDesc(3);
	TupleDescInitEntry(hc->desc, 1, "key", INT8OID, -1, 0);
	TupleDescInitEntry(hc->desc, 2, "digest", INT8OID, -1, 0);
	TupleDescInitEntry(hc->desc, 3, "keys", INT8OID, -1, 0);
	/* minimal: what tuplesort_gettupleslot stores into it */
	hc->slot = MakeSingleTupleTableSlot(hc->desc, &TTSOpsMinimalTuple);
	hc->sort = tuplesort_begin_heap(hc->desc, 2, attnums, sortops, collations, nullsfirst,
									maintenance_work_mem, NULL, TUPLESORT_NONE);
	hc->tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "lsh heap check",
									   ALLOCSET_DEFAULT_SIZES);
	return hc;
}

/* The index side: one LIVE slot. */
void
lsh_heapcheck_add_slot(LshHeapCheck *hc, const LshIndexParams *params, const LshSlotHeader *slot)
{
	uint32		values[MINHASH_MAX_NUM_PERM];

	lsh_slot_values32(params, slot, values);
	put_entry(hc, &slot->tid, SIDE_INDEX,
			  sig_digest(params->num_perm, params->seed, params->sig_width, values), 0);
}

/* The index side: a LIVE row's band keys (sorted), of an index whose slots cannot give them. */
void
lsh_heapcheck_add_keys(LshHeapCheck *hc, const ItemPointerData *tid, const uint32 *keys, int n)
{
	put_entry(hc, tid, SIDE_KEYS, 0, keys_digest(keys, n));
}

/* The heap side: called by table_index_build_scan for each visible tuple the index covers. */
static void
heap_tuple_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
					bool tupleIsAlive, void *state)
{
	LshHeapCheck *hc = (LshHeapCheck *) state;
	MemoryContext oldcxt;
	const MinHashSig *sig;

	if (isnull[0])
	{
		put_entry(hc, tid, SIDE_NULL, 0, 0);
		return;
	}
	oldcxt = MemoryContextSwitchTo(hc->tmpcxt);
	sig = DatumGetMinHashSig(values[0]);
	MemoryContextSwitchTo(oldcxt);
	if (hc->params.slot_width != MINHASH_WIDTH_32 && sig->num_perm == hc->params.num_perm)
	{
		/* what the slot would hold: the values at the slot width; and the row's band keys */
		uint32		packed[MINHASH_MAX_NUM_PERM];
		uint32		kept[MINHASH_MAX_NUM_PERM];
		int64		keys = 0;

		lsh_pack_values(&hc->params, sig->values, packed);
		minhash::widen_values(packed, sig->num_perm, (minhash::ValueWidth) hc->params.slot_width, kept);
		if (!lsh_verifies_exactly(&hc->params))
		{
			uint32	   *k = (uint32 *) palloc(sizeof(uint32) * hc->params.bands);

			lsh_sig_band_keys(&hc->params, sig, k);
			qsort(k, hc->params.bands, sizeof(uint32), lsh_uint32_cmp);
			keys = keys_digest(k, hc->params.bands);
		}
		put_entry(hc, tid, SIDE_HEAP, sig_digest(sig->num_perm, sig->seed, MinHashSigWidth(sig), kept), keys);
	}
	else
		put_entry(hc, tid, SIDE_HEAP, sig_digest(sig->num_perm, sig->seed, MinHashSigWidth(sig), sig->values), 0);
	MemoryContextReset(hc->tmpcxt);
}

static void
scan_heap(LshHeapCheck *hc)
{
	IndexInfo  *ii;
	TableScanDesc scan;
	MinhashOwnerContext owner;

	/*
	 * BuildIndexInfo too: it loads the index expressions and predicate,
	 * whose constant folding calls their functions.
	 */
	minhash_owner_begin(hc->heap, &owner);
	ii = BuildIndexInfo(hc->index);

	/*
	 * An MVCC snapshot: the tuples this transaction sees, as the first scan
	 * of CREATE INDEX CONCURRENTLY indexes them (ii_Concurrent tells the
	 * scan not to expect SnapshotAny).
	 */
	ii->ii_Concurrent = true;
	scan = table_beginscan_strat(hc->heap, hc->snapshot, 0, NULL, true, true);
	table_index_build_scan(hc->heap, hc->index, ii, true, false, heap_tuple_callback, hc, scan);
	minhash_owner_end(&owner);
}

static bool
next_entry(LshHeapCheck *hc, int64 *key, int64 *digest, int64 *keys)
{
	bool		isnull;

	if (!tuplesort_gettupleslot(hc->sort, true, false, hc->slot, NULL))
		return false;
	*key = DatumGetInt64(slot_getattr(hc->slot, 1, &isnull));
	*digest = DatumGetInt64(slot_getattr(hc->slot, 2, &isnull));
	*keys = DatumGetInt64(slot_getattr(hc->slot, 3, &isnull));
	return true;
}

/*
 * Scan the heap, then walk the sorted entries one TID at a time and report
 * through report(arg, message). Ends the cross-check.
 */
void
lsh_heapcheck_finish(LshHeapCheck *hc, void (*report) (void *arg, const char *msg), void *arg)
{
	int64		key;
	int64		digest;
	int64		keys;
	bool		more;
	uint64		n = 0;
	char		msg[256];

	scan_heap(hc);
	tuplesort_performsort(hc->sort);
	more = next_entry(hc, &key, &digest, &keys);
	while (more)
	{
		int64		tidkey = key >> 2;
		ItemPointerData tid;
		int			heap_side = -1;		/* SIDE_HEAP, SIDE_NULL, or none */
		int64		heap_digest = 0;
		int64		heap_keys = 0;
		int			nslots = 0;

		ItemPointerSet(&tid, (BlockNumber) (tidkey >> 16), (OffsetNumber) (tidkey & 0xFFFF));
		for (; more && (key >> 2) == tidkey; more = next_entry(hc, &key, &digest, &keys))
		{
			int			side = (int) (key & 3);

			if (side == SIDE_KEYS)
			{
				if (heap_side == SIDE_HEAP && keys != heap_keys)
				{
					snprintf(msg, sizeof(msg),
							 "row (%u,%u): the index's band entries are not those of the indexed value of the visible heap tuple",
							 ItemPointerGetBlockNumberNoCheck(&tid), ItemPointerGetOffsetNumberNoCheck(&tid));
					report(arg, msg);
				}
				continue;
			}
			if (side != SIDE_INDEX)
			{
				/* one visible version per HOT chain: the first one is it */
				if (heap_side < 0)
				{
					heap_side = side;
					heap_digest = digest;
					heap_keys = keys;
				}
				continue;
			}
			nslots++;
			if (heap_side == SIDE_HEAP && digest != heap_digest)
				snprintf(msg, sizeof(msg),
						 "row (%u,%u): the index holds a signature that differs from the indexed value of the visible heap tuple",
						 ItemPointerGetBlockNumberNoCheck(&tid), ItemPointerGetOffsetNumberNoCheck(&tid));
			else if (heap_side == SIDE_NULL)
				snprintf(msg, sizeof(msg),
						 "row (%u,%u): in the index, but the indexed value of the visible heap tuple is NULL",
						 ItemPointerGetBlockNumberNoCheck(&tid), ItemPointerGetOffsetNumberNoCheck(&tid));
			else
				continue;		/* the slot's signature matches, or its tuple is not visible */
			report(arg, msg);
		}
		if (heap_side == SIDE_HEAP && nslots == 0)
		{
			snprintf(msg, sizeof(msg), "row (%u,%u): visible in the table but not in the index",
					 ItemPointerGetBlockNumberNoCheck(&tid), ItemPointerGetOffsetNumberNoCheck(&tid));
			report(arg, msg);
		}
		if (++n % 4096 == 0)
			CHECK_FOR_INTERRUPTS();
	}
	tuplesort_end(hc->sort);
	ExecDropSingleTupleTableSlot(hc->slot);
	MemoryContextDelete(hc->tmpcxt);
}
