/*
 * Cost estimate of an lsh index scan: what the scan does (lsh_scan.cpp), in
 * PostgreSQL's units, so that the planner compares it fairly with a
 * sequential scan, a bitmap scan and other indexes.
 *
 * A probe (a % scan, or a stage of ORDER BY <%>) at depth m:
 *  - computes the query's band keys, then per band descends the tree's
 *    internal levels, which each backend keeps in memory (CPU only), and
 *    reads the band's leaf, plus the next ones when the key range of a short
 *    prefix spans several; a leaf is searched (sorted entries, then the
 *    entries appended since it was written) and its entries in the range are
 *    collected;
 *  - sorts the row ids found, and reads the data page of each distinct
 *    candidate to verify its signature (k values compared);
 *  - with fastupdate, reads the pending list and compares its rows' keys.
 * The candidates come from the index's build statistics at the probe's depth
 * (minhash::expected_candidates: near-duplicates are found through many
 * bands but verified once), scaled to the rows the index holds now.
 *
 * Pages. Each page of a scan is counted once (re-reads within it are cache
 * hits; an index with fewer leaves than bands reads each leaf once). A probe
 * reads its leaves in band order and its data pages in row order, both
 * ascending block numbers of a built index (data pages first, then the
 * leaves in key order, band by band): PostgreSQL prices such reads as a
 * bitmap heap scan's, between random_page_cost for a few pages and
 * seq_page_cost for all of them. Repeated scans (the inner side of a nested
 * loop, loop_count > 1) share pages, counted as genericcostestimate counts
 * them: the distinct pages over all loops by the Mackert-Lohman formula
 * (index_pages_fetched, with effective_cache_size), at one probe's price,
 * per loop. So a probe of a cold index costs its ~b page reads, and the
 * thousandth probe of a join through a small index costs its CPU. A LATERAL
 * subquery runs once per outer row too, but is planned without a loop
 * count: it is taken from the outer level (lsh_outer_loops).
 *
 * CPU. Each page visited costs LSH_PAGE_CPU (pin, lock, checks, the search
 * in it), each candidate LSH_VERIFY_CPU, each entry collected and each
 * comparison of the query's keys with a pending row an operator's share;
 * calibrated against a sequential scan's rows with % (cpu_tuple_cost plus the
 * operator's COST 5): see docs/lsh.md, "Cost estimate".
 *
 * ORDER BY <%> without %: the scan widens stage by stage (depth r, r - 1,
 * ..., 1, then every stored signature up to minhash.lsh_max_scan_tuples),
 * returning after each stage the rows it has found complete. The startup
 * cost is the work until a stage has the rows a LIMIT asks for (the query
 * level's limit_tuples, over the share of rows the other conditions keep;
 * the rows complete after a stage at depth m are the expected matches at the
 * similarity that depth finds with minhash.lsh_recall), and the total cost
 * every stage. The selectivity is 1: without a LIMIT the planner prices
 * every row's heap visit and prefers a sequential scan and sort, which
 * (unlike the index, bounded by lsh_max_scan_tuples) returns every row.
 */
#include "pg/pg_prelude.h"

#include <cmath>

#include "core/lsh_estimate.h"
#include "core/signature.h"
#include "pg/lsh/lsh.h"
#include "pg/lsh/lsh_pending.h"

extern "C" {
#include "access/genam.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "utils/float.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"
}

/* visiting a leaf or data page: pin, lock, header checks, the search in it */
#define LSH_PAGE_CPU			(cpu_operator_cost * 20)
/* verifying a candidate of k values, beside its page visit */
#define LSH_VERIFY_CPU(k)		(cpu_index_tuple_cost + cpu_operator_cost * (k) / 128.0)
/* comparing one 32-bit value (a tight loop, not an operator call) */
#define LSH_VALUE_COMPARE_COST	(cpu_operator_cost * 0.05)

/* What the metapage and the planner know about the index. */
typedef struct LshCostIndex
{
	LshIndexParams params;		/* bands, rows, k, slots per page, layout (when known) */
	bool		known;			/* a signature was stored: params are the index's */
	int			height;
	double		rows;			/* rows indexed now (the planner's count) */
	double		pages;			/* index pages */
	double		data_pages;
	double		leaf_entries;	/* entries a leaf holds */
	double		leaf_pages;		/* leaves of the tree */
	double		appended;		/* entries appended to a leaf since the build */
	bool		sorted_leaves;	/* format 4: a search, else every entry compared */
	minhash::BandMoments moments;
	bool		have_moments;
	double		scale;			/* rows now / rows at build */
	double		pending_rows;
	double		pending_pages;
	bool		pending_keyed;
} LshCostIndex;

