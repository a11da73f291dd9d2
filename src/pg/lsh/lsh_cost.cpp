/*
 * Cost estimate of an lsh index scan.
 *
 * All the work happens before the first row is returned, so startup cost is
 * total cost. The work is: one descent per band (internal levels are copied
 * in backend memory; the leaf is a random read whose entries are compared),
 * then one random read of a data page per candidate plus the comparison of k
 * values. The number of candidates comes from the key multiplicity measured
 * at build (see LshMetaPageData.build_sumsq), at the probe depth the scan
 * will use at the query's threshold (lsh_probe_depth; build_prefix_sumsq for
 * prefixes): an index built for a higher threshold must probe shorter
 * prefixes at a low one, and pays for the candidates they bring. The
 * selectivity handed back is
 * that of the % quals, capped by the candidates -- and 1 for ORDER BY alone,
 * so that without a LIMIT the planner prices fetching every row and prefers a
 * sequential scan plus sort, which (unlike the index) returns every row.
 *
 * Rows in the pending list (fastupdate, format 3): every scan reads the
 * list's pages and compares each row's band keys with its probe ranges
 * (keyed pages, lsh_pending.h); the rows that match are candidates as the
 * tree's would be, in the same proportion. Rows on plain pages (1.1's) are
 * candidates of every scan.
 */
#include "pg/pg_prelude.h"

#include <cmath>

#include "core/signature.h"
#include "pg/lsh/lsh.h"
#include "pg/lsh/lsh_pending.h"

extern "C" {
#include "access/genam.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "utils/float.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"
}

/* relative cost of comparing one 32-bit value (a tight loop, not an operator call) */
#define LSH_VALUE_COMPARE_COST (cpu_operator_cost * 0.05)

