/*
 * minhash_match(index, key_column[, key_type], batch, batch_key_column,
 * batch_sig_column, threshold): every pair of a row of the batch (a table,
 * view or materialized view holding signatures) and a row of the indexed
 * table whose estimated similarity reaches the threshold, each once, as
 * (batch_key, key, similarity) -- the answer of the per-row join
 *     SELECT n.key, o.key FROM batch n JOIN docs o ON o.sig %>= ROW(n.sig, t)::minhash_query
 * through the index, in one pass instead of one probe per batch row
 * (docs/pairs.md, "minhash_match").
 *
 * The batch is read by a plain SELECT of its two columns through SPI, as the
 * caller (its privileges, row-level security and the view's own rules apply
 * as to any query of the caller's), under the query's snapshot, in chunks
 * that fit hash_mem, as a hash join's table (match_chunk_budget). For each
 * chunk:
 *  1. each row's band keys (lsh_band_keys) under the probe mask of the
 *     threshold (lsh_probe_mask: the % operator's depth), sorted: the batch's
 *     band groups;
 *  2. for each part of the index (the index, or each partition's), its
 *     pending rows' entries, then its leaf level merged with those keys in
 *     key order: where batch keys are dense every leaf is read once along
 *     the right links, where they are sparse the next key is found by a
 *     descent of the band tree; each leaf is searched under its share lock
 *     and its right link taken with it, as the all-pairs walk reads leaves
 *     (pairs_merge.cpp), and the indexed rows of each batch key's range meet
 *     the batch rows with that key as candidates (indexed row id, batch row,
 *     key), added once the leaf is released;
 *  3. the candidates sorted by indexed row id (each data page read once per
 *     sort), each pair kept in the group of the first key its rows share
 *     (lsh_probe_first_key, as the all-pairs walk does), verified by the %
 *     operator's estimate on the stored signature, and resolved through the
 *     all-pairs walk's row cache (visibility under the snapshot, key as the
 *     table owner where the conversion is user code: pairs_rows.cpp).
 * The indexed side is set up as for the pairs (pairs_setup.cpp): privileges,
 * row-level security refused, partitions merged as one index, keys.
 *
 * Memory: the chunk (hash_mem, as a hash join's table), the candidates (a
 * sixteenth of work_mem, verified whenever full, and their sort's scratch),
 * the data-page hints (a sixteenth, pairs_pages.h) and a small row cache
 * (each indexed row is resolved once per verification), the chunk's and the
 * candidates' arrays grown to those bounds as rows and candidates come; a
 * batch larger than its chunk is matched chunk by chunk, one pass over the
 * index each.
 */
#include "pg/pg_prelude.h"

#include <algorithm>

#include "core/bbit.h"
#include "core/entry_sort.h"
#include "core/jaccard.h"
#include "pg/citus/citus.h"
#include "pg/lsh/lsh_pending.h"
#include "pg/pairs/pairs.h"
#include "pg/pairs/pairs_pages.h"

extern "C" {
#include "access/htup_details.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(minhash_match);
PG_FUNCTION_INFO_V1(minhash_match_any);
}

/* an indexed row met in the band group of a batch row: its global row id, the batch row, the group's key */
typedef struct MatchCand
{
	uint64		gid;
	uint32		row;
	uint32		key;
} MatchCand;

/* the row ids of one batch key's range in a leaf: ids[first, first + nids) meet entries [from, to) */
typedef struct MatchMeet
{
	uint32		first;
	uint32		nids;
	int			from;
	int			to;
} MatchMeet;

/*
 * A candidate that passed, before its indexed row is resolved; with compact
 * slots (run.heap_verify) one the slot did not rule out, with the key it was
 * met in, for the row's signature to decide.
 */
typedef struct MatchPassed
{
	uint32		row;
	uint32		key;
	double		sim;
} MatchPassed;