/* One probe at a depth: what it reads and finds. */
typedef struct LshProbe
{
	double		leaves;			/* leaf visits */
	double		leaf_pages;		/* distinct leaves (a small index has fewer than bands) */
	double		entries;		/* band entries collected */
	double		candidates;		/* distinct rows verified (the tree's and the pending list's) */
	double		data_pages;		/* data pages read for them */
} LshProbe;

/* The work of a scan, or of its first stages. */
typedef struct LshWork
{
	double		random_pages;	/* distinct pages read in ascending block order, with gaps */
	double		seq_pages;		/* distinct pages read in sequence (pending list, a full pass) */
	Cost		cpu;
} LshWork;

static void
lsh_cost_index(IndexOptInfo *info, LshCostIndex *ci)
{
	Relation	index = index_open(info->indexoid, NoLock);
	LshMetaPage meta;
	Buffer		metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	int			fillfactor = LSH_DEFAULT_FILLFACTOR;

	*ci = LshCostIndex();
	ci->rows = Max(info->tuples, 1.0);
	ci->pages = Max((double) info->pages, 1.0);
	ci->height = 1;
	ci->known = meta->num_perm > 0;
	if (ci->known)
		lsh_meta_params(meta, &ci->params);
	else
	{
		/*
		 * No signature yet: the bands the first one will fix, from the
		 * index's options at the column's num_perm (its typmod, else the
		 * default k). The index is empty, so this prices a probe of nothing.
		 */
		int32		typmod = TupleDescAttr(RelationGetDescr(index), 0)->atttypmod;
		int			bands;
		int			rows;
		double		threshold;

		ci->params.num_perm = typmod > 0 ? MinHashTypmodNumPerm(typmod) : minhash::kDefaultNumPerm;
		if (!lsh_choose_bands(meta, ci->params.num_perm, &bands, &rows, &threshold))
		{
			bands = Max(meta->opt_bands, 1);
			rows = Max(meta->opt_rows, 1);
		}
		ci->params.bands = bands;
		ci->params.rows = rows;
		/* the width of the first signature is not known yet: priced as 32-bit slots */
		ci->params.sig_width = MINHASH_WIDTH_32;
		ci->params.slot_width = MINHASH_WIDTH_32;
		ci->params.slots_per_page = lsh_slots_per_page(ci->params.num_perm, MINHASH_WIDTH_32);
		ci->params.version = LSH_VERSION;
		ci->params.layout = minhash::prefix_layout(bands, rows);
	}
	if (meta->root != InvalidBlockNumber)
		ci->height = meta->height;
	ci->data_pages = Max(1.0, ceil((double) meta->nslots / ci->params.slots_per_page));
	if (index->rd_options != NULL && ((LshOptions *) index->rd_options)->fillfactor > 0)
		fillfactor = ((LshOptions *) index->rd_options)->fillfactor;
	ci->leaf_entries = LSH_TREE_CAPACITY * fillfactor / 100.0;
	ci->leaf_pages = Max(1.0, ceil(ci->rows * ci->params.bands / ci->leaf_entries));
	ci->sorted_leaves = meta->version >= LSH_VERSION_SORTED;
	ci->have_moments = lsh_meta_moments(meta, &ci->moments);
	ci->scale = ci->have_moments ? ci->rows / Max(ci->moments.rows_at_build, 1.0) : 1.0;
	if (ci->known && meta->build_entries > 0)
	{
		/* entries per band now against at build, appended to the leaves in between */
		double		built = (double) meta->build_entries / Max(meta->bands, 1);

		if ((double) meta->nslots > built)
			ci->appended = ci->leaf_entries * ((double) meta->nslots - built) / meta->nslots;
	}
	if (LSH_HAS_PENDING(meta->version))
	{
		ci->pending_rows = (double) meta->pending_rows;
		ci->pending_pages = (double) meta->pending_pages;
		ci->pending_keyed = ci->known && lsh_pending_keyed_bands(&ci->params) > 0;
	}
	UnlockReleaseBuffer(metabuf);
	index_close(index, NoLock);
}

/* The depth whose statistics describe a probe at depth m (the deepest encoded one). */
static int
lsh_stats_depth(const LshCostIndex *ci, int m)
{
	if (ci->params.version == LSH_VERSION_EXACT)
		return Min(ci->params.rows, minhash::kMaxMomentDepth);
	return Min(minhash::prefix_effective_depth(ci->params.layout, Min(m, ci->params.rows)),
			   minhash::kMaxMomentDepth);
}

