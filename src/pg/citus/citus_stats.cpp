/*
 * minhash_lsh_stats of a Citus table's lsh index: the coordinator's index is
 * an empty shell, so the figures are those of the shards' indexes, read on
 * the workers (one command per worker for all its shards) and added up:
 * parameters must agree, the height is the tallest shard's, pages, rows and
 * entries are sums and leaf_fill is the mean weighted by leaf pages.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "pg/lsh/lsh.h"

extern "C" {
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "access/relation.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
}

#define STATS_FIELDS 18

/*
 * One shard's minhash_lsh_stats row in its text form, "(128,1,30,4,...)",
 * into v[] (NULL fields, of an index that never saw a signature, as empty
 * strings).
 */
static void
parse_row(const char *row, const char *index, char **v)
{
	size_t		len = strlen(row);
	char	   *copy;
	char	   *p;
	int			n = 0;

	if (len < 2 || row[0] != '(' || row[len - 1] != ')')
		elog(ERROR, "unexpected minhash_lsh_stats row from the shard index %s: \"%s\"", index, row);
	copy = pnstrdup(row + 1, len - 2);
	p = copy;
	for (;;)
	{
		char	   *comma = strchr(p, ',');

		if (n == STATS_FIELDS)
			elog(ERROR, "unexpected minhash_lsh_stats row from the shard index %s: \"%s\"", index, row);
		v[n++] = p;
		if (comma == NULL)
			break;
		*comma = '\0';
		p = comma + 1;
	}
	if (n != STATS_FIELDS)
		elog(ERROR, "unexpected minhash_lsh_stats row from the shard index %s: \"%s\"", index, row);
}

static double
parse_float(const char *s)
{
	return DatumGetFloat8(DirectFunctionCall1(float8in, CStringGetDatum(s)));
}

static void
add_shard(MhCitusIndexStats *st, char **v, const char *index, const char *table)
{
	double		leaf_pages;

	st->nshards++;
	if (v[0][0] != '\0')
	{
		int			num_perm = pg_strtoint32(v[0]);
		int64		seed = pg_strtoint64(v[1]);
		int			bands = pg_strtoint32(v[2]);
		int			rows = pg_strtoint32(v[3]);

		if (st->num_perm == 0)
		{
			st->num_perm = num_perm;
			st->seed = seed;
			st->bands = bands;
			st->rows = rows;
			st->threshold = parse_float(v[4]);
		}
		else if (num_perm != st->num_perm || seed != st->seed || bands != st->bands ||
				 rows != st->rows)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the shards of table \"%s\" do not share their lsh parameters", table),
					 errdetail("Shard index %s has k = %d, seed = %lld, %d bands of %d rows; another has k = %d, seed = %lld, %d bands of %d rows.",
							   index, num_perm, (long long) seed, bands, rows, st->num_perm,
							   (long long) st->seed, st->bands, st->rows),
					 errhint("Store signatures of one k and seed in the table.")));
	}
	st->height = Max(st->height, pg_strtoint32(v[5]));
	for (int i = 0; i < 9; i++)
		st->counts[i] += pg_strtoint64(v[6 + i]);
	leaf_pages = (double) pg_strtoint64(v[8]);
	st->leaf_fill += leaf_pages * parse_float(v[15]);
	st->pending[0] += pg_strtoint64(v[16]);
	st->pending[1] += pg_strtoint64(v[17]);
}

/*
 * The shards' statistics are read over new connections (master_run_on_worker),
 * outside this transaction: if it holds an ACCESS EXCLUSIVE lock on the table
 * or its index (TRUNCATE, ALTER TABLE, REINDEX, LOCK TABLE, which Citus takes
 * on the shards too), they would wait for it forever, or until
 * statement_timeout. Refuse instead of waiting on ourselves.
 */