typedef struct Match
{
	PairsRun	run;			/* the indexed side (pairs_setup.cpp) */
	PairsPages	pages;
	int			need;			/* equal values a pair needs at the threshold (bbit_min_matches) */

	/* the batch */
	const char *batch_name;
	const char *key_column;
	const char *sig_column;
	Portal		portal;
	bool		batch_done;
	SPITupleTable *fetched;		/* the last fetch, while rows of it are not in a chunk yet */
	uint64		fetched_rows;
	uint64		fetched_next;

	/* the chunk of batch rows in memory */
	MemoryContext chunk_cxt;	/* their keys */
	Size		chunk_budget;	/* bytes a chunk may take (match_chunk_budget) */
	int			cap;			/* rows a chunk holds */
	int			allocated;		/* rows the arrays below hold now (grown up to cap) */
	int			nrows;
	Datum	   *keys;
	uint32	   *sigs;			/* nrows * num_perm */
	LshEntry   *entries;		/* (band key under key_mask, row) per row and band, sorted */
	int			nentries;

	/* per part: its pending rows' entries (sorted), read before any of its leaves */
	LshEntry  **pending;
	int		   *npending;
	uint32	  **pending_ids;	/* per part: the row ids of those entries, sorted, distinct */
	int		   *npending_ids;

	/* candidates waiting for verification */
	MatchCand  *cands;
	MatchCand  *cands_scratch;
	Size		ncands;
	Size		cands_cap;		/* verified when this many wait */
	Size		cands_allocated;	/* cands, cands_scratch and passed hold this many now */
	MatchPassed *passed;
	LshArray<uint32> ids;		/* the row ids of the key ranges of a leaf */
	LshArray<MatchMeet> meets;	/* which batch rows they meet */

	/* the result */
	Tuplestorestate *store;
	TupleDesc	desc;

	/* DEBUG1 */
	uint64		batch_rows;
	uint64		chunks;
	uint64		descents;
} Match;

static AttrNumber
batch_column(Oid relid, const char *name, Oid *type)
{
	AttrNumber	attnum = get_attnum(relid, name);

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", name, get_rel_name(relid))));
	*type = get_atttype(relid, attnum);
	return attnum;
}

/*
 * Open the batch: check what it is and its two columns' types, then run
 * SELECT CAST(b.key AS key_type), b.sig FROM batch AS b through SPI, as the
 * caller, read-only under the query's snapshot. The key is converted as the
 * pairs' keys are (an assignment cast), by the caller's own query.
 */
static void
batch_open(Match *m, Oid batchoid)
{
	const PairsArgs *args = &m->run.args;
	char		relkind = get_rel_relkind(batchoid);
	Oid			keytype;
	Oid			sigtype;
	Oid			minhash_type;
	char	   *query;
	SPIPlanPtr	plan;

	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", batchoid)));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE &&
		relkind != RELKIND_VIEW && relkind != RELKIND_MATVIEW && relkind != RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table, view, materialized view, or foreign table", get_rel_name(batchoid)),
				 errhint("The batch is a relation with a key column and a minhash column.")));
	m->batch_name = quote_qualified_identifier(get_namespace_name(get_rel_namespace(batchoid)),
											   get_rel_name(batchoid));
	(void) batch_column(batchoid, m->key_column, &keytype);
	(void) batch_column(batchoid, m->sig_column, &sigtype);

	minhash_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("minhash"),
								   ObjectIdGetDatum(args->ext_namespace));
	if (getBaseType(sigtype) != minhash_type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("batch column \"%s\" is of type %s, not minhash",
						m->sig_column, format_type_be(sigtype)),
				 errhint("Name the batch's signature column, or a view computing minhash(...) of its text.")));
	if (!can_coerce_type(1, &keytype, (Oid *) &args->key_type, COERCION_ASSIGNMENT))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("batch key column \"%s\" is of type %s, which cannot be returned as %s",
						m->key_column, format_type_be(keytype), format_type_be(args->key_type)),
				 errhint("Pass key_type => NULL::%s to get keys of the column's own type.",
						 format_type_be(keytype))));

	query = psprintf("SELECT CAST(b.%s AS %s), b.%s FROM %s AS b", quote_identifier(m->key_column),
					 format_type_be_qualified(args->key_type), quote_identifier(m->sig_column),
					 m->batch_name);
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", query, SPI_result_code_string(SPI_result));
	m->portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
}

/* A batch signature the index cannot compare with its own: 22023. */
static void
check_batch_sig(Match *m, const MinHashSig *sig)
{
	const LshIndexParams *p = &m->run.params;

	if (MinHashSigFamily(sig) != p->family || sig->num_perm != p->num_perm || sig->seed != p->seed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch column \"%s\" holds a signature that does not match lsh index \"%s\"",
						m->sig_column, m->run.indexname),
				 errdetail("The index holds %s signatures with num_perm = %d and seed = %lld; this one is %s with num_perm = %d and seed = %lld.",
						   minhash_family_name(p->family), p->num_perm, (long long) p->seed,
						   minhash_family_name(MinHashSigFamily(sig)), (int) sig->num_perm,
						   (long long) sig->seed),
				 errhint("Compute the batch's signatures as the indexed ones were computed: the same family, num_perm and seed.")));
	/* chance collisions depend on the width: so do estimates and band keys */
	if (MinHashSigWidth(sig) != p->sig_width)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch column \"%s\" holds a signature that does not match lsh index \"%s\"",
						m->sig_column, m->run.indexname),
				 errdetail("The index holds %d-bit signatures; this one keeps %d bits of each value.",
						   MINHASH_WIDTH_BITS(p->sig_width), MINHASH_WIDTH_BITS(MinHashSigWidth(sig))),
				 MinHashSigWidth(sig) < p->sig_width ?
				 errhint("Cast the batch's signatures to minhash(%d, %d): an explicit cast keeps the low bits of each value.",
						 p->num_perm, MINHASH_WIDTH_BITS(p->sig_width)) :
				 errhint("A signature cannot be widened: compare with %d-bit signatures.",
						 MINHASH_WIDTH_BITS(p->sig_width))));
}