/*
 * A probe of every band at depth m for a query like the stored rows:
 * candidates from the build's statistics, or without them (an index built
 * empty) the prefixes shared by chance plus the rows the selectivity expects
 * (fallback_matches). Each counts the query's own row, as the selectivity
 * does.
 */
static void
lsh_probe_at(const LshCostIndex *ci, int m, double fallback_matches, LshProbe *p)
{
	const LshIndexParams *params = &ci->params;
	int			d = lsh_stats_depth(ci, m);
	double		bands = params->bands;
	double		other = -1;
	double		per_band;
	double		tree_cand;
	double		pending_cand;

	if (ci->have_moments)
		other = minhash::expected_candidates(ci->moments, d);
	if (other >= 0)
	{
		other *= ci->scale;
		per_band = (ci->moments.moment[d] + ci->moments.chance[d]) * ci->scale;
	}
	else
	{
		int			bits = params->version == LSH_VERSION_EXACT ? 32 :
			params->layout.prefix_bits[d] - params->layout.band_bits;
		double		chance = ci->rows * ldexp(1.0, -bits);

		other = bands * chance + fallback_matches;
		per_band = chance + fallback_matches;
	}
	tree_cand = Min(ci->rows, 1.0 + other);
	p->entries = bands * (1.0 + per_band);
	/* the range starts anywhere in a leaf and spans its entries' worth of leaves */
	p->leaves = bands * (1.0 + (1.0 + per_band) / Max(ci->leaf_entries, 1.0));
	p->leaf_pages = Min(p->leaves, ci->leaf_pages);
	/* pending rows match the probe's ranges as the tree's would, or (plain pages) all */
	pending_cand = ci->pending_keyed ? ci->pending_rows * tree_cand / ci->rows : ci->pending_rows;
	p->candidates = tree_cand + pending_cand;
	/* distinct data pages of the tree's candidates; pending rows fill pages in order */
	p->data_pages = ci->data_pages > 1 ? ci->data_pages * -expm1(tree_cand * log1p(-1.0 / ci->data_pages)) : 1;
	p->data_pages += ceil(pending_cand / params->slots_per_page);
}

/* Per band: the descent in the cached levels and the search of the leaf. */
static Cost
lsh_band_cpu(const LshCostIndex *ci)
{
	double		leaf_compares = ci->sorted_leaves ?
		log2((double) LSH_TREE_CAPACITY) + ci->appended : ci->leaf_entries;

	return (ci->height - 1) * log2((double) LSH_TREE_CAPACITY) * LSH_VALUE_COMPARE_COST * 4 +
		leaf_compares * LSH_VALUE_COMPARE_COST;
}

/*
 * The CPU of a probe: leaves visited and searched, entries collected and
 * sorted, new candidates verified (on their data pages), the pending list's
 * pages and keys. Its pages are counted by the caller: a scan that widens
 * reads the same leaves again (a shorter prefix's range holds the longer's).
 */
static void
lsh_probe_cpu(const LshCostIndex *ci, const LshProbe *p, double new_candidates, double new_pages,
			  LshWork *w)
{
	double		bands = ci->params.bands;

	w->cpu += p->leaves * LSH_PAGE_CPU + bands * lsh_band_cpu(ci);
	w->cpu += p->entries * (1.0 + log2(Max(p->entries, 2.0))) * cpu_operator_cost;
	w->cpu += new_pages * LSH_PAGE_CPU + new_candidates * LSH_VERIFY_CPU(ci->params.num_perm);
	w->cpu += ci->pending_pages * LSH_PAGE_CPU;
	if (ci->pending_keyed)
		w->cpu += ci->pending_rows * bands * LSH_VALUE_COMPARE_COST;
}

/*
 * Add a pass over the stored signatures that verifies `rows` of them
 * (lsh_verify_all): blocks in order until that many were verified, the data
 * pages of a built index coming first; every block when it verifies all.
 */
static void
lsh_add_full_pass(const LshCostIndex *ci, double rows, LshWork *w)
{
	double		pages = rows >= ci->rows ? ci->pages : Min(ci->pages, ceil(rows / ci->params.slots_per_page));

	w->seq_pages = Min(ci->pages, w->seq_pages + pages);
	w->cpu += pages * LSH_PAGE_CPU + rows * LSH_VERIFY_CPU(ci->params.num_perm);
}

/*
 * The I/O of this work in one of loop_count scans. One scan reads its
 * distinct pages, the gapped ascending ones priced as a bitmap heap scan
 * prices its pages (by the square root of the share of the index it reads,
 * between random_page_cost and seq_page_cost); a full pass re-reads the
 * others at no cost. Over several scans, the distinct pages of all of them
 * by the Mackert-Lohman formula (index_pages_fetched, with
 * effective_cache_size), as genericcostestimate counts them, read at that
 * price, per scan: a join through a small index pays for reading it once.
 */
