/*
 * The probe rule: which rows an lsh probe at a threshold finds, in one place
 * for every reader of the index -- a % scan (lsh_scan.cpp), the all-pairs
 * walk and minhash_clusters (pairs_walk.cpp), minhash_match (pairs_match.cpp)
 * and, through minhash_bands and minhash_first_band, the distributed pairs of
 * a Citus table (citus_pairs.cpp) -- so that their pairs are the union of
 * the per-row % probes through the same index.
 *
 *  depth      lsh_probe_depth: at threshold t, the deepest m whose S-curve
 *             1 - (1 - s^m)^b reaches minhash.lsh_recall at the target
 *             similarity s = probe_target_similarity(t) (t + 0.1, or halfway
 *             to 1 when nearer); r (whole bands) at the design threshold of
 *             an index built with the default weights, and always r for a
 *             version-1 index.
 *  keys       lsh_probe_range / lsh_probe_mask: at depth m a probe matches
 *             the keys equal to the query's band key on the bits of its first
 *             min(m, encoded) values (core/lsh_prefix.h); whole keys at r.
 *             Two rows are candidates when one of their bands' keys match so:
 *             their first m values agree, or differing values' hashes agree
 *             on the few bits the key keeps of them (core prefix_keys_agree).
 *  once       lsh_probe_first_key: two candidates meet in the group of every
 *             key they share; a walk that verifies a pair only in the group
 *             of the smallest (the first band whose keys match) verifies it
 *             once, with no memory of pairs seen.
 *  recall     lsh_candidate_probability: the probability that a pair of
 *             similarity s is a candidate at depth m, with the hash
 *             agreements counted; minhash_lsh_recall(index, t) reports it.
 * Verification is the % operator's estimate, in every reader.
 */
#include "pg/pg_prelude.h"

#include <algorithm>
#include <cmath>

#include "pg/citus/citus.h"
#include "pg/lsh/lsh.h"

extern "C" {
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(minhash_lsh_recall);
}

/*
 * The probe depth at this threshold (see above). Exposed for callers that
 * probe at a threshold of their own: support functions, costs, pairs.
 */
int
lsh_probe_depth(const LshIndexParams *params, double threshold)
{
	if (params->version == LSH_VERSION_EXACT)
		return params->rows;
	return lsh_prefix_depth(params, threshold);
}

/*
 * The depth a prefix-key index with these bands and rows probes at this
 * threshold, whatever its version: a version-1 index probing whole bands
 * where this is shorter says so (lsh_notice_format1).
 */
int
lsh_prefix_depth(const LshIndexParams *params, double threshold)
{
	double		target = minhash::probe_target_similarity(threshold);

	if (params->bands < 1 || params->rows < 1)
		return params->rows;
	return minhash::probe_depth(threshold, target - threshold, lsh_recall, params->bands,
								params->rows);
}

/*
 * Probability that a pair of similarity s is a candidate of a probe at this
 * depth: the S-curve over the positions the key compares, with the chance
 * agreements of differing values' hashes (core prefix_key_hit_probability);
 * for a version-1 index, whole bands of r values (a 32-bit key collision,
 * 2^-32 a band, left out).
 */
double
lsh_candidate_probability(const LshIndexParams *params, int depth, double s)
{
	if (params->version == LSH_VERSION_EXACT)
		return minhash::prefix_hit_probability(s, params->rows, params->bands);
	return minhash::prefix_key_hit_probability(params->layout, s, depth);
}

/* Probability that a probe at this depth finds a pair at the threshold's target similarity. */
double
lsh_probe_depth_recall(const LshIndexParams *params, int depth, double threshold)
{
	return lsh_candidate_probability(params, depth, minhash::probe_target_similarity(threshold));
}

/*
 * The key bits a probe at this depth compares: all of them for whole bands
 * (depth r, or a version-1 index), else those of the depth's prefix.
 */