/*
 * A larger array whose contents need not be kept: allocated afresh, not
 * copied as repalloc would (the copies of a growing batch took 5% of the
 * call at 1M indexed rows and 10,000 batch rows).
 */
template <typename T>
static T *
regrow_scratch(T *old, Size n)
{
	pfree(old);
	return (T *) palloc_extended(sizeof(T) * n, MCXT_ALLOC_HUGE);
}

/*
 * Room for rows more chunk rows. The arrays grow as rows arrive, doubling up
 * to cap, so that a small batch takes memory for its rows, not hash_mem: a
 * hash join's table grows the same way. The band entries are computed once
 * the chunk is read (chunk_entries), so only keys and signatures are copied.
 */
static void
grow_chunk(Match *m, int rows)
{
	const LshIndexParams *p = &m->run.params;
	int			want = m->allocated;

	if (m->nrows + rows <= m->allocated)
		return;
	while (want < m->nrows + rows)
		want = (int) Min((Size) want * 2, (Size) m->cap);
	m->keys = (Datum *) repalloc_huge(m->keys, sizeof(Datum) * want);
	m->sigs = (uint32 *) repalloc_huge(m->sigs, sizeof(uint32) * (Size) want * p->num_perm);
	m->entries = regrow_scratch(m->entries, (Size) want * p->bands);
	m->allocated = want;
}

/*
 * The next chunk of batch rows (skipping those whose key or signature is
 * NULL: they match nothing); false when the batch is done. The budget is
 * checked after each row, since keys taken by reference can be of any size:
 * the rows of a fetch not taken yet wait in m->fetched for the next chunk.
 */
