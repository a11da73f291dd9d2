/*
 * minhash_clusters(index, key_column[, key_type], threshold, mode, exact,
 * text_column, unit, k, keep, keep_desc): groups of similar rows as
 * (key, cluster_id), where cluster_id is the key of the cluster's first row,
 * so
 *     DELETE FROM t WHERE id IN (SELECT key FROM minhash_clusters(...) WHERE key <> cluster_id)
 * keeps one row per cluster. Rows without a similar partner are not listed.
 *
 * The order of rows: by the keep column when there is one (ascending, or
 * descending with keep_desc; NULLs last either way: a row with a value is
 * preferred to one without), then by key, then by row id (a non-unique key).
 * Without keep the first row is the smallest key.
 *
 * mode 'connected': connected components of the similar-pairs graph
 * (union-find over row ids), named after their first row. Similarity is not
 * transitive: a chain a ~ b ~ c puts a and c together however different
 * they are.
 * mode 'representative': rows in order, the first not yet taken becomes a
 * representative and takes every similar row not yet taken; every member is
 * then similar to its cluster's representative (the row that is kept).
 *
 * Memory: the pairs stream through tuplesorts and tuplestores (work_mem,
 * spilling beyond). Union-find keeps one 4-byte parent per row id of the
 * index -- about 6 bytes per indexed row -- and each mode a bitmap of row
 * ids; these are the only allocations that grow with the table.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "pg/pairs/pairs.h"
#include "pg/pairs/pairs_cluster_finish.h"

extern "C" {
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(minhash_clusters);
PG_FUNCTION_INFO_V1(minhash_clusters_any);
}

typedef enum ClusterMode
{
	CLUSTER_CONNECTED,
	CLUSTER_REPRESENTATIVE
} ClusterMode;

/* a class edge of a collapsing walk, as received: the two first rows and whether each is visible */
typedef struct ClassEdge
{
	uint32		a;
	uint32		b;
	bool		a_visible;
	bool		b_visible;
} ClassEdge;

/* connected: the class of a first row, and a visible row of it (or NO_ROW) */
typedef struct ClassRoot
{
	uint32		first;
	uint32		visible;
} ClassRoot;

#define NO_ROW	PG_UINT32_MAX

typedef struct ClusterState
{
	ClusterMode mode;
	ClusterFinish cf;			/* the order of rows, union-find, edges, the result */

	/*
	 * Classes of identical signatures from a collapsing walk (pairs.h): the
	 * similar pairs they stand for are added once the walk is done.
	 */
	ClassEdge  *class_edges;	/* between the first rows of two classes */
	Size		nclass_edges;
	Size		class_edges_cap;
	HTAB	   *class_root;		/* connected: first row -> a visible row of the class */
	uint8	   *in_class;		/* representative: rows already in class_members */
	Tuplesortstate *class_members;	/* representative: (class, key, rowid[, keep]), visible rows */
	TupleDesc	class_desc;
	TupleTableSlot *class_slot;
} ClusterState;

static ClusterRow
cluster_row(const PairsRow *r)
{
	ClusterRow	c = {r->key, (uint32) r->rowid, r->keep, r->keep_isnull};

	return c;
}

/* connected: a row met in a pair (or in a class), once */
static void
remember_member(ClusterState *st, const PairsRow *r)
{
	ClusterRow	c = cluster_row(r);

	cluster_add_member(&st->cf, &c);
}

/* representative: a visible row of a class, once */
static void
add_class_member(ClusterState *st, uint32 cls, const PairsRow *r)
{
	TupleTableSlot *slot = st->class_slot;

	if (r->status != PAIRS_ROW_VISIBLE || cluster_bit_test(st->in_class, r->rowid))
		return;
	cluster_bit_set(st->in_class, r->rowid);
	ExecClearTuple(slot);
	slot->tts_values[0] = Int64GetDatum(cls);
	slot->tts_values[1] = r->key;
	slot->tts_values[2] = Int64GetDatum(r->rowid);
	memset(slot->tts_isnull, 0, sizeof(bool) * 3);
	if (st->cf.has_keep)
	{
		slot->tts_values[3] = r->keep;
		slot->tts_isnull[3] = r->keep_isnull;
	}
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(st->class_members, slot);
}

