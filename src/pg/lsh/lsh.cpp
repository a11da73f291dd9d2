/*
 * The lsh access method: handler, reloptions, GUCs and build phase names;
 * what is an lsh index, and opening one for its owner's functions.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

#include <cfloat>
#include <cmath>

extern "C" {
#include "access/amapi.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(lsh_handler);
}

/*
 * minhash.lsh_min_candidates: when the band probe yields fewer matching rows
 * than this, the scan verifies every stored signature instead (exact, still
 * without heap visits). Read when a scan starts, so SET applies to the next
 * query. 0 (default) never widens.
 */
int			lsh_min_candidates = 0;

/*
 * minhash.lsh_recall: the probability with which a % scan at threshold t
 * finds a pair of similarity t + 0.1, or (1 + t) / 2 when nearer (it chooses
 * the probe depth from it: lsh_probe.cpp, the rule of every reader), and
 * with which an ORDER BY scan has found the rows it returns before widening.
 * Lower is faster, higher finds more (the style of hnsw.ef_search).
 */
double		lsh_recall = 0.98;

/*
 * minhash.lsh_max_scan_tuples: the signatures an ORDER BY scan verifies before
 * it stops widening (as pgvector's hnsw.max_scan_tuples); -1: no bound.
 */
int			lsh_max_scan_tuples = 20000;

static relopt_kind lsh_relopt_kind;

