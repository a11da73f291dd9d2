/*
 * minhash_similar_pairs and minhash_clusters on a Citus table: the verified
 * pairs (citus_pairs_run.cpp) become the functions' results, the pairs
 * themselves or, through a union-find over the rows met in pairs (about 30
 * bytes a row), clusters (pairs_cluster_finish.h, as on one server).
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus_pairs.h"
#include "pg/compat.h"
#include "pg/pairs/pairs_cluster_finish.h"

extern "C" {
#include "access/htup_details.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"
#include "utils/typcache.h"
}

/* --- minhash_similar_pairs --- */

typedef struct PairsSink
{
	Tuplestorestate *store;
	TupleDesc	desc;
} PairsSink;

static void
store_pair(const CitusPair *pair, void *arg)
{
	PairsSink  *sink = (PairsSink *) arg;
	Datum		values[3] = {pair->key_a, pair->key_b, Float8GetDatum(pair->similarity)};
	bool		nulls[3] = {false, false, false};

	tuplestore_putvalues(sink->store, sink->desc, values, nulls);
}

bool
mh_citus_similar_pairs(FunctionCallInfo fcinfo, const PairsArgs *args)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	CitusPairsPlan plan;
	PairsSink	sink;

	if (!citus_pairs_plan(args, args->funcname, &plan))
		return false;
	InitMaterializedSRF(fcinfo, 0);
	sink.store = rsinfo->setResult;
	sink.desc = rsinfo->setDesc;
	citus_pairs_run(&plan, false, store_pair, &sink);
	return true;
}

/* --- minhash_clusters: the rows met in pairs, numbered 0, 1, ... as they come --- */

typedef struct RowName
{
	int32		hash;
	BlockNumber block;
	OffsetNumber offset;
	bool		used;
	uint32		id;
} RowName;

typedef struct ClusterSink
{
	bool		representative;
	ClusterFinish cf;			/* union-find or edges over row ids, the result */
	MemoryContext cxt;

	/* open addressing by row name; capacity a power of two, at most half full */
	RowName    *slots;
	uint32		capacity;
	uint32		nrows;
	Size		parent_cap;		/* row ids cf.parent and cf.seen have room for */
} ClusterSink;