static bool
batch_read_chunk(Match *m)
{
	const int	k = m->run.params.num_perm;
	int16		typlen = m->run.key_typlen;
	bool		typbyval = m->run.key_typbyval;
	bool		full = false;

	MemoryContextReset(m->chunk_cxt);
	m->nrows = 0;
	while (!full && m->nrows < m->cap)
	{
		SPITupleTable *tt = m->fetched;

		if (tt == NULL)
		{
			if (m->batch_done)
				break;
			grow_chunk(m, Min(m->cap - m->nrows, 256));
			SPI_cursor_fetch(m->portal, true, Min(m->cap - m->nrows, 256));
			if (SPI_processed == 0)
			{
				SPI_freetuptable(SPI_tuptable);
				m->batch_done = true;
				break;
			}
			tt = m->fetched = SPI_tuptable;
			m->fetched_rows = SPI_processed;
			m->fetched_next = 0;
			m->batch_rows += SPI_processed;
		}
		else
			grow_chunk(m, (int) Min((uint64) (m->cap - m->nrows), m->fetched_rows - m->fetched_next));
		while (m->fetched_next < m->fetched_rows && m->nrows < m->allocated)
		{
			HeapTuple	tuple = tt->vals[m->fetched_next++];
			bool		isnull;
			Datum		key = SPI_getbinval(tuple, tt->tupdesc, 1, &isnull);
			Datum		sigd;
			MinHashSig *sig;
			MemoryContext oldcxt;

			if (isnull)
				continue;
			sigd = SPI_getbinval(tuple, tt->tupdesc, 2, &isnull);
			if (isnull)
				continue;
			oldcxt = MemoryContextSwitchTo(m->chunk_cxt);
			sig = DatumGetMinHashSig(sigd);
			check_batch_sig(m, sig);
			memcpy(m->sigs + (Size) m->nrows * k, sig->values, sizeof(uint32) * k);
			if ((Pointer) sig != DatumGetPointer(sigd))
				pfree(sig);
			/* no TOAST pointers in results */
			if (!typbyval && typlen == -1)
				key = PointerGetDatum(PG_DETOAST_DATUM_PACKED(key));
			m->keys[m->nrows] = datumCopy(key, typbyval, typlen);
			MemoryContextSwitchTo(oldcxt);
			m->nrows++;
			/* keys taken by reference count against the chunk's memory too */
			if (MemoryContextMemAllocated(m->chunk_cxt, true) > m->chunk_budget)
			{
				full = true;
				break;
			}
		}
		if (m->fetched_next == m->fetched_rows)
		{
			SPI_freetuptable(tt);
			m->fetched = NULL;
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (m->nrows == 0)
		return false;
	m->chunks++;
	return true;
}

/* The chunk's band groups: every row's band keys under the probe mask, sorted. */
static void
chunk_entries(Match *m)
{
	const LshIndexParams *p = &m->run.params;
	uint32		keys[MINHASH_MAX_NUM_PERM];
	int			n = 0;

	for (int r = 0; r < m->nrows; r++)
	{
		lsh_band_keys(p, m->sigs + (Size) r * p->num_perm, keys);
		for (int b = 0; b < p->bands; b++)
		{
			m->entries[n].key = keys[b] & m->run.key_mask;
			m->entries[n].value = (uint32) r;
			n++;
		}
	}
	m->nentries = n;
	lsh_sort_entries(m->entries, n);
}

/*
 * Candidates by indexed row (a stable radix sort: each row's candidates stay
 * in the order they were met), then each row's by batch row and key (a few
 * each: an insertion sort), so that a pair's first record has its smallest
 * key.
 */
static void
sort_cands(MatchCand *c, Size n, MatchCand *scratch) noexcept
{
	auto		before = [](const MatchCand &x, const MatchCand &y) {
		return x.row != y.row ? x.row < y.row : x.key < y.key;
	};

	minhash::stable_sort_by_u64(c, n, scratch, [](const MatchCand &x) { return x.gid; });
	for (Size i = 0; i < n;)
	{
		Size		end = i + 1;

		while (end < n && c[end].gid == c[i].gid)
			end++;
		/* an indexed row many batch rows meet (copies of one document) */
		if (end - i > 32)
		{
			std::sort(c + i, c + end, before);
			i = end;
			continue;
		}
		for (Size j = i + 1; j < end; j++)
		{
			MatchCand	v = c[j];
			Size		k = j;

			while (k > i && before(v, c[k - 1]))
			{
				c[k] = c[k - 1];
				k--;
			}
			c[k] = v;
		}
		i = end;
	}
}

static void
emit(Match *m, uint32 row, const PairsRow *y, double sim)
{
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = m->keys[row];
	values[1] = y->key;
	values[2] = Float8GetDatum(sim);
	tuplestore_putvalues(m->store, m->desc, values, nulls);
	m->run.pairs++;
}

/*
 * Verify the candidates gathered so far. Sorted by indexed row, each indexed
 * row's stored signature is read once (its data page pinned through the
 * walk's hints and checked) and compared with each batch row that met it:
 * in the group of the first key the two share only (a pair meets in every
 * group whose key both have; the smallest key of a pair comes first in the
 * sort, and one already passed in an earlier verification is not its first),
 * on the % operator's estimate. The indexed row is then resolved (visible to
 * the snapshot, its key) once for all its batch rows.
 *
 * Compact signatures are compared widened to 32 bits, as their band keys were
 * computed, with the b-bit estimate. An index whose slots keep fewer bits
 * than its signatures (run.heap_verify) can only rule a pair out on the slot
 * (a slot agrees wherever the signature does, so fewer equal values than
 * the threshold needs rule it out); the row's signature, fetched when it is
 * resolved, decides the rest: its first shared key and its estimate, as the
 * all-pairs walk decides (pairs_emit_verified).
 */
static void
match_verify(Match *m)
{
	PairsRun   *run = &m->run;
	const LshIndexParams *params = &run->params;
	const int	k = params->num_perm;
	const int	bits = MINHASH_WIDTH_BITS(params->sig_width);
	MatchCand  *c = m->cands;
	Size		n = m->ncands;
	Size		i = 0;
	uint32		wide[MINHASH_MAX_NUM_PERM];
	uint32		packed[MINHASH_MAX_NUM_PERM];

	sort_cands(c, n, m->cands_scratch);
	while (i < n)
	{
		uint64		gid = c[i].gid;
		Size		end = i + 1;
		int			part = pairs_part_of(run, gid);
		uint32		rowid = (uint32) (gid - run->parts[part].base);
		BlockNumber blkno = lsh_rowid_block(params, rowid);
		Buffer		buf;
		const LshSlotHeader *slot;
		ItemPointerData tid;
		Size		npassed = 0;

		while (end < n && c[end].gid == gid)
			end++;
		CHECK_FOR_INTERRUPTS();
		buf = pairs_read_data_page(run, &m->pages, part, blkno);
		slot = pairs_live_slot(run, part, BufferGetPage(buf), rowid, blkno);
		if (slot != NULL)
		{
			const uint32 *y = (const uint32 *) LshSlotValues(slot);

			/* 32-bit slots are read in place, compact ones widened */
			if (params->slot_width != MINHASH_WIDTH_32 && !run->heap_verify)
			{
				lsh_slot_values32(params, slot, wide);
				y = wide;
			}
			tid = slot->tid;
			for (Size r = i; r < end; r++)
			{
				const uint32 *x = m->sigs + (Size) c[r].row * k;
				int			same;

				/* the same pair in a group of a larger key */
				if (r > i && c[r].row == c[r - 1].row)
					continue;
				if (run->heap_verify)
				{
					/* the batch row at the slot's width against the slot: rule out only */
					run->candidates++;
					lsh_pack_values(params, x, packed);
					if (lsh_matching(params, packed, LshSlotValues(slot)) < m->need)
						continue;
					m->passed[npassed].row = c[r].row;
					m->passed[npassed].key = c[r].key;
					m->passed[npassed].sim = -1;
					npassed++;
					continue;
				}
				if (!lsh_probe_first_key(params, run->depth, x, y, c[r].key))
					continue;
				run->candidates++;
				/* the % operator's own estimate, so results match n.sig % o.sig */
				same = minhash::matching_values(x, y, k);
				if (same < m->need)
					continue;
				m->passed[npassed].row = c[r].row;
				m->passed[npassed].sim = minhash::bbit_jaccard(same, k, bits);
				npassed++;
			}
		}
		UnlockReleaseBuffer(buf);
		if (npassed > 0)
		{
			const PairsRow *row = pairs_resolve_one(run, gid, &tid);

			if (row->status == PAIRS_ROW_VISIBLE && !run->heap_verify)
				for (Size p = 0; p < npassed; p++)
					emit(m, m->passed[p].row, row, m->passed[p].sim);
			else if (row->status == PAIRS_ROW_VISIBLE && row->sig != NULL)
			{
				/* the row's signature decides: its first shared key, then the estimate */
				minhash::widen_values(row->sig, k, (minhash::ValueWidth) params->sig_width, wide);
				for (Size p = 0; p < npassed; p++)
				{
					const uint32 *x = m->sigs + (Size) m->passed[p].row * k;
					int			same;

					if (!lsh_probe_first_key(params, run->depth, x, wide, m->passed[p].key))
						continue;
					same = minhash::matching_values(x, wide, k);
					if (same < m->need)
						continue;
					emit(m, m->passed[p].row, row, minhash::bbit_jaccard(same, k, bits));
				}
			}
		}
		i = end;
	}
	m->ncands = 0;
}

/*
 * The candidate buffers grow as candidates come, doubling up to cands_cap;
 * the sort's scratch and the passed list live within one verification, so
 * only the candidates are copied.
 */
static void
grow_cands(Match *m)
{
	Size		want = Min(m->cands_allocated * 2, m->cands_cap);

	m->cands = (MatchCand *) repalloc_huge(m->cands, sizeof(MatchCand) * want);
	m->cands_scratch = regrow_scratch(m->cands_scratch, want);
	m->passed = regrow_scratch(m->passed, want);
	m->cands_allocated = want;
}

static inline void
add_cand(Match *m, uint64 gid, uint32 row, uint32 key)
{
	if (m->ncands == m->cands_allocated)
	{
		if (m->cands_allocated < m->cands_cap)
			grow_cands(m);
		else
			match_verify(m);
	}
	m->cands[m->ncands].gid = gid;
	m->cands[m->ncands].row = row;
	m->cands[m->ncands].key = key;
	m->ncands++;
}

/* the batch rows of entries [from, to) (one key) meet indexed row id of part */
static inline void
meet(Match *m, int part, uint32 id, int from, int to, uint32 key)
{
	const PairsPart *pt = &m->run.parts[part];

	/* a row indexed after the query's snapshot: invisible to it */
	if (id >= pt->nrowids)
		return;
	for (int r = from; r < to; r++)
		add_cand(m, pt->base + id, m->entries[r].value, key);
}

/*
 * Whether row id of part was a pending row when the call read the list: its
 * entries were met from that copy (match_pending). If the list was merged
 * meanwhile, the leaves hold the same entries again; met a second time, the
 * pair would be verified and returned twice whenever a verification of the
 * candidates (match_verify) fell between the two.
 */
static inline bool
pending_row(const Match *m, int part, uint32 id)
{
	const uint32 *ids = m->pending_ids[part];
	const int	n = m->npending_ids[part];

	return n > 0 && std::binary_search(ids, ids + n, id);
}

/* the end of the run of entries with the key of entry i */
static inline int
group_end(const Match *m, int i)
{
	int			j = i + 1;

	while (j < m->nentries && m->entries[j].key == m->entries[i].key)
		j++;
	return j;
}

/* The chunk's keys against a part's pending rows (both sorted): one merge. */
static void
match_pending(Match *m, int part)
{
	const LshEntry *pe = m->pending[part];
	const int	np = m->npending[part];
	const uint32 mask = m->run.key_mask;
	int			i = 0;
	int			p = 0;

	while (i < m->nentries && p < np)
	{
		uint32		key = m->entries[i].key;
		uint32		pk = pe[p].key & mask;

		if (pk < key)
			p++;
		else if (key < pk)
			i = group_end(m, i);
		else
		{
			int			end = group_end(m, i);

			for (; p < np && (pe[p].key & mask) == key; p++)
				meet(m, part, pe[p].value, i, end, key);
			i = end;
		}
	}
}

/*
 * The leaf of the cursor: is it one more reader's to keep a hint of? The
 * buffer goes to the cached tree levels' hint of the leaf (lsh_tree.cpp),
 * for the next reader of that leaf.
 */
static inline void
remember_leaf(Relation index, int hint, const LshCursor *cur)
{
	LshBufferHint *h = lsh_leaf_hint_for(index, hint, cur->blkno);

	if (h != NULL)
		lsh_hint_remember(h, index, cur->blkno, cur->buf);
}

/*
 * The leaf just released decided by its high key which batch keys it holds;
 * unless the walk goes on to its right sibling (whose read checks that its
 * low key continues that high key), read the sibling for that check alone.
 * A damaged high key would otherwise make keys of the leaves after it look
 * absent: wrong answers instead of XX002.
 */
static void
confirm_high(LshCursor *cur)
{
	if (lsh_cursor_next(cur))
		lsh_cursor_release(cur);
}

/*
 * The chunk's keys (sorted) against a part's leaf level, in key order. The
 * cursor starts at a descent to the first key (under the metapage lock until
 * its leaf is locked, as a scan's range cursor) and goes right from leaf to
 * leaf while the next key is in the next leaf or near it; past a gap of more
 * than a leaf's key span it descends again. In each leaf, locked, the key
 * range of each batch key (lsh_leaf_collect, a search from where the key
 * should be, as a scan's) gives the indexed rows meeting the key's batch
 * rows; they become candidates once the leaf is released. A key whose range reaches the
 * leaf's high key may continue on the next leaf (runs of equal keys span
 * leaves): the cursor then goes right. Leaves are pinned through the cached
 * tree levels' buffer hints where they have one (lsh_leaf_hint_for: the
 * right sibling is the next leaf of the cached level), as scans pin theirs.
 */
static void
match_leaves(Match *m, int part)
{
	PairsRun   *run = &m->run;
	PairsPart  *pt = &run->parts[part];
	Relation	index = pt->index;
	const uint32 mask = run->key_mask;
	const LshEntry *e = m->entries;
	const int	n = m->nentries;
	LshWalk		lw;
	LshCursor	cur;
	bool		open = false;
	int			hint = -1;		/* the current leaf's position in the cached levels */
	int			i = 0;

	if (pt->leftmost == InvalidBlockNumber)
		return;					/* nothing was ever inserted */
	lsh_walk_init(&lw, index, NULL);
	while (i < n)
	{
		Page		page;
		LshPageOpaque opaque;
		bool		has_high;
		uint32		high;
		uint32		low;
		int			sorted;
		int			j;
		int			cont = -1;	/* the first key that may continue on the next leaf */

		CHECK_FOR_INTERRUPTS();
		if (!open)
		{
			LshMetaPage meta;
			Buffer		metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
			bool		has_low;
			uint32		leaf_low;
			BlockNumber blkno;
			bool		found = false;

			if (meta->root != InvalidBlockNumber)
			{
				LshBufferHint *h;

				blkno = lsh_find_leaf_hinted(index, meta, e[i].key, true, &has_low, &leaf_low, &hint);
				h = lsh_leaf_hint_for(index, hint, blkno);
				if (h != NULL)
					lsh_walk_recent(&lw, blkno, lsh_hint_buffer(h, index, blkno));
				lsh_cursor_range_from(&cur, &lw, blkno, has_low, leaf_low, e[i].key, PG_UINT32_MAX);
				found = lsh_cursor_next(&cur);
			}
			/* the leaf is locked: a split can no longer move the key out of it */
			UnlockReleaseBuffer(metabuf);
			m->descents++;
			if (!found)
				break;
			open = true;
		}
		remember_leaf(index, hint, &cur);
		run->leaves++;
		page = cur.page;
		opaque = LshPageGetOpaque(page);
		has_high = (opaque->flags & LSH_HAS_HIGH) != 0;
		high = opaque->high;
		low = opaque->low;
		sorted = lsh_leaf_sorted(page, run->params.version);
		m->meets.clear();
		for (j = i; j < n && (!has_high || e[j].key <= high);)
		{
			uint32		key = e[j].key;
			int			end = group_end(m, j);
			Size		before = m->ids.n;

			lsh_leaf_collect(page, sorted, key, key | ~mask, &m->ids);
			if (m->ids.n > before)
			{
				MatchMeet	mt = {(uint32) before, (uint32) (m->ids.n - before), j, end};

				m->meets.push(mt);
			}
			if (has_high && (key | ~mask) >= high && cont < 0)
				cont = j;
			j = end;
		}
		/* unlocked (the cursor keeps the right link): candidates may be verified now */
		lsh_cursor_release(&cur);
		for (Size x = 0; x < m->meets.n; x++)
		{
			const MatchMeet *mt = &m->meets.data[x];

			for (uint32 y = 0; y < mt->nids; y++)
			{
				uint32		id = m->ids.data[mt->first + y];

				if (!pending_row(m, part, id))
					meet(m, part, id, mt->from, mt->to, e[mt->from].key);
			}
		}
		m->ids.clear();
		if (!has_high)
			break;				/* the last leaf: every key left was looked up in it */
		i = cont >= 0 ? cont : j;
		if (i >= n)
		{
			confirm_high(&cur);
			break;
		}
		if (cont >= 0 || e[i].key - high <= high - low)
		{
			LshBufferHint *h = lsh_leaf_hint_for(index, hint + 1, cur.next);

			hint = h != NULL ? hint + 1 : -1;
			if (h != NULL)
				lsh_walk_recent(&lw, cur.next, lsh_hint_buffer(h, index, cur.next));
			if (!lsh_cursor_next(&cur))
				break;
		}
		else
		{
			confirm_high(&cur);
			open = false;
		}
	}
}

/*
 * The bytes a chunk of batch rows may take. The batch is the inner side of a
 * join held in memory, so it gets what PostgreSQL gives a hash join's table:
 * hash_mem, work_mem × hash_mem_multiplier (get_hash_memory_limit). The
 * candidates' buffers and the data-page hints take their own sixteenths of
 * work_mem, as a sort beside a hash would. Each chunk costs a pass over the
 * index's leaf level, so the chunk should hold a usual batch whole: at the
 * default settings (4 MB × 2) 10,000 rows at k = 128 and 30 bands (about
 * 0.8 kB a row) are one chunk; a quarter of work_mem would make eight.
 */
static Size
match_chunk_budget(void)
{
	return get_hash_memory_limit();
}

/*
 * Memory for one chunk: as many batch rows as match_chunk_budget holds with
 * their band entries; the candidates a sixteenth of work_mem.
 */
static void
match_alloc(Match *m)
{
	PairsRun   *run = &m->run;
	const int	k = run->params.num_perm;
	Size		per_row = sizeof(uint32) * k + sizeof(LshEntry) * run->params.bands + sizeof(Datum) + 16;

	m->chunk_budget = match_chunk_budget();
	m->cap = (int) Max(Min(m->chunk_budget / per_row, (Size) (MaxAllocHugeSize / 2 / per_row)), (Size) 1);
	/* row numbers and entry counts are ints */
	m->cap = (int) Min((Size) m->cap, (Size) PG_INT32_MAX / 2 / run->params.bands);
	/* the arrays start small and grow to these bounds as rows and candidates come */
	m->allocated = Min(m->cap, 256);
	m->keys = (Datum *) palloc(sizeof(Datum) * m->allocated);
	m->sigs = (uint32 *) palloc(sizeof(uint32) * (Size) m->allocated * k);
	m->entries = (LshEntry *) palloc(sizeof(LshEntry) * (Size) m->allocated * run->params.bands);
	m->cands_cap = Max((Size) work_mem * 1024 / 16 / sizeof(MatchCand), (Size) 1024);
	m->cands_allocated = 1024;
	m->cands = (MatchCand *) palloc(sizeof(MatchCand) * m->cands_allocated);
	m->cands_scratch = (MatchCand *) palloc(sizeof(MatchCand) * m->cands_allocated);
	m->passed = (MatchPassed *) palloc(sizeof(MatchPassed) * m->cands_allocated);
	m->chunk_cxt = AllocSetContextCreate(run->cxt, "minhash_match batch keys", ALLOCSET_DEFAULT_SIZES);
	pairs_pages_init(run, &m->pages);
	m->need = minhash::bbit_min_matches(k, MINHASH_WIDTH_BITS(run->params.sig_width), run->args.threshold);
	m->pending = (LshEntry **) palloc0(sizeof(LshEntry *) * run->nparts);
	m->npending = (int *) palloc0(sizeof(int) * run->nparts);
	m->pending_ids = (uint32 **) palloc0(sizeof(uint32 *) * run->nparts);
	m->npending_ids = (int *) palloc0(sizeof(int) * run->nparts);
	/*
	 * pending rows first: one merged into the tree meanwhile is then in both,
	 * not missed, and its leaf entries are passed over (pending_row)
	 */
	for (int p = 0; p < run->nparts; p++)
	{
		uint32	   *ids;
		int			np;

		m->pending[p] = lsh_pending_entries(run->parts[p].index, &run->params, &m->npending[p]);
		np = m->npending[p];
		if (np == 0)
			continue;
		ids = (uint32 *) palloc(sizeof(uint32) * np);
		for (int x = 0; x < np; x++)
			ids[x] = m->pending[p][x].value;
		std::sort(ids, ids + np);
		m->npending_ids[p] = (int) (std::unique(ids, ids + np) - ids);
		m->pending_ids[p] = ids;
	}
}

static Datum
match(FunctionCallInfo fcinfo, bool polymorphic)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			first = polymorphic ? 3 : 2;	/* the batch's arguments */
	PairsArgs	args;
	Match	   *m;
	Oid			batchoid;
	MemoryContext oldcxt;

	/* (index, key_column[, key_type], batch, batch_key_column, batch_sig_column, threshold) */
	memset(&args, 0, sizeof(args));
	args.funcname = "minhash_match";
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("index must not be NULL")));
	args.indexoid = PG_GETARG_OID(0);
	args.key_column = pairs_name_arg(fcinfo, 1, "key_column", true);
	if (polymorphic)
	{
		args.key_type = get_fn_expr_argtype(fcinfo->flinfo, 2);
		if (!OidIsValid(args.key_type))
			elog(ERROR, "could not determine the type of key_type");
	}
	else
		args.key_type = INT8OID;
	if (PG_ARGISNULL(first))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("batch must not be NULL")));
	batchoid = PG_GETARG_OID(first);
	args.threshold = pairs_threshold_arg(fcinfo, first + 3);
	args.k = -1;
	/* each indexed row is resolved once per verification (candidates sorted by row): a small cache */
	args.cache_bytes = Min((Size) work_mem * 1024 / 2, (Size) 256 * 1024);
	args.ext_namespace = get_func_namespace(fcinfo->flinfo->fn_oid);
	{
		Oid			heapoid = IndexGetRelation(args.indexoid, true);

		if (OidIsValid(heapoid) && mh_citus_table_method(heapoid) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("minhash_match does not support Citus tables"),
					 errdetail("The index \"%s\" of Citus table \"%s\" on this node is an empty shell; its rows are indexed in the shards' indexes.",
							   get_rel_name(args.indexoid), get_rel_name(heapoid)),
					 errhint("Join the batch with the table on %%>= (o.sig %%>= ROW(n.sig, t)::minhash_query): each batch row probes the shards' indexes.")));
	}

	InitMaterializedSRF(fcinfo, 0);
	m = (Match *) palloc0(sizeof(Match));
	m->store = rsinfo->setResult;
	m->desc = rsinfo->setDesc;
	m->key_column = pairs_name_arg(fcinfo, first + 1, "batch_key_column", true);
	m->sig_column = pairs_name_arg(fcinfo, first + 2, "batch_sig_column", true);

	/* the indexed side first: its privileges are checked before the batch is read */
	pairs_begin(&m->run, &args);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	batch_open(m, batchoid);
	oldcxt = MemoryContextSwitchTo(m->run.cxt);
	if (m->run.params.num_perm > 0)
	{
		match_alloc(m);
		while (batch_read_chunk(m))
		{
			chunk_entries(m);
			for (int p = 0; p < m->run.nparts; p++)
			{
				match_pending(m, p);
				match_leaves(m, p);
			}
			match_verify(m);
		}
		pairs_fetch_key_done(&m->run);
		elog(DEBUG1, "minhash_match: " UINT64_FORMAT " batch rows in " UINT64_FORMAT " chunks of up to %d, "
			 UINT64_FORMAT " leaves read after " UINT64_FORMAT " descents, " UINT64_FORMAT
			 " candidates, " UINT64_FORMAT " pairs, " UINT64_FORMAT " heap fetches, " UINT64_FORMAT
			 " row cache resets",
			 m->batch_rows, m->chunks, m->cap, m->run.leaves, m->descents, m->run.candidates,
			 m->run.pairs, m->run.fetches, m->run.cache_resets);
	}
	MemoryContextSwitchTo(oldcxt);
	SPI_cursor_close(m->portal);
	SPI_finish();
	pairs_end(&m->run);
	return (Datum) 0;
}

extern "C" Datum
minhash_match(PG_FUNCTION_ARGS)
{
	return match(fcinfo, false);
}

extern "C" Datum
minhash_match_any(PG_FUNCTION_ARGS)
{
	return match(fcinfo, true);
}
