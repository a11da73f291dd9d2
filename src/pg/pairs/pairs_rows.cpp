/*
 * Rows by row id: whether the heap row an index slot names is visible to the
 * query's snapshot, its key, (exact mode) its shingles and (an index that
 * rechecks against the table, heap_verify) its signature.
 *
 * A row takes part in many pairs, and meets its partners in up to `bands`
 * band groups scattered over the walk, so each row is fetched once and kept
 * in a cache: an open-addressing table of row ids (half of work_mem) whose
 * keys and shingles live in an arena (a quarter of work_mem). When either is
 * full the whole cache is dropped and refilled on demand -- memory stays
 * bounded, and a larger work_mem buys fewer repeated heap fetches.
 *
 * A cached answer stays right for the whole walk: a row visible to the
 * snapshot cannot be vacuumed away (the snapshot holds back the horizon), so
 * its slot is not reused; a slot that held an invisible row can only be
 * reused by a row inserted after the snapshot, invisible too. The TID is
 * kept anyway and a different one is fetched afresh.
 */
#include "pg/pg_prelude.h"

#include "pg/pairs/pairs.h"

extern "C" {
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
}

void
pairs_cache_init(PairsRun *run)
{
	Size		table_bytes = run->args.cache_bytes > 0 ? run->args.cache_bytes : (Size) work_mem * 1024 / 2;
	uint32		cap = 1024;

	while ((Size) cap * 2 * sizeof(PairsRow) <= table_bytes && cap < (1U << 30))
		cap *= 2;
	run->cache_cap = cap;
	run->cache_max = cap / 4 * 3;
	run->cache_count = 0;
	run->cache = (PairsRow *) palloc_extended(sizeof(PairsRow) * cap, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	run->cache_arena_max = (Size) work_mem * 1024 / 4;
	/* blocks small enough that the arena's measured size tracks its bound */
	run->cache_cxt = AllocSetContextCreate(run->cxt, "minhash pairs rows", 0, 8 * 1024,
										   Max(8 * 1024, Min(run->cache_arena_max / 8,
															 ALLOCSET_DEFAULT_MAXSIZE)));
}

static void
cache_reset(PairsRun *run)
{
	memset(run->cache, 0, sizeof(PairsRow) * run->cache_cap);
	run->cache_count = 0;
	MemoryContextReset(run->cache_cxt);
	run->cache_resets++;
}

/* the entry of rowid, or the empty entry where it would go */
static PairsRow *
cache_lookup(PairsRun *run, uint64 rowid)
{
	uint32		mask = run->cache_cap - 1;
	uint32		i = murmurhash32((uint32) (rowid ^ (rowid >> 32))) & mask;

	for (;;)
	{
		PairsRow   *e = &run->cache[i];

		if (e->status == PAIRS_ROW_EMPTY || e->rowid == rowid)
			return e;
		i = (i + 1) & mask;
	}
}

/*
 * Exact mode: the rows whose text has more distinct shingles than the bound
 * (pairs_shingles returned NULL). Their pairs are verified by the estimate
 * (pairs_emit_verified); they are remembered, by row id, so that a row the
 * cache dropped is not shingled again in vain, and so that the NOTICE at the
 * end (pairs_end) counts each once. Rarely more than a few rows.
 */
static bool
pairs_too_large_known(PairsRun *run, uint64 rowid)
{
	return run->too_large != NULL && hash_search(run->too_large, &rowid, HASH_FIND, NULL) != NULL;
}

static void
pairs_too_large_add(PairsRun *run, uint64 rowid)
{
	if (run->too_large == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint64);
		ctl.entrysize = sizeof(uint64);
		ctl.hcxt = run->cxt;
		run->too_large = hash_create("minhash pairs rows too large", 64, &ctl,
									 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	(void) hash_search(run->too_large, &rowid, HASH_ENTER, NULL);
}

/* Fetch the row the slot named and fill r (status, key, shingles). */
static void
fetch_row(PairsRun *run, PairsRow *r)
{
	int			part = pairs_part_of(run, r->rowid);
	PairsPart  *pt = &run->parts[part];
	ExprContext *econtext = run->econtext;
	Datum		key;

	r->status = PAIRS_ROW_INVISIBLE;
	r->keep = (Datum) 0;
	r->keep_isnull = true;
	r->shingles = NULL;
	r->sig = NULL;
	r->text_isnull = false;
	/* a row without a key cannot be named in the result: left out (docs/pairs.md) */
	if (pairs_fetch_key(run, part, &r->tid, &key))
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

		if (run->args.exact)
		{
			Datum		doc;
			bool		isnull;

			/* the index expression is the table owner's code (owner.cpp) */
			if (pt->text_as_owner)
			{
				MinhashOwnerContext owner;

				minhash_owner_begin(pt->heap, &owner);
				doc = ExecEvalExpr(pt->text_expr, econtext, &isnull);
				minhash_owner_end(&owner);
			}
			else
				doc = ExecEvalExpr(pt->text_expr, econtext, &isnull);

			if (isnull)
				r->text_isnull = true;
			else if (!pairs_too_large_known(run, r->rowid))
			{
				PairsShingles *s = pairs_shingles(DatumGetTextPP(doc), &run->spec, run->text_config);

				if (s == NULL)
					pairs_too_large_add(run, r->rowid);
				else
				{
					Size		size = offsetof(PairsShingles, h) + sizeof(uint64) * s->n;

					r->shingles = (PairsShingles *) MemoryContextAllocHuge(run->cache_cxt, size);
					memcpy(r->shingles, s, size);
				}
			}
		}
		if (run->heap_verify)
		{
			Datum		d;
			bool		isnull;

			if (pt->sig_as_owner)
			{
				MinhashOwnerContext owner;

				minhash_owner_begin(pt->heap, &owner);
				d = ExecEvalExpr(pt->sig_expr, econtext, &isnull);
				minhash_owner_end(&owner);
			}
			else
				d = ExecEvalExpr(pt->sig_expr, econtext, &isnull);
			if (!isnull)
			{
				MinHashSig *sig = minhash_sig_detoast(d);
				Size		size = MINHASH_WIDTH_BYTES(MinHashSigWidth(sig)) * sig->num_perm;

				/* the index's (an expression that now computes another is what the check reports) */
				lsh_check_signature(pt->index, &run->params, sig, "signature");
				r->sig = MemoryContextAlloc(run->cache_cxt, size);
				memcpy(r->sig, sig->values, size);
			}
		}
		if (OidIsValid(run->keep_type))
			r->keep_isnull = !pairs_fetch_keep(run, part, &r->keep);
		MemoryContextSwitchTo(run->cache_cxt);
		/* detoasted by pairs_fetch_key: no TOAST pointers in results */
		r->key = run->key_typbyval ? key : datumCopy(key, false, run->key_typlen);
		if (OidIsValid(run->keep_type) && !r->keep_isnull && !run->keep_typbyval)
			r->keep = datumCopy(r->keep, false, run->keep_typlen);
		r->status = PAIRS_ROW_VISIBLE;
		MemoryContextSwitchTo(oldcxt);
	}
	ResetExprContext(econtext);
	ExecClearTuple(pt->slot);
}

/* the entry for (rowid, tid), fetched if not cached; the caller made room */
static PairsRow *
cache_get(PairsRun *run, uint64 rowid, ItemPointer tid)
{
	PairsRow   *e = cache_lookup(run, rowid);

	if (e->status == PAIRS_ROW_EMPTY)
	{
		e->rowid = rowid;
		e->tid = *tid;
		run->cache_count++;
		fetch_row(run, e);
	}
	else if (!ItemPointerEquals(&e->tid, tid))
	{
		e->tid = *tid;
		fetch_row(run, e);
	}
	return e;
}

/*
 * Both rows of a pair. Room for both is made first, so the first entry is
 * not dropped by a reset while the second is fetched.
 */
void
pairs_resolve(PairsRun *run, uint64 ida, ItemPointer tida, uint64 idb, ItemPointer tidb,
			  PairsRow **a, PairsRow **b)
{
	if ((cache_lookup(run, ida)->status == PAIRS_ROW_EMPTY ||
		 cache_lookup(run, idb)->status == PAIRS_ROW_EMPTY) &&
		(run->cache_count + 2 > run->cache_max ||
		 MemoryContextMemAllocated(run->cache_cxt, false) > run->cache_arena_max))
		cache_reset(run);
	*a = cache_get(run, ida, tida);
	/* b's probe may have ended at the entry a just took: look again */
	*b = cache_get(run, idb, tidb);
}

/* One row (minhash_match: the indexed end of a pair; the other end is the batch's). */
PairsRow *
pairs_resolve_one(PairsRun *run, uint64 id, ItemPointer tid)
{
	if (cache_lookup(run, id)->status == PAIRS_ROW_EMPTY &&
		(run->cache_count + 1 > run->cache_max ||
		 MemoryContextMemAllocated(run->cache_cxt, false) > run->cache_arena_max))
		cache_reset(run);
	return cache_get(run, id, tid);
}

/*
 * The row at tid of a part, fetched under the snapshot: false if it is not
 * visible or its key is NULL, else its key (detoasted), valid until the next
 * call, the row left in the part's slot as econtext's scan tuple. The row
 * cache's fetch above and the pass in table order (pairs_table_order.cpp)
 * both come here.
 */
bool
pairs_fetch_key(PairsRun *run, int part, ItemPointer tid, Datum *key)
{
	PairsPart  *pt = &run->parts[part];
	ExprContext *econtext = run->econtext;
	bool		call_again = false;
	bool		all_dead = false;
	bool		isnull;
	MemoryContext oldcxt;

	ResetExprContext(econtext);
	ExecClearTuple(pt->slot);
	run->fetches++;
	if (!table_index_fetch_tuple(pt->fetch, tid, run->snapshot, pt->slot, &call_again, &all_dead))
		return false;
	econtext->ecxt_scantuple = pt->slot;
	oldcxt = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	if (pt->key_as_owner)
	{
		MinhashOwnerContext owner;

		minhash_owner_begin(pt->heap, &owner);
		*key = ExecEvalExpr(pt->key_expr, econtext, &isnull);
		minhash_owner_end(&owner);
	}
	else
		*key = ExecEvalExpr(pt->key_expr, econtext, &isnull);
	/* no TOAST pointers in results */
	if (!isnull && run->key_typlen == -1)
		*key = PointerGetDatum(PG_DETOAST_DATUM_PACKED(*key));
	MemoryContextSwitchTo(oldcxt);
	return !isnull;
}

/*
 * After pairs_fetch_key returned true: the keep column of that row (still in
 * the part's slot), detoasted, valid as the key is; false if it is NULL. A
 * plain column: evaluating it runs no code of any role.
 */
bool
pairs_fetch_keep(PairsRun *run, int part, Datum *keep)
{
	ExprContext *econtext = run->econtext;
	MemoryContext oldcxt = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	bool		isnull;

	*keep = ExecEvalExpr(run->parts[part].keep_expr, econtext, &isnull);
	if (!isnull && run->keep_typlen == -1)
		*keep = PointerGetDatum(PG_DETOAST_DATUM_PACKED(*keep));
	MemoryContextSwitchTo(oldcxt);
	return !isnull;
}

/* after the last pairs_fetch_key: its memory and buffer pins released */
void
pairs_fetch_key_done(PairsRun *run)
{
	ResetExprContext(run->econtext);
	for (int p = 0; p < run->nparts; p++)
		ExecClearTuple(run->parts[p].slot);
}
