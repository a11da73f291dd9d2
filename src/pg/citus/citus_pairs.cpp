/*
 * minhash_similar_pairs and minhash_clusters on a Citus table.
 *
 * The coordinator's lsh index is an empty shell and the shards' indexes each
 * see a part of the rows, so the pairs of the table come out of Citus's own
 * distributed execution instead of an index walk, with the same definition
 * as the walk's and a % probe's (the probe rule, lsh_probe.cpp): two rows are
 * a pair when the index's keys of some band agree on the bits a probe at the
 * threshold's depth compares (minhash_bands(sig, bands, rows, depth); depth:
 * lsh_probe_depth) and the estimate reaches the threshold; each pair once.
 *
 *  A  every row's band keys, minhash_bands(sig, bands, rows, depth), go into a
 *     scratch table distributed by key (INSERT .. SELECT, which Citus
 *     repartitions worker to worker): equal keys meet on one shard;
 *  B  the keys shared by two rows or more go back beside their rows (a table
 *     colocated with the indexed table);
 *  C  those keys with their rows' signatures and keys (a join with the table
 *     on its own shards), repartitioned by key again: a signature travels
 *     once per band it shares with another row;
 *  D  on each shard of that table, the pairs of each key's rows are verified:
 *     the same band (keys carry their band number), the key's band the first
 *     whose keys agree (minhash_first_band: each pair is reported from one
 *     band only, as the walk does), the estimate at the
 *     threshold (minhash_similar, the % operator's); only pairs travel to the
 *     coordinator. The rows of C are counted first: the final query must see
 *     them all (open_scratch_cursor, check_scratch_rows).
 *
 * The coordinator runs statements and receives pairs, which go to the
 * function's tuplestore (spilling beyond work_mem) or, for clusters, to a
 * union-find over the rows met in pairs (about 30 bytes a row, as the
 * single-server union-find's 6 bytes a row grows with the table) and a
 * tuplestore/tuplesort of members or edges.
 *
 * Rows are named by (worker_hash(distribution column), ctid): rows of equal
 * hash live in one shard, whose ctids are distinct. The scratch tables are
 * unlogged, live in the indexed table's schema, belong to the caller and are
 * dropped before the function returns (an error rolls them back with the
 * transaction). In
 * READ COMMITTED each step sees the rows committed when it starts; under
 * REPEATABLE READ Citus keeps one snapshot per worker for the transaction.
 *
 * minhash_clusters' keep column rides along from step C (each row's value
 * beside its key), so that the coordinator orders rows as one server does:
 * [keep,] key, row.
 *
 * exact => true (with text_column: the index is on a column): each row's
 * shingles, minhash_shingles(text, k, unit) computed on its shard, ride
 * along from step C too, and step D verifies each candidate of the first
 * band on the exact Jaccard similarity of the two rows' shingles instead of
 * the estimate -- the shingles one server hashes, so the same value but for
 * a collision of its 64-bit hashes. A row with more distinct shingles than
 * one server's exact verification holds (a quarter of the caller's
 * work_mem, pairs_exact.cpp) is verified by the estimate, as there: its
 * candidates come back with the pairs, similar or not, so that the
 * coordinator counts such rows for the same NOTICE.
 *
 * Supported: hash-distributed tables whose lsh index is on a plain column.
 * The rest is refused with a hint.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "pg/compat.h"
#include "pg/pairs/pairs.h"
#include "pg/pairs/pairs_cluster_finish.h"

extern "C" {
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_coerce.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"
#include "utils/typcache.h"
}

/* What the distributed statements need to know. */
typedef struct CitusPairsPlan
{
	const char *funcname;
	Oid			relid;
	const char *table;			/* qualified, quoted */
	const char *dist;			/* distribution column, quoted */
	const char *dist_type;		/* its type, qualified, with typmod and COLLATE */
	const char *dist_eq;		/* its equality operator, OPERATOR(schema.=) */
	const char *sig;			/* the indexed column, quoted */
	const char *key;			/* the key column, quoted */
	const char *key_type;		/* the type keys are returned as, qualified */
	const char *key_column;		/* the same with the key's collation, for a column */
	Oid			key_typid;
	Oid			key_collation;
	bool		key_ordered;	/* key_type has a btree order: key_a < key_b */
	const char *keep;			/* minhash_clusters' keep column, quoted, or NULL */
	const char *keep_type;		/* its base type, qualified, with typmod and COLLATE */
	Oid			keep_typid;		/* that base type */
	Oid			keep_collation;	/* the column's */
	bool		exact;			/* exact => true */
	const char *text;			/* text_column, quoted */
	const char *shingles;		/* the arguments k, unit of minhash_shingles */
	int64		shingle_limit;	/* more distinct shingles: the estimate verifies */
	const char *ext;			/* the extension's schema, quoted */
	Oid			scratch_nsp;
	int			bands;
	int			rows;
	int			depth;
	int			nshards;
	double		threshold;
} CitusPairsPlan;

