/*
 * Selectivity of % (restriction and join), fed by the lsh index's statistics.
 *
 * A build records, per key-prefix depth m, the sum over distinct prefixes of
 * (entries with that prefix)^2 (build_prefix_sumsq; build_sumsq for whole
 * keys). Divided by the entries, minus one, it is the mean number of other
 * rows whose band agrees with a random row's band on the first m values:
 * mu_m = sum over the other rows of J^m, plus the prefixes that collide by
 * chance (entries per band / 2^bits, subtracted). The N rows at similarity
 * >= t contribute N * E[J^m | J >= t] to mu_m, and the rows below t only add
 * to it, so N <= mu_m / E[J^m | J >= t] for every m. Markov's inequality
 * takes E[J^m | J >= t] >= t^m, as if every match sat exactly at t: an upper
 * bound 3 to 12 times the truth on data whose matches spread up to 1. The
 * estimate takes the matches as spread evenly over [t, 1] instead,
 * E[J^m | J >= t] = (1 - t^(m+1)) / ((m + 1)(1 - t)), the smallest over m
 * (an upper bound when the matches are at least that similar). Plus the
 * query's own row, which a typical query
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
 * Rows at similarity >= t implied by mu (the sum of J^m over the other rows,
 * see above), if those rows are spread evenly over [t, 1]: mu / E[J^m].
 */
static double
lsh_matches_from_moment(double mu, int m, double t)
{
	double		mean_jm;

	if (mu <= 0.0)
		return 0.0;
	if (t >= 1.0)
		return mu;
	mean_jm = (1.0 - pow(t, m + 1)) / ((m + 1) * (1.0 - t));
	return mu / Max(mean_jm, pow(t, m));
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
	double		best;
	double		per_band;

	UnlockReleaseBuffer(metabuf);
	index_close(index, NoLock);
	if (m.num_perm == 0 || m.build_entries == 0 || m.bands < 1)
		return false;

	per_band = (double) m.build_entries / m.bands;
	*nrows = per_band;
	threshold = Max(threshold, 0.01);
	/* whole bands: r values, keys of 32 bits (version 1) or the layout's */
	{
		minhash::PrefixLayout l = minhash::prefix_layout(m.bands, m.rows);
		int			bits = m.version == LSH_VERSION_EXACT ? 32 :
			l.prefix_bits[l.encoded] - l.band_bits;
		double		s = (double) m.build_sumsq / m.build_entries - 1.0 - per_band * ldexp(1.0, -bits);

		best = lsh_matches_from_moment(s, m.rows, threshold);
		if (m.version != LSH_VERSION_EXACT)
		{
			for (int d = 1; d <= Min(l.encoded, LSH_PREFIX_STATS); d++)
			{
				double		sd;

				if (m.build_prefix_sumsq[d - 1] == 0)
					continue;
				sd = (double) m.build_prefix_sumsq[d - 1] / m.build_entries - 1.0 -
					per_band * ldexp(1.0, -(l.prefix_bits[d] - l.band_bits));
				/* positions without bits: a prefix of d values stands for more */
				best = Min(best, lsh_matches_from_moment(sd, d, threshold));
			}
		}
	}
	*matches = 1.0 + Min(best, per_band);
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