uint32
lsh_probe_mask(const LshIndexParams *params, int depth)
{
	uint32		lo;
	uint32		hi;

	if (params->version == LSH_VERSION_EXACT || depth >= params->rows)
		return 0xFFFFFFFF;
	minhash::prefix_range(params->layout, 0, depth, &lo, &hi);
	return ~hi;
}

/* The keys a probe at this depth matches for a band whose key is key: [*lo, *hi]. */
void
lsh_probe_range(const LshIndexParams *params, uint32 key, int depth, uint32 *lo, uint32 *hi)
{
	uint32		mask = lsh_probe_mask(params, depth);

	*lo = key & mask;
	*hi = key | ~mask;
}

/*
 * Is key, a probe key (masked, lsh_probe_mask) that signatures a and b share
 * at this depth, the smallest one they share? Then the group of that key is
 * where their pair is verified, once.
 *
 * Version 2 keys carry their band in the top bits, so the smallest shared
 * key is that of the first band whose keys match: no band before key's may
 * match. Equal values are checked first (a pair that shares an earlier band
 * outright, the common case for similar rows, costs no hashing); only then
 * are the earlier bands' differing values hashed (prefix_keys_agree).
 * Version 1 keys are band hashes folded to 32 bits, and a scan matches a key
 * whatever band it came from: the smallest key of one row found among the
 * other's.
 */
bool
lsh_probe_first_key(const LshIndexParams *params, int depth, const uint32 *a, const uint32 *b,
					uint32 key)
{
	const minhash::PrefixLayout *l = &params->layout;

	if (params->version != LSH_VERSION_EXACT)
	{
		int			g = l->band_bits == 0 ? 0 : (int) (key >> (32 - l->band_bits));
		int			len = minhash::prefix_effective_depth(*l, depth);

		for (int h = 0; h < g; h++)
		{
			const uint32 *x = a + (Size) h * params->rows;
			const uint32 *y = b + (Size) h * params->rows;
			int			v = 0;

			while (v < len && x[v] == y[v])
				v++;
			if (v == len)
				return false;
		}
		for (int h = 0; h < g; h++)
		{
			if (minhash::prefix_keys_agree(*l, a, b, h, depth))
				return false;
		}
		return true;
	}
	else
	{
		uint32		ka[MINHASH_MAX_NUM_PERM];
		uint32		kb[MINHASH_MAX_NUM_PERM];
		int			n = params->bands;

		for (int h = 0; h < n; h++)
		{
			ka[h] = minhash::lsh_band_key(*l, false, a, h);
			kb[h] = minhash::lsh_band_key(*l, false, b, h);
		}
		std::sort(kb, kb + n);
		for (int h = 0; h < n; h++)
		{
			if (ka[h] < key && std::binary_search(kb, kb + n, ka[h]))
				return false;
		}
		return true;
	}
}

/*
 * The parameters of an lsh index for minhash_lsh_recall: its own, or for a
 * partitioned index those its partitions' indexes share (the first with a
 * signature; all partitions' indexes agree, pairs_setup.cpp). num_perm = 0
 * when none holds a signature yet. The table is locked AccessShareLock, then
 * the index, as a query does; SELECT on the table (or a column of it) is
 * required, as for reading its rows through the index.
 */
static void
recall_params(Oid indexoid, LshIndexParams *params)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	heap;
	Relation	index;
	List	   *indexes;
	ListCell   *lc;

	memset(params, 0, sizeof(*params));
	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", get_rel_name(indexoid) ? get_rel_name(indexoid) : "?")));
	if (pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck_all(heapoid, GetUserId(), ACL_SELECT, ACLMASK_ANY) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(get_rel_relkind(heapoid)),
					   get_rel_name(heapoid));
	heap = table_open(heapoid, AccessShareLock);
	index = index_open(indexoid, AccessShareLock);
	if (!lsh_is_lsh_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an lsh index", RelationGetRelationName(index))));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));
	indexes = index->rd_rel->relkind == RELKIND_INDEX ? list_make1_oid(indexoid) :
		find_all_inheritors(indexoid, AccessShareLock, NULL);
	foreach(lc, indexes)
	{
		Relation	part;
		LshMetaPage meta;
		Buffer		metabuf;

		if (get_rel_relkind(lfirst_oid(lc)) != RELKIND_INDEX)
			continue;
		part = lfirst_oid(lc) == indexoid ? index : index_open(lfirst_oid(lc), AccessShareLock);
		metabuf = lsh_read_meta(part, BUFFER_LOCK_SHARE, &meta);
		lsh_meta_params(meta, params);
		UnlockReleaseBuffer(metabuf);
		if (part != index)
			index_close(part, AccessShareLock);
		if (params->num_perm > 0)
			break;
	}
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
}