/* One verified pair as the final statement returns it. */
typedef struct CitusPair
{
	Datum		key_a;
	Datum		key_b;
	double		similarity;
	int32		hash_a;			/* for clusters: the rows' names */
	ItemPointer tid_a;
	int32		hash_b;
	ItemPointer tid_b;
	Datum		keep_a;			/* with a keep column */
	bool		keep_a_isnull;
	Datum		keep_b;
	bool		keep_b_isnull;
} CitusPair;

typedef void (*CitusPairFn) (const CitusPair *pair, void *arg);

[[noreturn]] static void
unsupported(const CitusPairsPlan *plan, const char *what, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s on Citus table \"%s\" does not support %s", plan->funcname,
					get_rel_name(plan->relid), what),
			 errhint("%s", hint)));
}

static const char *
qualified_type(Oid typid, int32 typmod)
{
	return format_type_extended(typid, typmod, FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY);
}

/* OPERATOR(schema.name) of an operator, for statements run with a restricted search_path */
static const char *
qualified_operator(Oid opno)
{
	HeapTuple	tp = SearchSysCache1(OPEROID, ObjectIdGetDatum(opno));
	Form_pg_operator op;
	const char *result;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for operator %u", opno);
	op = (Form_pg_operator) GETSTRUCT(tp);
	result = psprintf("OPERATOR(%s.%s)", quote_identifier(get_namespace_name(op->oprnamespace)),
					  NameStr(op->oprname));
	ReleaseSysCache(tp);
	return result;
}

/*
 * The shards' index parameters for a caller who may read the table but not
 * call minhash_lsh_stats on its shards (their owner's): Citus creates each
 * shard's index with the options of the coordinator's index (an empty shell,
 * whose metapage keeps them), an lsh index's band options cannot change
 * after it is built (lsh_alter.cpp), and an lsh index resolves its bands and
 * rows from those options and the k of its first signature
 * (lsh_choose_bands). So: the shell's options, the k of one
 * signature of the table (read as the caller, through Citus), and the number
 * of shards from Citus's catalog. No signature: num_perm 0, no pairs.
 */
static void
params_as_reader(const CitusPairsPlan *plan, Relation index, MhCitusIndexStats *st)
{
	LshMetaPage meta;
	Buffer		metabuf;
	LshMetaPageData opts;
	int			save_nestlevel;
	bool		isnull;

	memset(st, 0, sizeof(*st));
	st->nshards = list_length(mh_citus_shards(plan->relid, RelationGetRelid(index)));
	metabuf = lsh_read_meta(index, BUFFER_LOCK_SHARE, &meta);
	opts = *meta;
	UnlockReleaseBuffer(metabuf);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (SPI_execute(psprintf("SELECT %s.minhash_num_perm(t.%s) FROM %s t WHERE t.%s IS NOT NULL LIMIT 1",
							 plan->ext, plan->sig, plan->table, plan->sig), true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read a signature of \"%s\"", get_rel_name(plan->relid));
	if (SPI_processed == 1)
		st->num_perm = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	AtEOXact_GUC(true, save_nestlevel);
	SPI_finish();

	if (st->num_perm > 0 &&
		!lsh_choose_bands(&opts, st->num_perm, &st->bands, &st->rows, &st->threshold))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lsh index \"%s\" has %d bands of %d rows, more values than the %d of its signatures",
						RelationGetRelationName(index), opts.opt_bands, opts.opt_rows, st->num_perm)));
}