void
lsh_init(void)
{
	lsh_relopt_kind = add_reloption_kind();

	/*
	 * Defaults outside the valid ranges mean "not given", so that lshoptions
	 * can tell WITH (threshold = ...) from WITH (bands = ..., rows = ...).
	 */
	add_real_reloption(lsh_relopt_kind, "threshold",
					   "Jaccard similarity the band parameters are chosen for",
					   -1.0, 0.0, 1.0, AccessExclusiveLock);
	add_int_reloption(lsh_relopt_kind, "bands", "Number of LSH bands (b)",
					  0, 1, MINHASH_MAX_NUM_PERM, AccessExclusiveLock);
	add_int_reloption(lsh_relopt_kind, "rows", "Signature values per band (r)",
					  0, 1, MINHASH_MAX_NUM_PERM, AccessExclusiveLock);
	add_real_reloption(lsh_relopt_kind, "fp_weight",
					   "Weight of false positives when choosing bands and rows for a threshold",
					   -1.0, 0.0, 1000.0, AccessExclusiveLock);
	add_real_reloption(lsh_relopt_kind, "fn_weight",
					   "Weight of false negatives when choosing bands and rows for a threshold",
					   -1.0, 0.0, 1000.0, AccessExclusiveLock);
	/*
	 * As GIN's: changeable with ALTER INDEX SET, applied to the next insert,
	 * and on by default: an insert appends its row to the pending list in
	 * one WAL record instead of writing ~30 leaves. Every scan compares the
	 * pending rows' band keys, so the default limit
	 * (minhash.lsh_pending_list_limit) bounds what a full list adds to a
	 * query (bench/notes/2026-11-27-compact-index-and-ingest.md: at 1M rows
	 * 1.6-1.8x the rows per second of fastupdate off, and a full 1MB list
	 * 1.1-1.6x a `%` query's CPU). An index without reloptions has rd_options
	 * NULL: LSH_DEFAULT_FASTUPDATE decides then.
	 */
	add_bool_reloption(lsh_relopt_kind, "fastupdate",
					   "Inserts go to the pending list, merged into the tree in bulk",
					   LSH_DEFAULT_FASTUPDATE, ShareUpdateExclusiveLock);
	add_int_reloption(lsh_relopt_kind, "pending_list_limit",
					  "Size of the pending list's signatures that triggers its merge, in kB",
					  -1, 64, MAX_KILOBYTES, ShareUpdateExclusiveLock);
	/*
	 * As btree's: the room a build leaves in each leaf for later inserts.
	 * Leaves packed full split all at once when the table grows by a few
	 * percent (BENCHMARKS.md, "Fast ingest"); the default keeps the index
	 * small for tables that are mostly read. Applies to the next build.
	 */
	add_int_reloption(lsh_relopt_kind, "fillfactor",
					  "Packs leaves to this percentage at build, leaving room for inserts",
					  LSH_DEFAULT_FILLFACTOR, 10, 100, ShareUpdateExclusiveLock);
	/*
	 * Fixed at build like threshold: the bits of each signature value a data
	 * slot keeps (8, 16 or 32, at most the signatures' own). Fewer than the
	 * signatures have make verification a prefilter that the executor
	 * completes against the table. 0: not given (8 for compact signatures,
	 * 32 for 32-bit ones).
	 */
	add_int_reloption(lsh_relopt_kind, "verify_bits",
					  "Bits of each signature value the index keeps to verify candidates",
					  0, 8, 32, AccessExclusiveLock);
	DefineCustomIntVariable("minhash.lsh_min_candidates",
							"Verifies every signature in an lsh index when its bands yield fewer rows than this.",
							"0 never widens the search. The widened scan is exact and reads only the index.",
							&lsh_min_candidates,
							0, 0, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomRealVariable("minhash.lsh_recall",
							 "Probability with which an lsh scan finds a row 0.1 above the similarity threshold (or halfway to 1).",
							 "Chooses how deep a % scan probes the bands, and how far ORDER BY <%> widens before returning rows. Lower is faster.",
							 &lsh_recall,
							 0.98, 0.5, 0.9999,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("minhash.lsh_max_scan_tuples",
							"Signatures an lsh ORDER BY scan verifies before it stops widening.",
							"-1 means no bound. At the bound the scan returns the rows verified so far, closest first.",
							&lsh_max_scan_tuples,
							20000, -1, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
}

static void
option_error(const char *msg, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s", msg),
			 hint ? errhint("%s", hint) : 0));
}

/*
 * Parse and, when validate is set (CREATE INDEX, ALTER INDEX SET), check the
 * combination of options. Whether bands * rows fits k can only be checked once
 * k is known: at build (from the typmod or the first row) or first insert.
 */
bytea *
lshoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"threshold", RELOPT_TYPE_REAL, offsetof(LshOptions, threshold)},
		{"bands", RELOPT_TYPE_INT, offsetof(LshOptions, bands)},
		{"rows", RELOPT_TYPE_INT, offsetof(LshOptions, rows)},
		{"fp_weight", RELOPT_TYPE_REAL, offsetof(LshOptions, fp_weight)},
		{"fn_weight", RELOPT_TYPE_REAL, offsetof(LshOptions, fn_weight)},
		{"fastupdate", RELOPT_TYPE_BOOL, offsetof(LshOptions, fastupdate)},
		{"pending_list_limit", RELOPT_TYPE_INT, offsetof(LshOptions, pending_list_limit)},
		{"fillfactor", RELOPT_TYPE_INT, offsetof(LshOptions, fillfactor)},
		{"verify_bits", RELOPT_TYPE_INT, offsetof(LshOptions, verify_bits)},
	};
	LshOptions *opts;

	opts = (LshOptions *) build_reloptions(reloptions, validate, lsh_relopt_kind,
										   sizeof(LshOptions), tab, lengthof(tab));
	if (!validate || opts == NULL)
		return (bytea *) opts;

	if (std::isnan(opts->threshold) || std::isnan(opts->fp_weight) || std::isnan(opts->fn_weight))
		option_error("lsh options \"threshold\", \"fp_weight\" and \"fn_weight\" cannot be NaN", NULL);

	bool		has_threshold = opts->threshold >= 0;
	bool		has_bands = opts->bands > 0;
	bool		has_rows = opts->rows > 0;
	bool		has_weights = opts->fp_weight >= 0 || opts->fn_weight >= 0;

	if (has_threshold && (has_bands || has_rows))
		option_error("lsh options \"threshold\" and \"bands\"/\"rows\" cannot be combined",
					 "Give either a threshold, or bands and rows.");
	if (has_bands != has_rows)
		option_error("lsh options \"bands\" and \"rows\" must be given together", NULL);
	if (has_bands && has_weights)
		option_error("lsh options \"fp_weight\" and \"fn_weight\" apply only with \"threshold\"",
					 "Weights choose bands and rows for a threshold; drop them or drop bands and rows.");
	if (has_threshold && opts->threshold <= 0.0)
		option_error("lsh option \"threshold\" must be greater than 0", NULL);
	if (has_weights)
	{
		double		fp = opts->fp_weight >= 0 ? opts->fp_weight : LSH_DEFAULT_FP_WEIGHT;
		double		fn = opts->fn_weight >= 0 ? opts->fn_weight : LSH_DEFAULT_FN_WEIGHT;

		if (fp == 0.0 && fn == 0.0)
			option_error("lsh options \"fp_weight\" and \"fn_weight\" cannot both be 0", NULL);
	}
	if (opts->verify_bits != 0 && opts->verify_bits != 8 && opts->verify_bits != 16 &&
		opts->verify_bits != 32)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lsh option \"verify_bits\" must be 8, 16 or 32, not %d", opts->verify_bits)));
	if (has_bands && (int64) opts->bands * opts->rows > MINHASH_MAX_NUM_PERM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lsh options bands * rows must not exceed %d, the largest num_perm",
						MINHASH_MAX_NUM_PERM),
				 errdetail("bands = %d, rows = %d.", opts->bands, opts->rows)));
	return (bytea *) opts;
}