/* connected: a row of the class of first joins the class's visible rows */
static ClassRoot *
class_root_of(ClusterState *st, uint32 first)
{
	bool		found;
	ClassRoot  *e = (ClassRoot *) hash_search(st->class_root, &first, HASH_ENTER, &found);

	if (!found)
		e->visible = NO_ROW;
	return e;
}

static void
join_class(ClusterState *st, uint32 first, const PairsRow *r)
{
	ClassRoot  *e = class_root_of(st, first);

	if (r->status != PAIRS_ROW_VISIBLE)
		return;
	remember_member(st, r);
	if (e->visible == NO_ROW)
		e->visible = (uint32) r->rowid;
	else
		cluster_uf_union(st->cf.parent, e->visible, (uint32) r->rowid);
}

/*
 * A class record of a collapsing walk (pairs.h): rows of one class are each
 * other's pairs, a class edge stands for the pairs of every row of one class
 * with every row of the other. Only visible rows count; a class edge waits
 * for the end of the walk, when every class's rows are known.
 */
static void
collect_class_record(ClusterState *st, const PairsRow *a, const PairsRow *b, double sim)
{
	if (sim == PAIRS_SAME)
	{
		/* a is the class's first row (a record is never reordered) */
		if (st->mode == CLUSTER_CONNECTED)
		{
			join_class(st, (uint32) a->rowid, a);
			join_class(st, (uint32) a->rowid, b);
		}
		else
		{
			add_class_member(st, (uint32) a->rowid, a);
			add_class_member(st, (uint32) a->rowid, b);
		}
		return;
	}
	Assert(pairs_is_class_edge(sim));
	if (st->nclass_edges == st->class_edges_cap)
	{
		st->class_edges_cap = Max(st->class_edges_cap * 2, 256);
		st->class_edges = (ClassEdge *) (st->class_edges == NULL
										 ? palloc_extended(sizeof(ClassEdge) * st->class_edges_cap, MCXT_ALLOC_HUGE)
										 : repalloc_huge(st->class_edges, sizeof(ClassEdge) * st->class_edges_cap));
	}
	st->class_edges[st->nclass_edges++] = {(uint32) a->rowid, (uint32) b->rowid,
		a->status == PAIRS_ROW_VISIBLE, b->status == PAIRS_ROW_VISIBLE};
	/*
	 * A first row with no other rows is a class of one: itself if visible
	 * (listed only if the edge holds: cluster_finish_connected drops
	 * components of one row).
	 */
	if (st->mode == CLUSTER_CONNECTED)
	{
		if (a->status == PAIRS_ROW_VISIBLE)
			remember_member(st, a);
		if (b->status == PAIRS_ROW_VISIBLE)
			remember_member(st, b);
	}
	else
	{
		add_class_member(st, (uint32) a->rowid, a);
		add_class_member(st, (uint32) b->rowid, b);
	}
}

static void
collect_pair(PairsRun *run, void *arg, const PairsRow *a, const PairsRow *b, double similarity)
{
	ClusterState *st = (ClusterState *) arg;

	if (similarity < 0)
	{
		collect_class_record(st, a, b, similarity);
		return;
	}
	if (st->mode == CLUSTER_CONNECTED)
	{
		cluster_uf_union(st->cf.parent, a->rowid, b->rowid);
		remember_member(st, a);
		remember_member(st, b);
	}
	else
	{
		ClusterRow	x = cluster_row(a);
		ClusterRow	y = cluster_row(b);

		cluster_put_edge(&st->cf, &x, &y);
		cluster_put_edge(&st->cf, &y, &x);
	}
}

/* connected: a visible row of the class whose first row is x, or NO_ROW */
static uint32
class_visible_row(ClusterState *st, uint32 x, bool x_visible)
{
	ClassRoot  *e = st->class_root == NULL ? NULL
		: (ClassRoot *) hash_search(st->class_root, &x, HASH_FIND, NULL);

	if (e != NULL)
		return e->visible;
	return x_visible ? x : NO_ROW;
}