static void
refuse_if_locked_here(Oid relid, const char *name)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	bool		locked = CheckRelationLockedByMe(rel, AccessExclusiveLock, false);

	relation_close(rel, NoLock);
	if (locked)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot read the lsh indexes of the shards of \"%s\" in a transaction that holds an ACCESS EXCLUSIVE lock on it",
						name),
				 errdetail("The shards' statistics are read over new connections, which would wait for this transaction's lock."),
				 errhint("Run it after the transaction that truncated, altered or locked the table ends.")));
}

/*
 * The shards' index names grouped by the node holding them: the nodes, their
 * ports and, for each, its shards' index names as a list of SQL literals.
 * Returns the number of nodes.
 */
static int
group_by_node(List *shards, char ***nodes_out, int32 **ports_out, StringInfoData **lists_out)
{
	int			nnodes = 0;
	char	  **nodes = (char **) palloc(sizeof(char *) * Max(list_length(shards), 1));
	int32	   *ports = (int32 *) palloc(sizeof(int32) * Max(list_length(shards), 1));
	StringInfoData *lists = (StringInfoData *) palloc(sizeof(StringInfoData) * Max(list_length(shards), 1));
	ListCell   *lc;

	foreach(lc, shards)
	{
		MhCitusShard *s = (MhCitusShard *) lfirst(lc);
		int			i;

		for (i = 0; i < nnodes; i++)
			if (ports[i] == s->nodeport && strcmp(nodes[i], s->nodename) == 0)
				break;
		if (i == nnodes)
		{
			nodes[i] = s->nodename;
			ports[i] = s->nodeport;
			initStringInfo(&lists[i]);
			nnodes++;
		}
		appendStringInfo(&lists[i], "%s%s", lists[i].len > 0 ? "," : "",
						 quote_literal_cstr(s->index_name));
	}
	*nodes_out = nodes;
	*ports_out = ports;
	*lists_out = lists;
	return nnodes;
}

void
mh_citus_index_stats(Oid relid, Oid indexoid, Oid ext_namespace, MhCitusIndexStats *st)
{
	List	   *shards = mh_citus_shards(relid, indexoid);
	const char *table = get_rel_name(relid);
	const char *stats_fn = quote_qualified_identifier(get_namespace_name(ext_namespace),
													  "minhash_lsh_stats");
	int			nnodes;
	char	  **nodes;
	int32	   *ports;
	StringInfoData *lists;
	char	  **commands;
	char	  **results;

	memset(st, 0, sizeof(*st));
	refuse_if_locked_here(relid, table);
	refuse_if_locked_here(indexoid, get_rel_name(indexoid));
	if (shards == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has no shards", table)));

	nnodes = group_by_node(shards, &nodes, &ports, &lists);
	commands = (char **) palloc(sizeof(char *) * nnodes);
	for (int i = 0; i < nnodes; i++)
		commands[i] = psprintf("SELECT pg_catalog.string_agg(s::pg_catalog.text, ';')"
							   " FROM pg_catalog.unnest(ARRAY[%s]::pg_catalog.regclass[]) i,"
							   " %s(i) s",
							   lists[i].data, stats_fn);
	results = mh_citus_run_on_nodes(nnodes, nodes, ports, commands);

	for (int i = 0; i < nnodes; i++)
	{
		char	   *p = results[i];

		for (;;)
		{
			char	   *semi = strchr(p, ';');
			char	   *v[STATS_FIELDS];

			if (semi != NULL)
				*semi = '\0';
			parse_row(p, nodes[i], v);
			add_shard(st, v, nodes[i], table);
			if (semi == NULL)
				break;
			p = semi + 1;
		}
	}
	if (st->nshards != list_length(shards))
		elog(ERROR, "read the lsh statistics of %d of the %d shards of \"%s\"",
			 st->nshards, list_length(shards), table);
	st->leaf_fill = st->counts[2] > 0 ? st->leaf_fill / (double) st->counts[2] : 0.0;
}

bool
mh_citus_lsh_stats(FunctionCallInfo fcinfo, Datum *result)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Oid			relid = IndexGetRelation(indexoid, true);
	MhCitusIndexStats st;
	Relation	heap;
	Relation	index;
	TupleDesc	tupdesc;
	Datum		values[STATS_FIELDS];
	bool		nulls[STATS_FIELDS] = {false};

	if (!OidIsValid(relid) || mh_citus_table_method(relid) == 0)
		return false;
	if (get_rel_relkind(relid) != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("minhash_lsh_stats does not support partitioned Citus tables"),
				 errhint("Call it on each partition's index.")));
	/* the same checks as on one server: an lsh index, a table the caller owns */
	index = lsh_open_owned(indexoid, AccessShareLock, &heap, "minhash_lsh_stats");
	mh_citus_index_stats(relid, indexoid, get_func_namespace(fcinfo->flinfo->fn_oid), &st);
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = Int32GetDatum(st.num_perm);
	values[1] = Int64GetDatum(st.seed);
	values[2] = Int32GetDatum(st.bands);
	values[3] = Int32GetDatum(st.rows);
	values[4] = Float8GetDatum(st.threshold);
	values[5] = Int32GetDatum(st.height);
	for (int i = 0; i < 9; i++)
		values[6 + i] = Int64GetDatum(st.counts[i]);
	values[15] = Float8GetDatum(st.leaf_fill);
	values[16] = Int64GetDatum(st.pending[0]);
	values[17] = Int64GetDatum(st.pending[1]);
	if (st.num_perm == 0)
		nulls[0] = nulls[1] = nulls[2] = nulls[3] = nulls[4] = true;
	/* 1.0's declaration of the function has 16 columns (heap_form_tuple takes natts) */
	*result = HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
	return true;
}

