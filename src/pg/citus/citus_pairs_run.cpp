/*
 * minhash_similar_pairs and minhash_clusters on a Citus table: the
 * distributed statements that find the pairs (citus_pairs.h).
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
 * unlogged, live in the indexed table's schema under random names
 * (scratch_base), belong to the caller and are dropped before the function
 * returns (an error rolls them back with the transaction): the functions
 * write, and refuse a read-only transaction (citus_pairs_plan). In
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

#include "pg/citus/citus_pairs.h"
#include "pg/compat.h"

extern "C" {
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"
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
 * The scratch tables' names: minhash_pairs_<16 random hex digits>_{b,c,e}
 * in the schema nsp. Unpredictable, so that no role with CREATE there can
 * take them beforehand and make the calls of others fail; names in use
 * (a relation, or a type, which each table also creates) are passed over.
 */
static char *
scratch_base(const CitusPairsPlan *plan, const char *nsp)
{
	static const char *const suffixes[] = {"_b", "_c", "_e"};

	for (int attempt = 0; attempt < 4; attempt++)
	{
		uint32		r[2];
		char	   *base;
		bool		taken = false;

		if (!pg_strong_random(r, sizeof(r)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate a random name for the scratch tables of %s", plan->funcname)));
		base = psprintf("minhash_pairs_%08x%08x", r[0], r[1]);
		for (int i = 0; i < 3 && !taken; i++)
		{
			char	   *name = psprintf("%s%s", base, suffixes[i]);

			taken = OidIsValid(get_relname_relid(name, plan->scratch_nsp)) ||
				OidIsValid(GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum(name),
										   ObjectIdGetDatum(plan->scratch_nsp)));
		}
		if (!taken)
			return base;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DUPLICATE_TABLE),
			 errmsg("%s on Citus table \"%s\" could not name its scratch tables in schema \"%s\"",
					plan->funcname, get_rel_name(plan->relid), nsp),
			 errdetail("Each random name tried was taken by a relation or type named minhash_pairs_..._b, _c or _e.")));
	return NULL;				/* not reached */
}

/*
 * Step D's FROM and WHERE: the candidates, two rows of one key whose first
 * agreeing band is the key's; more (a LATERAL item) joined after the pair.
 */
static const char *
candidates(const CitusPairsPlan *plan, const char *entries_t, const char *more)
{
	return psprintf(" FROM %s x JOIN %s y ON x.bkey = y.bkey AND x.band = y.band"
					"  AND (x.h, x.tid) < (y.h, y.tid)%s"
					" WHERE %s.minhash_first_band(x.sig, y.sig, %d, %d, %d) = x.band",
					entries_t, entries_t, more, plan->ext, plan->bands, plan->rows, plan->depth);
}

/*
 * Runs steps A-D (top of this file) and calls fn for each verified pair;
 * with_rows adds the rows' names (clusters). Nothing if no shard ever saw a
 * signature.
 */
void
citus_pairs_run(const CitusPairsPlan *plan, bool with_rows, CitusPairFn fn, void *arg)
{
	const char *nsp = get_namespace_name(plan->scratch_nsp);
	char	   *base = scratch_base(plan, nsp);
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
	const char *keys;

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
	keys = plan->key_ordered && !with_rows ? "LEAST(x.key, y.key), GREATEST(x.key, y.key)" : "x.key, y.key";
	if (plan->exact)
	{
		const char *limit = psprintf(INT64_FORMAT, plan->shingle_limit);
		const char *big = psprintf("pg_catalog.cardinality(x.sh) > %s OR pg_catalog.cardinality(y.sh) > %s",
								   limit, limit);

		/*
		 * The similarity, computed once per candidate: written in both the
		 * select list and the WHERE clause, PostgreSQL would compute it in
		 * both (it has no common subexpressions), the exact Jaccard of every
		 * pair twice. A LATERAL function of the joined rows runs once per
		 * candidate, above the join, and Citus pushes it down with the join.
		 * (A one-row VALUES or a subquery without FROM is pulled up, its
		 * expression copied to each use; an OFFSET 0 subquery is not pushed
		 * down to the shards.)
		 */
		sim = psprintf(" CROSS JOIN LATERAL pg_catalog.unnest(ARRAY[CASE WHEN %s THEN %s.jaccard(x.sig, y.sig)"
					   " ELSE %s.jaccard(x.sh, y.sh) END]) AS s(sim)",
					   big, plan->ext, plan->ext);
		final = psprintf("SELECT %s, s.sim, x.h, x.tid, y.h, y.tid%s,"
						 " pg_catalog.cardinality(x.sh) > %s, pg_catalog.cardinality(y.sh) > %s,"
						 " x.sh IS NULL OR y.sh IS NULL"
						 "%s AND (s.sim >= %s::float8 OR %s)",
						 keys, with_keep ? ", x.keep, y.keep" : "", limit, limit,
						 candidates(plan, entries_t, sim), psprintf("'%.17g'", plan->threshold), big);
	}
	else
		final = psprintf("SELECT %s, %s.jaccard(x.sig, y.sig)%s%s"
						 "%s AND %s.minhash_similar(x.sig, y.sig, %s::float8)",
						 keys, plan->ext, with_rows ? ", x.h, x.tid, y.h, y.tid" : "",
						 with_keep ? ", x.keep, y.keep" : "",
						 candidates(plan, entries_t, ""), plan->ext, psprintf("'%.17g'", plan->threshold));
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