/*
 * minhash_clusters' keep column, checked as on one server (pairs_setup.cpp):
 * SELECT on it (42501), then a type with a btree order (42883); it is read
 * as it is stored, so no code of any role runs to read it. Its values travel
 * through step C's scratch table in the base type (with the typmod) of the
 * column's type and in the column's collation: copying a domain's value
 * there checks none of its constraints, which are code of some role.
 */
static void
plan_keep(CitusPairsPlan *plan, Relation heap, const char *name)
{
	AttrNumber	attno = pairs_column_attnum(heap, name, "keep column");
	Form_pg_attribute att;
	int32		typmod;
	const char *type;

	if (attno < 0)
		unsupported(plan, "system columns for keep", "Keep by a column of the table.");
	att = TupleDescAttr(RelationGetDescr(heap), attno - 1);
	if (pg_class_aclcheck(plan->relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck(plan->relid, attno, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(heap->rd_rel->relkind),
					   RelationGetRelationName(heap));
	pairs_check_keep_order(name, att->atttypid);
	typmod = att->atttypmod;
	plan->keep_typid = getBaseTypeAndTypmod(att->atttypid, &typmod);
	plan->keep_collation = att->attcollation;
	plan->keep = quote_identifier(name);
	type = qualified_type(plan->keep_typid, typmod);
	plan->keep_type = OidIsValid(plan->keep_collation) ?
		psprintf("%s COLLATE %s", type, generate_collation_name(plan->keep_collation)) : type;
}

/*
 * exact => true with text_column, checked as on one server (pairs_setup.cpp):
 * a string-type column, SELECT on it, its conversion to text free of code
 * of other roles. The conversion runs in the statements, as the caller: one
 * that calls the owner's code (which one server runs as the owner) is
 * refused. Shingled with unit and k as given (an index on a column has no
 * expression to take them from, nor a configuration or ignore option).
 */
static void
plan_exact(CitusPairsPlan *plan, const PairsArgs *args, Relation heap)
{
	Var		   *var;
	Node	   *textexpr;
	const char *unit = args->unit != NULL ? text_to_cstring(args->unit) : "word";

	if (args->text_column == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("exact verification needs the text of the rows"),
				 errdetail("Index \"%s\" is not an expression index on minhash(text, ...).",
						   get_rel_name(args->indexoid)),
				 errhint("Pass text_column => 'name of the text column', and unit and k as the signatures were computed with.")));
	var = pairs_text_column(args, heap);
	if (var->varattno < 0)
		unsupported(plan, "system columns as text", "Use a column of the table as the text.");
	if (pg_class_aclcheck(plan->relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck(plan->relid, var->varattno, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, get_relkind_objtype(heap->rd_rel->relkind),
					   RelationGetRelationName(heap));
	textexpr = coerce_to_target_type(NULL, (Node *) var, var->vartype, TEXTOID, -1,
									 COERCION_ASSIGNMENT, COERCE_IMPLICIT_CAST, -1);
	if (textexpr == NULL)
		elog(ERROR, "could not convert the text to shingle to type text");
	if (pairs_text_as_owner(args, heap, textexpr))
		unsupported(plan, "text columns converted to text by the table owner's code",
					"Store the text in a column of type text.");
	plan->exact = true;
	plan->text = quote_identifier(args->text_column);
	plan->shingles = psprintf("%d, %s::pg_catalog.text", args->k < 0 ? 0 : args->k, quote_literal_cstr(unit));
	plan->shingle_limit = (int64) pairs_shingle_limit();
}

/*
 * Is the index's table a Citus table, and can its pairs be computed here?
 * Fills *plan, or raises the error that says what is not supported.
 */
static bool
plan_pairs(const PairsArgs *args, const char *funcname, CitusPairsPlan *plan)
{
	Oid			relid = IndexGetRelation(args->indexoid, true);
	char		method;
	Relation	heap;
	Relation	index;
	AttrNumber	distattno;
	AttrNumber	keyattno;
	Node	   *keyexpr;
	Oid			nsp;
	MhCitusIndexStats st;
	LshIndexParams params;
	Form_pg_attribute dist;
	TypeCacheEntry *tce;

	if (!OidIsValid(relid) || (method = mh_citus_table_method(relid)) == 0)
		return false;
	memset(plan, 0, sizeof(*plan));
	plan->funcname = funcname;
	plan->relid = relid;
	if (get_rel_relkind(relid) != RELKIND_RELATION)
		unsupported(plan, "partitioned tables",
					"Call it on the index of each partition (pairs across partitions are not found), or distribute an unpartitioned table.");
	if (method != 'h')
		unsupported(plan, method == 'n' ? "reference or local tables" : "range- or append-distributed tables",
					"Distribute the table by hash: SELECT create_distributed_table(table, column).");

	heap = table_open(relid, AccessShareLock);
	index = index_open(args->indexoid, AccessShareLock);
	pairs_check_index(index);
	if (!args->exact && (args->text_column != NULL || args->unit != NULL || args->k >= 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("text_column, unit and k are used only with exact => true")));
	if (index->rd_index->indnatts != 1 || index->rd_index->indkey.values[0] == 0 ||
		!heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL))
		unsupported(plan, "expression or partial indexes",
					"Store the signature in a column (ALTER TABLE ... ADD COLUMN sig minhash GENERATED ALWAYS AS (minhash(body)) STORED) and index that column.");
	if (check_enable_rls(relid, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support tables with row-level security", funcname),
				 errdetail("Row-level security is enabled for table \"%s\".",
						   RelationGetRelationName(heap))));

	nsp = RelationGetNamespace(heap);
	plan->table = quote_qualified_identifier(get_namespace_name(nsp), RelationGetRelationName(heap));
	plan->sig = quote_identifier(get_attname(relid, index->rd_index->indkey.values[0], false));
	distattno = mh_citus_distribution_column(relid);
	if (distattno <= 0)
		elog(ERROR, "could not find the distribution column of \"%s\"", RelationGetRelationName(heap));
	dist = TupleDescAttr(RelationGetDescr(heap), distattno - 1);
	plan->dist = quote_identifier(NameStr(dist->attname));
	plan->dist_type = OidIsValid(dist->attcollation) ?
		psprintf("%s COLLATE %s", qualified_type(dist->atttypid, dist->atttypmod),
				 generate_collation_name(dist->attcollation)) :
		qualified_type(dist->atttypid, dist->atttypmod);
	tce = lookup_type_cache(dist->atttypid, TYPECACHE_EQ_OPR | TYPECACHE_LT_OPR);
	if (!OidIsValid(tce->eq_opr) || !OidIsValid(tce->lt_opr))
		unsupported(plan, "distribution columns without a btree order",
					"Distribute the table by a column of a type with a btree operator class.");
	plan->dist_eq = qualified_operator(tce->eq_opr);

	/* the key, coerced as on one server */
	keyattno = pairs_column_attnum(heap, args->key_column, "key column");
	if (keyattno < 0)
		unsupported(plan, "system columns as keys", "Use a column of the table as the key.");
	keyexpr = pairs_key_coercion(args, heap, keyattno);
	plan->key_collation = exprCollation(keyexpr);
	plan->key = quote_identifier(args->key_column);
	plan->key_typid = args->key_type;
	plan->key_type = qualified_type(args->key_type, -1);
	/* the scratch table's keys compare (LEAST, GREATEST) in the key's collation */
	plan->key_column = OidIsValid(plan->key_collation) ?
		psprintf("%s COLLATE %s", plan->key_type, generate_collation_name(plan->key_collation)) :
		plan->key_type;
	tce = lookup_type_cache(args->key_type, TYPECACHE_LT_OPR);
	plan->key_ordered = OidIsValid(tce->lt_opr);
	if (args->keep_column != NULL)
		plan_keep(plan, heap, args->keep_column);
	if (args->exact)
		plan_exact(plan, args, heap);
	plan->ext = quote_identifier(get_namespace_name(args->ext_namespace));
	plan->threshold = args->threshold;

	/* the scratch tables go beside the table: the caller must be able to create there */
	if (mh_namespace_aclcheck(nsp, GetUserId(), ACL_CREATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s on Citus table \"%s\" needs CREATE on schema \"%s\"", funcname,
						RelationGetRelationName(heap), get_namespace_name(nsp)),
				 errdetail("It computes the pairs in scratch tables distributed over the workers, created in the table's schema and dropped before it returns.")));
	plan->scratch_nsp = nsp;

	/*
	 * The shards' index parameters, and the probe depth at the threshold.
	 * The owner reads them off the shards' indexes (minhash_lsh_stats, which
	 * also checks that they agree); a caller with SELECT only, as one
	 * server's pairs need, gets them as the shards' indexes chose them (below).
	 */
	if (mh_class_ownercheck(relid, GetUserId()))
		mh_citus_index_stats(relid, args->indexoid, args->ext_namespace, &st);
	else
		params_as_reader(plan, index, &st);
	plan->nshards = st.nshards;
	plan->bands = st.bands;
	plan->rows = st.rows;
	if (st.num_perm > 0)
	{
		memset(&params, 0, sizeof(params));
		params.num_perm = st.num_perm;
		params.bands = st.bands;
		params.rows = st.rows;
		params.version = LSH_VERSION;
		plan->depth = lsh_probe_depth(&params, plan->threshold);
	}

	index_close(index, NoLock);
	table_close(heap, NoLock);
	return true;
}

/* runs a statement; returns the rows it processed */
static uint64
spi_exec(const char *sql, int expected)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expected)
		elog(ERROR, "%s failed (SPI result %d): %s", expected == SPI_OK_SELECT ? "query" : "statement",
			 rc, sql);
	return SPI_processed;
}