static Cost
lsh_io_cost(PlannerInfo *root, const LshCostIndex *ci, const LshWork *w, double loop_count,
			double spc_random, double spc_seq)
{
	double		distinct = Min(ci->pages, w->random_pages + w->seq_pages);
	double		random = Min(w->random_pages, distinct);
	double		fetched = distinct;
	double		random_cost;

	if (distinct <= 0)
		return 0;
	random_cost = random >= 2.0 ?
		spc_random - (spc_random - spc_seq) * sqrt(random / ci->pages) : spc_random;
	if (loop_count > 1)
		fetched = index_pages_fetched(clamp_row_est(distinct * loop_count), (BlockNumber) ci->pages,
									  ci->pages, root) / loop_count;
	return fetched * (random * random_cost + (distinct - random) * spc_seq) / distinct;
}

/*
 * How many times the query level runs this scan: a LATERAL subquery (or a
 * correlated subquery) runs once per row of the outer relations it refers
 * to, but is planned once, without that loop count (which a parameterized
 * path of the outer query would get). While it is planned, the outer level's
 * plan_params list the values it takes from there: the largest row count of
 * their relations, if already estimated.
 */
static double
lsh_outer_loops(PlannerInfo *root)
{
	PlannerInfo *outer = root->parent_root;
	double		loops = 1.0;
	ListCell   *lc;

	if (outer == NULL)
		return loops;
	foreach(lc, outer->plan_params)
	{
		PlannerParamItem *item = (PlannerParamItem *) lfirst(lc);
		Var		   *var = (Var *) item->item;

		if (IsA(var, Var) && var->varno > 0 && (int) var->varno < outer->simple_rel_array_size &&
			outer->simple_rel_array[var->varno] != NULL)
			loops = Max(loops, outer->simple_rel_array[var->varno]->rows);
	}
	return loops;
}

/* The threshold of a % or %>= index qual (%>=: its constant t, else the GUC's). */
static double
lsh_qual_threshold(PlannerInfo *root, Expr *clause, Node **query)
{
	Node	   *right = get_rightop(clause);
	double		t = minhash_threshold();

	*query = right;
	if (right != NULL && IsA(right, RowExpr) && list_length(((RowExpr *) right)->args) == 2)
	{
		Node	   *targ = estimate_expression_value(root, (Node *) lsecond(((RowExpr *) right)->args));

		*query = (Node *) linitial(((RowExpr *) right)->args);
		if (IsA(targ, Const) && !((Const *) targ)->constisnull)
			t = DatumGetFloat8(((Const *) targ)->constvalue);
	}
	return t;
}