/*
 * minhash_lsh_recall of a Citus table's index: the shell index never holds a
 * signature, so its answer would be NULL. The shards' indexes share their
 * parameters, so the recall of any shard's index that holds a signature is
 * the table's: each worker answers with its first such shard, by
 * minhash_lsh_recall itself (SELECT on the table suffices, as on one
 * server; the shards inherit the table's grants). Returns the rows
 * "(similarity,recall,depth)" joined by ';', or NULL if no shard holds a
 * signature yet.
 */
char *
mh_citus_shard_recall(Oid relid, Oid indexoid, Oid ext_namespace, double threshold)
{
	List	   *shards = mh_citus_shards(relid, indexoid);
	const char *recall_fn = quote_qualified_identifier(get_namespace_name(ext_namespace),
													   "minhash_lsh_recall");
	int			nnodes;
	char	  **nodes;
	int32	   *ports;
	StringInfoData *lists;
	char	  **commands;
	char	  **results;

	refuse_if_locked_here(relid, get_rel_name(relid));
	refuse_if_locked_here(indexoid, get_rel_name(indexoid));
	if (shards == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has no shards", get_rel_name(relid))));
	nnodes = group_by_node(shards, &nodes, &ports, &lists);
	commands = (char **) palloc(sizeof(char *) * nnodes);
	for (int i = 0; i < nnodes; i++)
		commands[i] = psprintf("SELECT (SELECT pg_catalog.string_agg(r::pg_catalog.text, ';' ORDER BY r.similarity)"
							   "  FROM %s(i.idx, '%.17g') r)"
							   " FROM pg_catalog.unnest(ARRAY[%s]::pg_catalog.regclass[]) WITH ORDINALITY i(idx, n)"
							   " WHERE EXISTS (SELECT FROM %s(i.idx, '%.17g') r WHERE r.depth IS NOT NULL)"
							   " ORDER BY i.n LIMIT 1",
							   recall_fn, threshold, lists[i].data, recall_fn, threshold);
	results = mh_citus_run_on_nodes(nnodes, nodes, ports, commands);
	for (int i = 0; i < nnodes; i++)
		if (results[i][0] != '\0')
			return results[i];
	return NULL;
}