/*
 * A cursor over a query that reads the scratch tables, opened read-write.
 * SPI's read-only mode runs a cursor under the snapshot that is active when
 * it opens -- here the calling statement's, taken before steps A-C wrote the
 * scratch rows. Citus runs the tasks of the shards this node holds (the
 * coordinator with shouldhaveshards, or a node with metadata) in this
 * backend under that active snapshot, and those tasks would read none of
 * the scratch rows (tasks on other nodes run in the transaction's
 * connections and see them): a table with shards here would lose those
 * shards' pairs, silently. Read-write mode starts a new command and takes a
 * new snapshot, as each of steps A-C does, so every task sees what they wrote.
 */
static Portal
open_scratch_cursor(const char *sql)
{
	SPIPlanPtr	prepared = SPI_prepare(sql, 0, NULL);

	if (prepared == NULL)
		elog(ERROR, "SPI_prepare failed (%s): %s", SPI_result_code_string(SPI_result), sql);
	return SPI_cursor_open(NULL, prepared, NULL, NULL, false);
}

/*
 * The final query must see every row step C wrote: the scratch table is this
 * transaction's own, so nothing else adds or removes rows. Counted through
 * the same kind of cursor as the pairs, so that anything hiding rows from
 * the final query (above: the snapshot its tasks run under) is an error
 * here, not pairs missing from the answer. Only fewer rows than written is
 * an error: more could not lose a pair.
 */