/*
 * The index of a Citus table is an empty shell on this node: the recall is
 * that of its shards' indexes (citus_stats.cpp), in the same rows. False
 * for any other table.
 */
static bool
citus_recall(FunctionCallInfo fcinfo, double t)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			indexoid = PG_GETARG_OID(0);
	Oid			heapoid = IndexGetRelation(indexoid, false);
	char	   *rows;
	char	   *p;

	if (mh_citus_table_method(heapoid) == 0)
		return false;
	rows = mh_citus_shard_recall(heapoid, indexoid, get_func_namespace(fcinfo->flinfo->fn_oid), t);
	for (p = rows; p != NULL;)
	{
		char	   *semi = strchr(p, ';');
		double		similarity;
		double		recall;
		int			depth;
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		if (semi != NULL)
			*semi = '\0';
		if (sscanf(p, "(%lf,%lf,%d)", &similarity, &recall, &depth) != 3)
			elog(ERROR, "unexpected minhash_lsh_recall row from a shard of \"%s\": \"%s\"",
				 get_rel_name(heapoid), p);
		values[0] = Float8GetDatum(similarity);
		values[1] = Float8GetDatum(recall);
		values[2] = Int32GetDatum(depth);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		p = semi != NULL ? semi + 1 : NULL;
	}
	/* no shard holds a signature yet: the rows of an empty index */
	return rows != NULL;
}

/*
 * minhash_lsh_recall(index, threshold): the probability that a probe at the
 * threshold (a % scan, minhash_similar_pairs, minhash_clusters,
 * minhash_match) finds a pair of similarity J, for J = t, t + 0.05 and
 * t + 0.1 (up to 1), with the depth it probes: what the index finds of
 * what a sequential scan finds. NULL recall and depth before the index holds
 * a signature (its k is not known yet).
 */
extern "C" Datum
minhash_lsh_recall(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LshIndexParams params;
	double		t;
	double		last = -1;
	int			depth;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("index must not be NULL")));
	t = PG_ARGISNULL(1) ? minhash_threshold() : PG_GETARG_FLOAT8(1);
	if (!(t >= 0.0 && t <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("threshold must be between 0 and 1, not %g", t),
				 errhint("NULL (the default) uses minhash.similarity_threshold.")));
	recall_params(PG_GETARG_OID(0), &params);
	InitMaterializedSRF(fcinfo, 0);
	if (params.num_perm == 0 && citus_recall(fcinfo, t))
		PG_RETURN_NULL();
	depth = params.num_perm > 0 ? lsh_probe_depth(&params, t) : 0;
	for (int i = 0; i <= 2; i++)
	{
		/* t + 0.1 is 0.7999999999999999 for t = 0.7: show the sum as written */
		double		s = i == 0 ? t : Min(1.0, std::rint((t + 0.05 * i) * 1e12) / 1e12);
		Datum		values[3];
		bool		nulls[3] = {false, params.num_perm == 0, params.num_perm == 0};

		if (s == last)
			continue;
		last = s;
		values[0] = Float8GetDatum(s);
		values[1] = Float8GetDatum(params.num_perm > 0 ? lsh_candidate_probability(&params, depth, s) : 0);
		values[2] = Int32GetDatum(depth);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}