static uint32
row_hash(int32 h, ItemPointer tid)
{
	uint64		x = ((uint64) (uint32) h << 32) ^
		((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16) ^ ItemPointerGetOffsetNumberNoCheck(tid);

	return (uint32) hash_bytes_uint32((uint32) x) ^ (uint32) (x >> 32) * 0x9E3779B1u;
}

static void
grow_rows(ClusterSink *s)
{
	uint32		cap = s->capacity * 2;
	RowName    *old = s->slots;
	uint32		oldcap = s->capacity;

	s->slots = (RowName *) MemoryContextAllocExtended(s->cxt, sizeof(RowName) * cap,
													  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	s->capacity = cap;
	for (uint32 i = 0; i < oldcap; i++)
	{
		ItemPointerData tid;
		uint32		j;

		if (!old[i].used)
			continue;
		ItemPointerSet(&tid, old[i].block, old[i].offset);
		j = row_hash(old[i].hash, &tid) & (cap - 1);
		while (s->slots[j].used)
			j = (j + 1) & (cap - 1);
		s->slots[j] = old[i];
	}
	pfree(old);
}

/* the id of a row, a new one if it is met for the first time */
static uint32
row_id(ClusterSink *s, int32 h, ItemPointer tid)
{
	uint32		j = row_hash(h, tid) & (s->capacity - 1);
	BlockNumber block = ItemPointerGetBlockNumberNoCheck(tid);
	OffsetNumber offset = ItemPointerGetOffsetNumberNoCheck(tid);

	while (s->slots[j].used)
	{
		if (s->slots[j].hash == h && s->slots[j].block == block && s->slots[j].offset == offset)
			return s->slots[j].id;
		j = (j + 1) & (s->capacity - 1);
	}
	if (s->nrows == PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("minhash_clusters supports at most %u rows with a similar partner", PG_UINT32_MAX)));
	s->slots[j].used = true;
	s->slots[j].hash = h;
	s->slots[j].block = block;
	s->slots[j].offset = offset;
	s->slots[j].id = s->nrows++;
	if (s->nrows > s->parent_cap)
	{
		Size		cap = Max(s->parent_cap * 2, 1024);

		if (s->cf.parent == NULL)
		{
			s->cf.parent = (uint32 *) MemoryContextAllocExtended(s->cxt, sizeof(uint32) * cap, MCXT_ALLOC_HUGE);
			s->cf.seen = (uint8 *) MemoryContextAllocExtended(s->cxt, cap / 8 + 1, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		}
		else
		{
			s->cf.parent = (uint32 *) repalloc_huge(s->cf.parent, sizeof(uint32) * cap);
			s->cf.seen = (uint8 *) repalloc_huge(s->cf.seen, cap / 8 + 1);
			memset(s->cf.seen + s->parent_cap / 8 + 1, 0, cap / 8 - s->parent_cap / 8);
		}
		s->parent_cap = cap;
	}
	s->cf.parent[s->slots[j].id] = s->slots[j].id;
	if (s->nrows * 2 > s->capacity)
		grow_rows(s);
	return s->nrows - 1;
}

/* the sorts copy the keys and keep values: they live until the next fetch only */
static void
collect_pair(const CitusPair *pair, void *arg)
{
	ClusterSink *s = (ClusterSink *) arg;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	ClusterRow	a = {pair->key_a, row_id(s, pair->hash_a, pair->tid_a), pair->keep_a, pair->keep_a_isnull};
	ClusterRow	b = {pair->key_b, row_id(s, pair->hash_b, pair->tid_b), pair->keep_b, pair->keep_b_isnull};

	if (!s->representative)
	{
		cluster_uf_union(s->cf.parent, a.rowid, b.rowid);
		cluster_add_member(&s->cf, &a);
		cluster_add_member(&s->cf, &b);
	}
	else
	{
		cluster_put_edge(&s->cf, &a, &b);
		cluster_put_edge(&s->cf, &b, &a);
	}
	MemoryContextSwitchTo(old);
}

bool
mh_citus_clusters(FunctionCallInfo fcinfo, const PairsArgs *args, bool representative, bool keep_desc)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	CitusPairsPlan plan;
	ClusterSink s;
	MemoryContext old;

	if (!citus_pairs_plan(args, args->funcname, &plan))
		return false;
	InitMaterializedSRF(fcinfo, 0);
	memset(&s, 0, sizeof(s));
	s.representative = representative;
	s.cf.out = rsinfo->setResult;
	s.cf.outdesc = rsinfo->setDesc;
	s.cf.key_type = plan.key_typid;
	s.cf.key_collation = plan.key_collation;
	s.cf.key_lt = lookup_type_cache(plan.key_typid, TYPECACHE_LT_OPR)->lt_opr;
	get_typlenbyval(plan.key_typid, &s.cf.key_typlen, &s.cf.key_typbyval);
	s.cf.has_keep = plan.keep != NULL;
	if (s.cf.has_keep)
	{
		/* plan_keep checked that it has both */
		TypeCacheEntry *tce = lookup_type_cache(plan.keep_typid, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);

		s.cf.keep_type = plan.keep_typid;
		s.cf.keep_collation = plan.keep_collation;
		s.cf.keep_op = keep_desc ? tce->gt_opr : tce->lt_opr;
	}
	s.cxt = AllocSetContextCreate(CurrentMemoryContext, "minhash citus clusters", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(s.cxt);
	s.capacity = 1024;
	s.slots = (RowName *) palloc0(sizeof(RowName) * s.capacity);
	if (!representative)
		cluster_members_begin(&s.cf);
	else
		cluster_edges_begin(&s.cf);
	MemoryContextSwitchTo(old);

	citus_pairs_run(&plan, true, collect_pair, &s);

	/* every row here came with a partner: no component of one row */
	old = MemoryContextSwitchTo(s.cxt);
	if (!representative)
		cluster_finish_connected(&s.cf);
	else
		cluster_finish_representative(&s.cf);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(s.cxt);
	return true;
}