void
lshcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				Cost *indexStartupCost, Cost *indexTotalCost,
				Selectivity *indexSelectivity, double *indexCorrelation,
				double *indexPages)
{
	IndexOptInfo *info = path->indexinfo;
	int			bands;
	int			height = 1;
	int			num_perm;
	int			spp;
	int			slot_width = MINHASH_WIDTH_32;	/* an index without signatures yet: as 32-bit slots */
	double		dup = 2.0;		/* entries sharing a probed key, without build statistics */
	double		leaves_per_probe = 1.0;
	/* a leaf's entries compared per probe: all of them, before version 4 */
	double		leaf_compares = LSH_TREE_CAPACITY * 0.8;
	int			depth = 0;
	double		ntuples = Max(info->tuples, 1.0);
	double		spc_random;
	double		spc_seq;
	Selectivity sel = 1.0;
	List	   *quals = NIL;
	double		matches;
	double		cand;
	double		tree_cand;
	double		data_pages;
	double		pending_rows = 0;
	double		pending_pages = 0;
	double		pending_cand;
	bool		pending_keyed = false;
	Cost		cost;

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

	{
		Relation	index = index_open(info->indexoid, NoLock);
		LshMetaPage meta;
		Buffer		metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);

		if (meta->num_perm > 0)
		{
			LshIndexParams p;

			bands = meta->bands;
			num_perm = meta->num_perm;
			lsh_meta_params(meta, &p);
			slot_width = p.slot_width;
		}
		else
		{
			/*
			 * No signature yet: the bands the first one will fix, from the
			 * index's options at the column's num_perm (its typmod, else the
			 * default k).
			 */
			int32		typmod = TupleDescAttr(RelationGetDescr(index), 0)->atttypmod;
			int			rows;
			double		threshold;

			num_perm = typmod > 0 ? MinHashTypmodNumPerm(typmod) : minhash::kDefaultNumPerm;
			if (!lsh_choose_bands(meta, num_perm, &bands, &rows, &threshold))
				bands = Max(meta->opt_bands, 1);
		}
		spp = lsh_slots_per_page(num_perm, slot_width);
		if (LSH_HAS_PENDING(meta->version))
		{
			pending_rows = (double) meta->pending_rows;
			pending_pages = (double) meta->pending_pages;
			if (meta->num_perm > 0)
			{
				LshIndexParams p;

				lsh_meta_params(meta, &p);
				pending_keyed = lsh_pending_keyed_bands(&p) > 0;
			}
		}
		if (meta->root != InvalidBlockNumber)
			height = meta->height;
		if (meta->version >= LSH_VERSION_SORTED && meta->num_perm > 0)
		{
			/*
			 * Sorted leaves: a search of the sorted part, then the entries
			 * appended since the leaf was written, in the share of the rows
			 * inserted since the build.
			 */
			double		built = (double) meta->build_entries / Max(meta->bands, 1);
			double		since = meta->nslots > built ? ((double) meta->nslots - built) / meta->nslots : 0.0;

			leaf_compares = log2(LSH_TREE_CAPACITY) + since * LSH_TREE_CAPACITY * 0.8;
		}
		if (meta->build_entries > 0)
			dup = Max(1.0, (double) meta->build_sumsq / meta->build_entries);
		if (meta->num_perm > 0 && path->indexclauses != NIL)
		{
			LshIndexParams params;

			/* the depth a % scan at the current threshold will probe */
			lsh_meta_params(meta, &params);
			depth = lsh_probe_depth(&params, minhash_threshold());
			if (params.version != LSH_VERSION_EXACT && depth < params.rows)
			{
				int			eff = minhash::prefix_effective_depth(params.layout, depth);
				double		per_band = (double) meta->build_entries / Max(params.bands, 1);
				int			bits = params.layout.prefix_bits[eff] - params.layout.band_bits;

				if (eff <= LSH_PREFIX_STATS && meta->build_prefix_sumsq[eff - 1] > 0)
					dup = Max(1.0, (double) meta->build_prefix_sumsq[eff - 1] / meta->build_entries);
				else
					dup = Max(dup, 1.0 + per_band * ldexp(1.0, -bits));
				leaves_per_probe = 1.0 + dup / (LSH_TREE_CAPACITY * LSH_BUILD_FILL);
			}
		}
		UnlockReleaseBuffer(metabuf);
		index_close(index, NoLock);
	}

	get_tablespace_page_costs(info->reltablespace, &spc_random, &spc_seq);

	/*
	 * Candidates: each band probe finds the entries sharing the query's key,
	 * dup on average (measured at build: for a query like the stored rows),
	 * one of them the query's own row if it is stored. Rows found through
	 * several bands count once, so this bounds the distinct candidates.
	 */
	tree_cand = Min(ntuples, bands * (dup - 1.0) + 1.0);
	pending_cand = pending_keyed ? pending_rows * Min(1.0, tree_cand / ntuples) : pending_rows;
	cand = Min(ntuples, tree_cand + pending_cand);
	if (path->indexclauses != NIL)
	{
		/*
		 * The index returns no more rows than its candidates, whatever the
		 * % estimator (which has no statistics for signatures) guesses.
		 */
		quals = get_quals_from_indexclauses(path->indexclauses);
		sel = clauselist_selectivity(root, quals, info->rel->relid, JOIN_INNER, NULL);
		sel = Min(sel, cand / ntuples);
		matches = sel * ntuples;
	}
	else
		matches = cand;

	/* descents: leaves read at random, internal levels from the backend's copy */
	cost = bands * (leaves_per_probe * spc_random + (height - 1) * cpu_operator_cost);
	cost += bands * leaves_per_probe * leaf_compares * LSH_VALUE_COMPARE_COST;
	/* the pending list's pages and keys, then verification (pending rows fill data pages in order) */
	cost += pending_pages * spc_seq;
	if (pending_keyed)
		cost += pending_rows * bands * LSH_VALUE_COMPARE_COST;
	data_pages = Min(tree_cand, ceil(ntuples / spp)) + ceil(pending_cand / spp);
	cost += data_pages * spc_random;
	cost += cand * (cpu_index_tuple_cost + num_perm * LSH_VALUE_COMPARE_COST);
	if (matches > 1)
		cost += matches * log2(matches) * cpu_operator_cost;	/* sorting the results */
	/* a search widened by minhash.lsh_min_candidates reads every signature */
	if (lsh_min_candidates > matches)
	{
		cost += ceil(ntuples / spp) * spc_seq;
		cost += ntuples * (cpu_index_tuple_cost + num_perm * LSH_VALUE_COMPARE_COST);
	}

	/* the query side (e.g. minhash('...')) is evaluated once per scan */
	if (quals != NIL)
		cost += index_other_operands_eval_cost(root, quals);
	{
		ListCell   *lc;

		foreach(lc, path->indexorderbys)
		{
			Expr	   *clause = (Expr *) lfirst(lc);
			QualCost	qc;

			if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
			{
				cost_qual_eval_node(&qc, (Node *) lsecond(((OpExpr *) clause)->args), root);
				cost += qc.startup + qc.per_tuple;
			}
		}
	}

	*indexStartupCost = cost;
	*indexTotalCost = cost;
	*indexSelectivity = sel;
	*indexPages = bands + pending_pages + data_pages;
}