static void
check_scratch_rows(const CitusPairsPlan *plan, const char *table, uint64 written)
{
	Portal		portal = open_scratch_cursor(psprintf("SELECT pg_catalog.count(*) FROM %s", table));
	int64		seen;
	bool		isnull;

	SPI_cursor_fetch(portal, true, 1);
	if (SPI_processed != 1)
		elog(ERROR, "could not count the rows of %s", table);
	seen = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	SPI_cursor_close(portal);
	if (isnull || (uint64) seen < written)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("%s on Citus table \"%s\" read " INT64_FORMAT " of the " UINT64_FORMAT " rows it wrote to %s",
						plan->funcname, get_rel_name(plan->relid), isnull ? 0 : seen, written, table),
				 errdetail("Citus's execution of the query did not see all the rows written earlier in this transaction; its pairs would be incomplete.")));
}

/* a row by its name (worker_hash, ctid), as a hash key: no padding bytes */
typedef struct RowKey
{
	int32		hash;
	uint32		block;
	uint32		offset;
} RowKey;

static void
note_too_large(HTAB *rows, int32 h, ItemPointer tid)
{
	RowKey		key = {h, ItemPointerGetBlockNumberNoCheck(tid), ItemPointerGetOffsetNumberNoCheck(tid)};

	(void) hash_search(rows, &key, HASH_ENTER, NULL);
}