char *
lshbuildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return (char *) "initializing";
		case LSH_PHASE_SCAN:
			return (char *) "scanning table";
		case LSH_PHASE_SORT:
			return (char *) "sorting band entries";
		case LSH_PHASE_LOAD:
			return (char *) "loading band entries";
		default:
			return NULL;
	}
}

extern "C" Datum
lsh_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	am->amstrategies = LSH_NSTRATEGIES;
	am->amsupport = 0;
	am->amoptsprocnum = 0;
	am->amcanorder = false;
	am->amcanorderbyop = true;
	am->amcanbackward = false;
	am->amcanunique = false;
	am->amcanmulticol = false;
	am->amoptionalkey = true;	/* ORDER BY <%> alone, without a % qual */
	am->amsearcharray = false;
	am->amsearchnulls = false;
	am->amstorage = false;
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = false;
	am->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	am->amkeytype = InvalidOid;

	am->ambuild = lshbuild;
	am->ambuildempty = lshbuildempty;
	am->aminsert = lshinsert;
	am->ambulkdelete = lshbulkdelete;
	am->amvacuumcleanup = lshvacuumcleanup;
	am->amcanreturn = NULL;
	am->amcostestimate = lshcostestimate;
	am->amoptions = lshoptions;
	am->amproperty = NULL;
	am->ambuildphasename = lshbuildphasename;
	am->amvalidate = lshvalidate;
	am->amadjustmembers = NULL;
	am->ambeginscan = lshbeginscan;
	am->amrescan = lshrescan;
	am->amgettuple = lshgettuple;
	am->amgetbitmap = lshgetbitmap;
	am->amendscan = lshendscan;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;

	PG_RETURN_POINTER(am);
}

/*
 * Is this relation an lsh index (or a partitioned index of the lsh access
 * method)? Its access method's routine is ours.
 */
bool
lsh_is_lsh_index(Relation index)
{
	return index->rd_indam != NULL && index->rd_indam->ambuild == lshbuild;
}

/*
 * Is the index too new for this snapshot? A build that met a HOT chain
 * whose versions differ in an indexed column (the update was HOT because no
 * index covered the column then) indexes only the chain's newest version
 * and sets pg_index.indcheckxmin: a snapshot older than the index may see
 * versions it does not hold, so the planner leaves such an index out for
 * it. Only a transaction snapshot (REPEATABLE READ, SERIALIZABLE) can be
 * that old; amcheck refuses the same case the same way.
 */
bool
lsh_index_too_new(Relation index, Snapshot snapshot)
{
	return IsolationUsesXactSnapshot() && index->rd_index->indcheckxmin &&
		!TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data), snapshot->xmin);
}

/*
 * Open an lsh index and its table, the index with the given lock mode, for
 * minhash_lsh_check, minhash_lsh_stats and minhash_lsh_clean_pending_list
 * (funcname, for the hint on a partitioned index). The caller must own the table:
 * checked from the catalogs before any lock is requested, since a lock
 * request queues, so even one refused afterwards would hold up other
 * sessions.
 */
Relation
lsh_open_owned(Oid indexoid, LOCKMODE mode, Relation *heap, const char *funcname)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	const char *name = get_rel_name(indexoid);
	Relation	index;

	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", indexoid)));
	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", name ? name : "?")));
	if (!mh_class_ownercheck(heapoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, name ? name : "?");
	/* heap before index, as every other user of both locks them */
	*heap = table_open(heapoid, AccessShareLock);
	index = index_open(indexoid, mode);
	if (!lsh_is_lsh_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an lsh index", RelationGetRelationName(index))));
	if (index->rd_rel->relkind != RELKIND_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a partitioned index", RelationGetRelationName(index)),
				 errdetail("A partitioned index has no storage of its own: "
						   "each partition has its own lsh index."),
				 errhint("Call %s on the partitions' indexes, e.g. SELECT relid::regclass, %s(relid) "
						 "FROM pg_partition_tree(%s) WHERE isleaf.", funcname, funcname,
						 quote_literal_cstr(quote_identifier(RelationGetRelationName(index))))));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));
	/*
	 * CREATE INDEX CONCURRENTLY commits the index before building it and
	 * leaves it unbuilt (not ready) when the build fails: its pages, if any,
	 * are half a build, which the readers would call corrupted.
	 */
	if (!index->rd_index->indisready)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lsh index \"%s\" is not built", RelationGetRelationName(index)),
				 errdetail("Its build failed or is in progress (CREATE INDEX CONCURRENTLY)."),
				 errhint("REINDEX the index, or drop it.")));
	return index;
}
