/*
 * Selectivity of % (restriction and join), fed by the lsh index's statistics.
 *
 * A build records, per key-prefix depth m, the sum over distinct prefixes of
 * (entries with that prefix)^2 (build_prefix_sumsq; build_sumsq for whole
 * keys). From them, the moments mu_m = sum over the other rows of J^m of a
 * stored row's similarity to the others (core/lsh_estimate.h, which also
 * gives the candidates of a probe to the cost estimate, lsh_cost.cpp). The
 * N rows at similarity >= t contribute N * E[J^m | J >= t] to mu_m, and the
 * rows below t only add to it, so N <= mu_m / E[J^m | J >= t] for every m.
 * Markov's inequality takes E[J^m | J >= t] >= t^m, as if every match sat
 * exactly at t: an upper bound 3 to 12 times the truth on data whose matches
 * spread up to 1. The estimate takes the matches as spread evenly over
 * [t, 1] instead, E[J^m | J >= t] = (1 - t^(m+1)) / ((m + 1)(1 - t)), the
 * smallest over m (an upper bound when the matches are at least that
 * similar). Plus the query's own row, which a typical query
 * (WHERE sig % (SELECT sig FROM t WHERE id = ...)) finds.
 *
 * The planner's statistics have nothing for signatures (no histogram means
 * anything for a similarity), so without an lsh index on the expression the
 * estimate falls back to 1/ndistinct of the column when ANALYZE has run (at
 * least the exact duplicates match), else to LSH_DEFAULT_SIM_SEL.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

#include <cmath>

#include "core/lsh_estimate.h"

extern "C" {
#include "access/genam.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "utils/selfuncs.h"

PG_FUNCTION_INFO_V1(minhash_similar_sel);
PG_FUNCTION_INFO_V1(minhash_similar_joinsel);
}

#define LSH_DEFAULT_SIM_SEL 0.001

/*
 * The similarity moments of the rows at the index's last build (see above),
 * false if it recorded none (built empty, or without a signature). Whole keys
 * (build_sumsq) are the deepest prefix encoded, or r values of a version-1
 * index's 32-bit band hash; version 2 on also records each prefix depth.
 */
bool
lsh_meta_moments(const LshMetaPageData *m, minhash::BandMoments *bm)
{
	minhash::PrefixLayout l;

	if (m->num_perm == 0 || m->build_entries == 0 || m->bands < 1 || m->rows < 1)
		return false;
	bm->bands = m->bands;
	bm->rows_at_build = (double) m->build_entries / m->bands;
	if (m->version == LSH_VERSION_EXACT)
	{
		minhash::set_band_moment(bm, Min((int) m->rows, minhash::kMaxMomentDepth),
								 (double) m->build_sumsq, (double) m->build_entries, 32);
		return bm->moment[Min((int) m->rows, minhash::kMaxMomentDepth)] >= 0;
	}
	l = minhash::prefix_layout(m->bands, m->rows);
	minhash::set_band_moment(bm, Min(l.encoded, minhash::kMaxMomentDepth), (double) m->build_sumsq,
							 (double) m->build_entries, l.prefix_bits[l.encoded] - l.band_bits);
	for (int d = 1; d <= Min(l.encoded, LSH_PREFIX_STATS); d++)
		minhash::set_band_moment(bm, d, (double) m->build_prefix_sumsq[d - 1], (double) m->build_entries,
								 l.prefix_bits[d] - l.band_bits);
	return true;
}

/*
 * Expected rows at similarity >= threshold for one row, from this lsh
 * index's build statistics, over the rows it had at build (*nrows). False if
 * the index has no statistics.
 */
static bool
lsh_expected_matches(Oid indexoid, double threshold, double *matches, double *nrows)
{
	Relation	index = index_open(indexoid, NoLock);
	LshMetaPage meta;
	Buffer		metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	LshMetaPageData m = *meta;
	minhash::BandMoments bm;
	double		n;

	UnlockReleaseBuffer(metabuf);
	index_close(index, NoLock);
	if (!lsh_meta_moments(&m, &bm))
		return false;
	n = minhash::expected_matches(bm, threshold);
	if (n < 0)
		return false;
	*nrows = bm.rows_at_build;
	*matches = 1.0 + n;
	return true;
}