/*
 * Runs steps A-D (top of this file) and calls fn for each verified pair;
 * with_rows adds the rows' names (clusters). Nothing if no shard ever saw a
 * signature.
 */
static void
run_pairs(const CitusPairsPlan *plan, bool with_rows, CitusPairFn fn, void *arg)
{
	static uint32 counter = 0;
	const char *nsp = get_namespace_name(plan->scratch_nsp);
	char	   *base = psprintf("minhash_pairs_%d_%u", MyProcPid, ++counter);
	const char *bands_t = quote_qualified_identifier(nsp, psprintf("%s_b", base));
	const char *cand_t = quote_qualified_identifier(nsp, psprintf("%s_c", base));
	const char *entries_t = quote_qualified_identifier(nsp, psprintf("%s_e", base));
	const char *bandkeys;
	const char *final;
	int			save_nestlevel;
	Portal		portal;
	uint64		entries;
	bool		with_keep = with_rows && plan->keep != NULL;
	/* exact: the rows' names too, to count the rows too large for exact verification */
	bool		named = with_rows || plan->exact;
	int			ncols = 3 + (named ? 4 : 0) + (with_keep ? 2 : 0) + (plan->exact ? 3 : 0);
	HTAB	   *too_large = NULL;
	const char *sim;

	if (plan->bands == 0)
		return;
	bandkeys = psprintf("%s.minhash_bands(t.%s, %d, %d, %d)", plan->ext, plan->sig, plan->bands,
						plan->rows, plan->depth);

	if (plan->exact)
	{
		/* in the caller's context: SPI's goes with SPI_finish */
		HASHCTL		ctl;

		ctl.keysize = sizeof(RowKey);
		ctl.entrysize = sizeof(RowKey);
		ctl.hcxt = CurrentMemoryContext;
		too_large = hash_create("minhash citus rows too large", 64, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* every name below is qualified; nothing of the caller's search_path applies */
	save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);

	spi_exec(psprintf("CREATE UNLOGGED TABLE %s (bkey int8, band int4, d %s, tid tid)", bands_t, plan->dist_type),
			 SPI_OK_UTILITY);
	spi_exec(psprintf("SELECT create_distributed_table(%s, 'bkey', colocate_with => 'none', shard_count => %d)",
					  quote_literal_cstr(bands_t), plan->nshards), SPI_OK_SELECT);
	spi_exec(psprintf("CREATE UNLOGGED TABLE %s (d %s, tid tid, bkey int8, band int4)", cand_t, plan->dist_type),
			 SPI_OK_UTILITY);
	spi_exec(psprintf("SELECT create_distributed_table(%s, 'd', colocate_with => %s)",
					  quote_literal_cstr(cand_t), quote_literal_cstr(plan->table)), SPI_OK_SELECT);
	spi_exec(psprintf("CREATE UNLOGGED TABLE %s (bkey int8, band int4, h int4, tid tid, key %s, sig %s.minhash%s%s)",
					  entries_t, plan->key_column, plan->ext,
					  with_keep ? psprintf(", keep %s", plan->keep_type) : "",
					  plan->exact ? ", sh text[]" : ""), SPI_OK_UTILITY);
	spi_exec(psprintf("SELECT create_distributed_table(%s, 'bkey', colocate_with => %s)",
					  quote_literal_cstr(entries_t), quote_literal_cstr(bands_t)), SPI_OK_SELECT);

	/* A: every row's band keys, by key */
	spi_exec(psprintf("INSERT INTO %s (bkey, band, d, tid)"
					  " SELECT k.key, k.band::int4, t.%s, t.ctid"
					  " FROM %s t CROSS JOIN LATERAL unnest(%s) WITH ORDINALITY AS k(key, band)"
					  " WHERE t.%s IS NOT NULL",
					  bands_t, plan->dist, plan->table, bandkeys, plan->key), SPI_OK_INSERT);
	/* B: the keys shared by two rows or more, beside their rows */
	spi_exec(psprintf("INSERT INTO %s (d, tid, bkey, band)"
					  " SELECT b.d, b.tid, b.bkey, b.band FROM %s b"
					  " WHERE b.bkey = ANY (SELECT g.bkey FROM %s g GROUP BY g.bkey HAVING count(*) > 1)",
					  cand_t, bands_t, bands_t), SPI_OK_INSERT);
	/*
	 * C: those keys with their rows' signatures, keys [, keep values] [and
	 * shingles, NULL for a NULL text], by key
	 */
	entries = spi_exec(psprintf("INSERT INTO %s (bkey, band, h, tid, key, sig%s%s)"
					  " SELECT c.bkey, c.band, worker_hash(t.%s), t.ctid, CAST(t.%s AS %s), t.%s%s%s"
					  " FROM %s t JOIN %s c ON c.d %s t.%s AND c.tid = t.ctid",
					  entries_t, with_keep ? ", keep" : "", plan->exact ? ", sh" : "",
					  plan->dist, plan->key, plan->key_type,
					  plan->sig, with_keep ? psprintf(", t.%s", plan->keep) : "",
					  plan->exact ? psprintf(", %s.minhash_shingles(CAST(t.%s AS text), %s)",
											 plan->ext, plan->text, plan->shingles) : "",
					  plan->table, cand_t, plan->dist_eq, plan->dist), SPI_OK_INSERT);
	spi_exec(psprintf("DROP TABLE %s, %s", cand_t, bands_t), SPI_OK_UTILITY);

	/*
	 * D: each key's pairs verified on its shard; only pairs come back. With
	 * exact, the exact similarity of the shingles, unless a row has more
	 * than the limit: then the estimate, as on one server
	 * (pairs_emit_verified); the candidates with such a row come back too,
	 * similar or not (the coordinator counts the rows and decides).
	 */
	if (plan->exact)
	{
		const char *limit = psprintf(INT64_FORMAT, plan->shingle_limit);
		const char *big = psprintf("pg_catalog.cardinality(x.sh) > %s OR pg_catalog.cardinality(y.sh) > %s",
								   limit, limit);

		sim = psprintf("CASE WHEN %s THEN %s.jaccard(x.sig, y.sig) ELSE %s.jaccard(x.sh, y.sh) END",
					   big, plan->ext, plan->ext);
		final = psprintf("SELECT %s, %s, %s, x.h, x.tid, y.h, y.tid%s,"
						 " pg_catalog.cardinality(x.sh) > %s, pg_catalog.cardinality(y.sh) > %s,"
						 " x.sh IS NULL OR y.sh IS NULL"
						 " FROM %s x JOIN %s y ON x.bkey = y.bkey AND x.band = y.band"
						 "  AND (x.h, x.tid) < (y.h, y.tid)"
						 " WHERE %s.minhash_first_band(x.sig, y.sig, %d, %d, %d) = x.band"
						 "   AND (%s >= %s::float8 OR %s)",
						 plan->key_ordered && !with_rows ? "LEAST(x.key, y.key)" : "x.key",
						 plan->key_ordered && !with_rows ? "GREATEST(x.key, y.key)" : "y.key",
						 sim, with_keep ? ", x.keep, y.keep" : "", limit, limit,
						 entries_t, entries_t, plan->ext, plan->bands, plan->rows, plan->depth,
						 sim, psprintf("'%.17g'", plan->threshold), big);
	}
	else
		final = psprintf("SELECT %s, %s, %s.jaccard(x.sig, y.sig)%s%s"
						 " FROM %s x JOIN %s y ON x.bkey = y.bkey AND x.band = y.band"
						 "  AND (x.h, x.tid) < (y.h, y.tid)"
						 " WHERE %s.minhash_first_band(x.sig, y.sig, %d, %d, %d) = x.band"
						 "   AND %s.minhash_similar(x.sig, y.sig, %s::float8)",
						 plan->key_ordered && !with_rows ? "LEAST(x.key, y.key)" : "x.key",
						 plan->key_ordered && !with_rows ? "GREATEST(x.key, y.key)" : "y.key",
						 plan->ext, with_rows ? ", x.h, x.tid, y.h, y.tid" : "",
						 with_keep ? ", x.keep, y.keep" : "",
						 entries_t, entries_t, plan->ext, plan->bands, plan->rows, plan->depth,
						 plan->ext, psprintf("'%.17g'", plan->threshold));
	check_scratch_rows(plan, entries_t, entries);
	portal = open_scratch_cursor(final);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, 1000);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			HeapTuple	t = SPI_tuptable->vals[i];
			TupleDesc	d = SPI_tuptable->tupdesc;
			bool		isnull[12];
			Datum		v[12];
			CitusPair	pair;
			int			c = 3;

			for (int col = 0; col < ncols; col++)
				v[col] = SPI_getbinval(t, d, col + 1, &isnull[col]);
			pair.key_a = v[0];
			pair.key_b = v[1];
			pair.similarity = DatumGetFloat8(v[2]);
			if (named)
			{
				pair.hash_a = DatumGetInt32(v[c]);
				pair.tid_a = (ItemPointer) DatumGetPointer(v[c + 1]);
				pair.hash_b = DatumGetInt32(v[c + 2]);
				pair.tid_b = (ItemPointer) DatumGetPointer(v[c + 3]);
				c += 4;
			}
			pair.keep_a_isnull = pair.keep_b_isnull = true;
			if (with_keep)
			{
				pair.keep_a = v[c];
				pair.keep_a_isnull = isnull[c];
				pair.keep_b = v[c + 1];
				pair.keep_b_isnull = isnull[c + 1];
				c += 2;
			}
			if (plan->exact)
			{
				/* a NULL text is never similar; a row too large is counted once */
				if (!isnull[c] && DatumGetBool(v[c]))
					note_too_large(too_large, pair.hash_a, pair.tid_a);
				if (!isnull[c + 1] && DatumGetBool(v[c + 1]))
					note_too_large(too_large, pair.hash_b, pair.tid_b);
				if (DatumGetBool(v[c + 2]) || isnull[2] || pair.similarity < plan->threshold)
					continue;
			}
			fn(&pair, arg);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	spi_exec(psprintf("DROP TABLE %s", entries_t), SPI_OK_UTILITY);
	AtEOXact_GUC(true, save_nestlevel);
	SPI_finish();
	if (too_large != NULL)
	{
		long		n = hash_get_num_entries(too_large);

		if (n > 0)
			pairs_notice_too_large(plan->funcname, n);
		hash_destroy(too_large);
	}
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

	if (!plan_pairs(args, args->funcname, &plan))
		return false;
	InitMaterializedSRF(fcinfo, 0);
	sink.store = rsinfo->setResult;
	sink.desc = rsinfo->setDesc;
	run_pairs(&plan, false, store_pair, &sink);
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

	if (!plan_pairs(args, args->funcname, &plan))
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

	run_pairs(&plan, true, collect_pair, &s);

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