/* connected: each class edge joins the two classes, if both have a visible row */
static void
join_class_edges(ClusterState *st)
{
	for (Size i = 0; i < st->nclass_edges; i++)
	{
		const ClassEdge *e = &st->class_edges[i];
		uint32		x = class_visible_row(st, e->a, e->a_visible);
		uint32		y = class_visible_row(st, e->b, e->b_visible);

		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (x != NO_ROW && y != NO_ROW)
			cluster_uf_union(st->cf.parent, x, y);
	}
}

/* representative: the first row of a class in the order of rows, its pairs' other end */
typedef struct ClassFirst
{
	uint32		cls;
	ClusterRow	row;
} ClassFirst;

static int
compare_edges_by_target(const void *x, const void *y)
{
	const ClassEdge *a = (const ClassEdge *) x;
	const ClassEdge *b = (const ClassEdge *) y;

	return a->b < b->b ? -1 : (a->b > b->b ? 1 : (a->a < b->a ? -1 : (a->a > b->a ? 1 : 0)));
}

/* a member of a class as its sort holds it: (class, key, rowid[, keep]) */
static ClusterRow
class_member_row(const ClusterState *st, TupleTableSlot *m)
{
	ClusterRow	r;

	r.key = m->tts_values[1];
	r.rowid = (uint32) DatumGetInt64(m->tts_values[2]);
	r.keep_isnull = !st->cf.has_keep || m->tts_isnull[3];
	r.keep = r.keep_isnull ? (Datum) 0 : m->tts_values[3];
	return r;
}

/*
 * Representative: the pairs the classes stand for, as edges, with fewer of
 * them than the pairs themselves: each row of class T paired with the first
 * row of T and of every class similar to T, first in the order in which
 * cluster_finish_representative takes rows (keep column, key, row id). The
 * representatives are the same: every representative is the first row of its
 * class (the class's first row comes before it: free at its turn, that row
 * would have taken it; taken, then by a row similar to the whole class, which
 * took the whole class), and that row gets every pair it would have had. Any
 * other order of the classes' first rows would break this: the argument
 * needs the first row of a class to come first in the order of the greedy
 * pass itself.
 */