/* An lsh index whose (only) column is this expression, or InvalidOid. */
static Oid
lsh_index_on(RelOptInfo *rel, Node *expr)
{
	ListCell   *lc;

	if (rel == NULL || expr == NULL)
		return InvalidOid;
	if (IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *info = (IndexOptInfo *) lfirst(lc);

		if (!mh_is_lsh_indexinfo(info) || info->ncolumns != 1)
			continue;
		if (info->indexkeys[0] != 0)
		{
			if (IsA(expr, Var) && ((Var *) expr)->varattno == info->indexkeys[0] &&
				((Var *) expr)->varlevelsup == 0)
				return info->indexoid;
		}
		else if (info->indexprs != NIL && equal(linitial(info->indexprs), expr))
			return info->indexoid;
	}
	return InvalidOid;
}

/* Selectivity of "expr % something" at this threshold for one row of expr's relation. */
static double
similar_selectivity(VariableStatData *vardata, double threshold)
{
	Oid			indexoid = lsh_index_on(vardata->rel, vardata->var);
	double		matches;
	double		nrows;
	bool		isdefault;
	double		nd;

	if (OidIsValid(indexoid) &&
		lsh_expected_matches(indexoid, threshold, &matches, &nrows))
		return Min(1.0, matches / Max(nrows, 1.0));
	if (HeapTupleIsValid(vardata->statsTuple))
	{
		nd = get_variable_numdistinct(vardata, &isdefault);
		if (!isdefault && nd >= 1.0)
			return 1.0 / nd;
	}
	return LSH_DEFAULT_SIM_SEL;
}

/*
 * Restriction selectivity of "a % b" (args: a, b) at this threshold: shared by
 * the % operator (at minhash.similarity_threshold) and by the support function
 * of minhash_similar(a, b, t) (at t), so that both forms estimate alike.
 */
double
lsh_similar_restriction_sel(PlannerInfo *root, List *args, int varRelid, double threshold)
{
	VariableStatData vardata;
	Node	   *other;
	bool		varonleft;
	double		sel;

	if (!get_restriction_variable(root, args, varRelid, &vardata, &other, &varonleft))
		return LSH_DEFAULT_SIM_SEL;
	/* a NULL constant matches nothing: % is strict */
	if (IsA(other, Const) && ((Const *) other)->constisnull)
	{
		ReleaseVariableStats(vardata);
		return 0.0;
	}
	sel = similar_selectivity(&vardata, threshold);
	ReleaseVariableStats(vardata);
	CLAMP_PROBABILITY(sel);
	return sel;
}

extern "C" Datum
minhash_similar_sel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	int			varRelid = PG_GETARG_INT32(3);

	PG_RETURN_FLOAT8(lsh_similar_restriction_sel(root, args, varRelid, minhash_threshold()));
}

extern "C" Datum
minhash_similar_joinsel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	SpecialJoinInfo *sjinfo = (SpecialJoinInfo *) PG_GETARG_POINTER(4);
	VariableStatData vardata1;
	VariableStatData vardata2;
	bool		reversed;
	double		sel1;
	double		sel2;
	double		threshold;

	if (list_length(args) != 2)
		PG_RETURN_FLOAT8(LSH_DEFAULT_SIM_SEL);
	threshold = minhash_threshold();
	get_join_variables(root, args, sjinfo, &vardata1, &vardata2, &reversed);
	/*
	 * The fraction of the pairs that match: per row of one side, the expected
	 * matches among the other side's rows. Either side's index describes its
	 * own rows; take the one that knows more (the smaller estimate comes from
	 * an index, a default is larger).
	 */
	sel1 = similar_selectivity(&vardata1, threshold);
	sel2 = similar_selectivity(&vardata2, threshold);
	ReleaseVariableStats(vardata1);
	ReleaseVariableStats(vardata2);
	sel1 = Min(sel1, sel2);
	CLAMP_PROBABILITY(sel1);
	PG_RETURN_FLOAT8(sel1);
}