void
lshcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				Cost *indexStartupCost, Cost *indexTotalCost,
				Selectivity *indexSelectivity, double *indexCorrelation,
				double *indexPages)
{
	IndexOptInfo *info = path->indexinfo;
	LshCostIndex ci;
	LshWork		work = {0, 0, 0};
	LshWork		first = {0, 0, 0};
	bool		have_first = false;
	double		spc_random;
	double		spc_seq;
	Selectivity sel = 1.0;
	List	   *quals = NIL;
	double		threshold = minhash_threshold();
	double		matches;
	double		bands;
	Cost		other_operands = 0;
	ListCell   *lc;

	*indexCorrelation = 0;
	if (path->indexclauses == NIL && path->indexorderbys == NIL)
	{
		/*
		 * Nothing to look up (amoptionalkey lets the planner offer such a
		 * path, e.g. an index-only scan for count(*), or a partial index
		 * whose predicate the query implies): the index cannot answer it.
		 * disable_cost is not enough, since it can undercut a sequential
		 * scan under enable_seqscan = off, which adds disable_cost too.
		 */
		*indexStartupCost = get_float8_infinity();
		*indexTotalCost = get_float8_infinity();
		*indexSelectivity = 1.0;
		*indexPages = info->pages;
		/* and from 18 on, an infinite cost alone is not enough either */
		mh_disable_index_path(path);
		return;
	}

	lsh_cost_index(info, &ci);
	get_tablespace_page_costs(info->reltablespace, &spc_random, &spc_seq);
	bands = ci.params.bands;

	/* selectivity: the tightest % qual, each at its own threshold */
	if (path->indexclauses != NIL)
	{
		quals = get_quals_from_indexclauses(path->indexclauses);
		foreach(lc, quals)
		{
			Expr	   *clause = lfirst_node(RestrictInfo, lc)->clause;
			Node	   *query;
			double		t = lsh_qual_threshold(root, clause, &query);

			if (lc == list_head(quals))
				threshold = t;
			sel = Min(sel, lsh_similar_restriction_sel(root, list_make2(get_leftop(clause), query),
													   info->rel->relid, t));
		}
	}
	matches = sel * ci.rows;
	/* the query's band keys: one hash per value of each band */
	work.cpu += bands * ci.params.rows * cpu_operator_cost;

	if (quals != NIL || ci.params.version == LSH_VERSION_EXACT || list_length(path->indexorderbys) != 1 ||
		lsh_min_candidates > 0)
	{
		/* one probe, at the threshold's depth (whole bands for ORDER BY alone) */
		int			depth = quals != NIL ? lsh_probe_depth(&ci.params, threshold) : ci.params.rows;
		LshProbe	p;

		lsh_probe_at(&ci, depth, matches, &p);
		lsh_probe_cpu(&ci, &p, p.candidates, p.data_pages, &work);
		work.random_pages = p.leaf_pages + p.data_pages;
		work.seq_pages = ci.pending_pages;
		/* the index returns no more rows than its candidates */
		sel = Min(sel, p.candidates / ci.rows);
		matches = sel * ci.rows;
		if (matches > 1)
			work.cpu += matches * log2(matches) * cpu_operator_cost;	/* sorting the results */
		/* a search widened by minhash.lsh_min_candidates reads every signature */
		if (lsh_min_candidates > (quals != NIL ? matches : p.candidates))
			lsh_add_full_pass(&ci, ci.rows, &work);
	}
	else
	{
		/*
		 * ORDER BY <%> alone: stages from whole bands down to depth 1, then
		 * the signatures not verified yet, up to lsh_max_scan_tuples in all.
		 * A LIMIT of k rows stops at the first stage that has k rows
		 * complete; the other conditions of the query keep rel->rows of
		 * rel->tuples, so the scan must produce k / that share.
		 */
		double		budget = lsh_max_scan_tuples < 0 ? ci.rows : Min(ci.rows, (double) lsh_max_scan_tuples);
		double		wanted = get_float8_infinity();
		double		verified = 0;
		double		pages_read = 0;
		int			top = lsh_stats_depth(&ci, ci.params.rows);

		if (root->limit_tuples > 0)
			wanted = root->limit_tuples * Max(info->rel->tuples, 1.0) / Max(info->rel->rows, 1.0);
		for (int m = top; m >= 1 && verified < budget; m--)
		{
			LshProbe	p;
			double		complete;
			double		found;

			lsh_probe_at(&ci, m, 0, &p);
			found = Max(p.candidates, verified);
			lsh_probe_cpu(&ci, &p, found - verified, Max(0.0, p.data_pages - pages_read), &work);
			verified = found;
			pages_read = Max(pages_read, p.data_pages);
			work.random_pages = Max(work.random_pages, p.leaf_pages + pages_read);
			work.seq_pages = ci.pending_pages;
			/* rows at least as similar as depth m finds with lsh_recall */
			complete = 1.0;
			if (ci.have_moments)
				complete += Max(0.0, minhash::expected_matches(ci.moments,
															   minhash::depth_complete_similarity(m, ci.params.bands, lsh_recall))) * ci.scale;
			if (!have_first && Min(complete, verified) >= wanted)
			{
				first = work;
				have_first = true;
			}
		}
		if (verified < budget)
			lsh_add_full_pass(&ci, budget - verified, &work);
		matches = ci.rows;
	}

	/* the query side (e.g. minhash('...')) is evaluated once per scan */
	if (quals != NIL)
		other_operands += index_other_operands_eval_cost(root, quals);
	foreach(lc, path->indexorderbys)
	{
		Expr	   *clause = (Expr *) lfirst(lc);
		QualCost	qc;

		if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
		{
			cost_qual_eval_node(&qc, (Node *) lsecond(((OpExpr *) clause)->args), root);
			other_operands += qc.startup + qc.per_tuple;
		}
	}

	loop_count = Max(loop_count, lsh_outer_loops(root));
	*indexTotalCost = other_operands + work.cpu + lsh_io_cost(root, &ci, &work, loop_count, spc_random, spc_seq);
	if (have_first)
		*indexStartupCost = other_operands + first.cpu + lsh_io_cost(root, &ci, &first, loop_count, spc_random, spc_seq);
	else
		*indexStartupCost = *indexTotalCost;
	*indexSelectivity = sel;
	*indexPages = Min(ci.pages, work.random_pages + work.seq_pages);
}