static void
expand_classes(PairsRun *run, ClusterState *st)
{
	TupleTableSlot *m = MakeSingleTupleTableSlot(st->class_desc, &TTSOpsMinimalTuple);
	HASHCTL		ctl;
	HTAB	   *firsts;
	ClassEdge  *in;
	Size		nin = 0;
	Size		at = 0;
	bool		have_cls = false;
	uint32		cls = 0;
	const ClassFirst *first = NULL;
	uint64		n = 0;

	tuplesort_performsort(st->class_members);
	ctl.keysize = sizeof(uint32);
	ctl.entrysize = sizeof(ClassFirst);
	ctl.hcxt = CurrentMemoryContext;
	firsts = hash_create("minhash_clusters classes", 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	while (tuplesort_gettupleslot(st->class_members, true, false, m, NULL))
	{
		uint32		c;

		if ((++n & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		slot_getallattrs(m);
		c = (uint32) DatumGetInt64(m->tts_values[0]);
		if (!have_cls || c != cls)
		{
			ClassFirst *f = (ClassFirst *) hash_search(firsts, &c, HASH_ENTER, NULL);

			f->row = class_member_row(st, m);
			f->row.key = datumCopy(f->row.key, run->key_typbyval, run->key_typlen);
			if (!f->row.keep_isnull)
				f->row.keep = datumCopy(f->row.keep, run->keep_typbyval, run->keep_typlen);
			have_cls = true;
			cls = c;
		}
	}

	/* both directions of each edge whose classes have visible rows, by target class */
	in = (ClassEdge *) palloc_extended(sizeof(ClassEdge) * Max(2 * st->nclass_edges, 1), MCXT_ALLOC_HUGE);
	for (Size i = 0; i < st->nclass_edges; i++)
	{
		const ClassEdge *e = &st->class_edges[i];

		if (hash_search(firsts, &e->a, HASH_FIND, NULL) == NULL ||
			hash_search(firsts, &e->b, HASH_FIND, NULL) == NULL)
			continue;
		in[nin++] = {e->a, e->b, true, true};
		in[nin++] = {e->b, e->a, true, true};
	}
	qsort(in, nin, sizeof(ClassEdge), compare_edges_by_target);

	tuplesort_rescan(st->class_members);
	have_cls = false;
	while (tuplesort_gettupleslot(st->class_members, true, false, m, NULL))
	{
		uint32		c;
		ClusterRow	t;

		if ((++n & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		slot_getallattrs(m);
		c = (uint32) DatumGetInt64(m->tts_values[0]);
		t = class_member_row(st, m);
		if (!have_cls || c != cls)
		{
			have_cls = true;
			cls = c;
			first = (const ClassFirst *) hash_search(firsts, &c, HASH_FIND, NULL);
			while (at < nin && in[at].b < c)
				at++;
		}
		if (t.rowid != first->row.rowid)
		{
			cluster_put_edge(&st->cf, &first->row, &t);
			cluster_put_edge(&st->cf, &t, &first->row);
		}
		for (Size j = at; j < nin && in[j].b == c; j++)
		{
			const ClassFirst *f = (const ClassFirst *) hash_search(firsts, &in[j].a, HASH_FIND, NULL);

			cluster_put_edge(&st->cf, &f->row, &t);
			cluster_put_edge(&st->cf, &t, &f->row);
		}
	}
	tuplesort_end(st->class_members);
	ExecDropSingleTupleTableSlot(m);
	hash_destroy(firsts);
	pfree(in);
}

static ClusterMode
parse_mode(FunctionCallInfo fcinfo, int argno)
{
	char	   *mode;

	if (PG_ARGISNULL(argno))
		return CLUSTER_CONNECTED;
	mode = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (strcmp(mode, "connected") == 0)
		return CLUSTER_CONNECTED;
	if (strcmp(mode, "representative") == 0)
		return CLUSTER_REPRESENTATIVE;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown clustering mode \"%.*s%s\"", pg_mbcliplen(mode, strlen(mode), 40), mode,
					strlen(mode) > 40 ? "..." : ""),
			 errhint("Valid modes are \"connected\" and \"representative\".")));
	pg_unreachable();
}

/*
 * keep and keep_desc, the last two arguments since 1.1 (1.0's signature,
 * which this library still serves, ends at k).
 */
static bool
parse_keep(FunctionCallInfo fcinfo, int argno, PairsArgs *args)
{
	bool		desc;

	if (PG_NARGS() <= argno + 1)
		return false;
	if (!PG_ARGISNULL(argno))
		args->keep_column = pstrdup(NameStr(*PG_GETARG_NAME(argno)));
	desc = !PG_ARGISNULL(argno + 1) && PG_GETARG_BOOL(argno + 1);
	if (desc && args->keep_column == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keep_desc is used only with keep"),
				 errhint("Name the column that chooses the row kept: keep => 'column'.")));
	return desc;
}

static Datum
clusters(FunctionCallInfo fcinfo, bool polymorphic)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			first = polymorphic ? 3 : 2;
	PairsArgs	args;
	PairsRun	run;
	ClusterState st;
	TypeCacheEntry *tce;
	MemoryContext oldcxt;
	bool		keep_desc;

	/* (index, key_column[, key_type], threshold, mode, exact, text_column, unit, k, keep, keep_desc) */
	pairs_parse_args(fcinfo, &args, "minhash_clusters", polymorphic, first, first + 2);
	keep_desc = parse_keep(fcinfo, first + 6, &args);
	memset(&st, 0, sizeof(st));
	st.mode = parse_mode(fcinfo, first + 1);
	tce = lookup_type_cache(args.key_type, TYPECACHE_LT_OPR);
	if (!OidIsValid(tce->lt_opr))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify an ordering operator for type %s",
						format_type_be(args.key_type)),
				 errdetail("Each cluster is named after its first row in key order (after the keep column, if any).")));
	st.cf.key_lt = tce->lt_opr;
	if (mh_citus_clusters(fcinfo, &args, st.mode == CLUSTER_REPRESENTATIVE, keep_desc))
		return (Datum) 0;		/* a Citus table, by distributed SQL */
	InitMaterializedSRF(fcinfo, 0);
	st.cf.out = rsinfo->setResult;
	st.cf.outdesc = rsinfo->setDesc;

	pairs_begin(&run, &args);
	st.cf.key_type = args.key_type;
	st.cf.key_collation = run.key_collation;
	st.cf.key_typlen = run.key_typlen;
	st.cf.key_typbyval = run.key_typbyval;
	st.cf.has_keep = OidIsValid(run.keep_type);
	if (st.cf.has_keep)
	{
		/* pairs_begin checked that it has both */
		tce = lookup_type_cache(run.keep_type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
		st.cf.keep_type = run.keep_type;
		st.cf.keep_collation = run.keep_collation;
		st.cf.keep_op = keep_desc ? tce->gt_opr : tce->lt_opr;
	}
	/* union-find and the edges name rows by 32-bit row ids: all partitions together */
	if (run.nrowids > (uint64) PG_UINT32_MAX + 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("minhash_clusters supports at most %u index slots over all partitions",
						PG_UINT32_MAX),
				 errhint("Cluster each partition separately, or use minhash_similar_pairs.")));
	oldcxt = MemoryContextSwitchTo(run.cxt);
	st.cf.seen = (uint8 *) palloc_extended(run.nrowids / 8 + 1, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	if (st.mode == CLUSTER_CONNECTED)
	{
		st.cf.parent = (uint32 *) palloc_extended(sizeof(uint32) * Max(run.nrowids, 1), MCXT_ALLOC_HUGE);
		for (uint64 i = 0; i < run.nrowids; i++)
			st.cf.parent[i] = (uint32) i;
		cluster_members_begin(&st.cf);
	}
	else
		cluster_edges_begin(&st.cf);
	/* large groups of identical signatures in linear time (pairs_walk.cpp); exact pairs need every pair */
	run.collapse = !args.exact;
	if (run.collapse && st.mode == CLUSTER_CONNECTED)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint32);
		ctl.entrysize = sizeof(ClassRoot);
		ctl.hcxt = run.cxt;
		st.class_root = hash_create("minhash_clusters classes", 1024, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	else if (run.collapse)
	{
		/* by class, then in the order of rows: the first of each class is its first row */
		AttrNumber	cols[4] = {1};
		Oid			ops[4] = {Int8LessOperator};
		Oid			colls[4] = {InvalidOid};
		bool		nullsfirst[4] = {false};
		int			nkeys = cluster_row_order(&st.cf, 1, 4, 2, 3, cols, ops, colls, nullsfirst);

		st.in_class = (uint8 *) palloc_extended(run.nrowids / 8 + 1, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		st.class_desc = CreateTemplateTupleDesc(st.cf.has_keep ? 4 : 3);
		TupleDescInitEntry(st.class_desc, 1, "class", INT8OID, -1, 0);
		TupleDescInitEntry(st.class_desc, 2, "key", args.key_type, -1, 0);
		TupleDescInitEntryCollation(st.class_desc, 2, run.key_collation);
		TupleDescInitEntry(st.class_desc, 3, "rowid", INT8OID, -1, 0);
		if (st.cf.has_keep)
			cluster_keep_entry(&st.cf, st.class_desc, 4, "keep");
		st.class_members = tuplesort_begin_heap(st.class_desc, nkeys, cols, ops, colls, nullsfirst,
												work_mem, NULL, TUPLESORT_RANDOMACCESS);
		st.class_slot = MakeSingleTupleTableSlot(st.class_desc, &TTSOpsVirtual);
	}
	MemoryContextSwitchTo(oldcxt);

	pairs_walk(&run, collect_pair, &st);

	oldcxt = MemoryContextSwitchTo(run.cxt);
	if (st.mode == CLUSTER_CONNECTED)
	{
		join_class_edges(&st);
		cluster_finish_connected(&st.cf);
	}
	else
	{
		if (run.collapse)
		{
			expand_classes(&run, &st);
			ExecDropSingleTupleTableSlot(st.class_slot);
		}
		cluster_finish_representative(&st.cf);
	}
	MemoryContextSwitchTo(oldcxt);
	pairs_end(&run);
	return (Datum) 0;
}

extern "C" Datum
minhash_clusters(PG_FUNCTION_ARGS)
{
	return clusters(fcinfo, false);
}

extern "C" Datum
minhash_clusters_any(PG_FUNCTION_ARGS)
{
	return clusters(fcinfo, true);
}
