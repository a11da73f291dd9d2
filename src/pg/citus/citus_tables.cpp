/*
 * Which relations are Citus tables, where their shards live, and running a
 * command on the nodes that hold them -- all through Citus's catalogs and SQL
 * functions (pg_dist_partition, pg_dist_shard, pg_dist_placement,
 * pg_dist_node, shard_name, master_run_on_worker), never its C symbols.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "nodes/primnodes.h"
#include "utils/rel.h"
}

/*
 * The pg_dist_partition row of relid: calls fn(tuple, desc, arg) while the
 * row is at hand and returns true, or false if relid is no Citus table.
 */
static bool
with_partition_row(Oid relid, void (*fn) (HeapTuple, TupleDesc, void *), void *arg)
{
	/* Citus's metadata table, in pg_catalog from CREATE EXTENSION citus on */
	Oid			catalog = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	Oid			index;
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	bool		found;

	if (!OidIsValid(catalog))
		return false;
	index = get_relname_relid("pg_dist_partition_logical_relid_index", PG_CATALOG_NAMESPACE);
	rel = table_open(catalog, AccessShareLock);
	ScanKeyInit(&key, 1 /* logicalrelid */ , BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, index, OidIsValid(index), NULL, 1, &key);
	tuple = systable_getnext(scan);
	found = HeapTupleIsValid(tuple);
	if (found)
		fn(tuple, RelationGetDescr(rel), arg);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/* the column named name of a pg_dist_partition row, or isnull */
static Datum
partition_column(HeapTuple tuple, TupleDesc desc, const char *name, bool *isnull)
{
	for (int i = 0; i < desc->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), name) == 0)
			return heap_getattr(tuple, i + 1, desc, isnull);
	*isnull = true;
	return (Datum) 0;
}

static void
read_method(HeapTuple tuple, TupleDesc desc, void *arg)
{
	bool		isnull;
	Datum		d = partition_column(tuple, desc, "partmethod", &isnull);

	/* '?': a Citus table of a layout we do not know */
	*(char *) arg = isnull ? '?' : DatumGetChar(d);
}

char
mh_citus_table_method(Oid relid)
{
	char		method = 0;

	if (!with_partition_row(relid, read_method, &method))
		return 0;
	return method;
}

static void
read_partkey(HeapTuple tuple, TupleDesc desc, void *arg)
{
	bool		isnull;
	Datum		d = partition_column(tuple, desc, "partkey", &isnull);
	Node	   *key;

	*(AttrNumber *) arg = InvalidAttrNumber;
	if (isnull)
		return;
	/* the distribution column as nodeToString wrote its Var */
	key = (Node *) stringToNode(TextDatumGetCString(d));
	if (key != NULL && IsA(key, Var))
		*(AttrNumber *) arg = ((Var *) key)->varattno;
}

AttrNumber
mh_citus_distribution_column(Oid relid)
{
	AttrNumber	attnum = InvalidAttrNumber;

	with_partition_row(relid, read_partkey, &attnum);
	return attnum;
}

void
mh_citus_refuse_shell_index(Oid indexoid, const char *funcname)
{
	Oid			relid = IndexGetRelation(indexoid, true);

	if (OidIsValid(relid) && mh_citus_table_method(relid) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support Citus tables", funcname),
				 errdetail("The index \"%s\" of Citus table \"%s\" on this node is an empty shell; its rows are indexed in the shards' indexes.",
						   get_rel_name(indexoid), get_rel_name(relid)),
				 errhint("Call it on the workers, on each shard's index: the index of shard N is named %s_N.",
						 get_rel_name(indexoid))));
}

List *
mh_citus_shards(Oid relid, Oid indexoid)
{
	/* one active placement per shard, on an active primary node */
	static const char *sql =
		"SELECT s.shardid, n.nodename, n.nodeport, pg_catalog.shard_name($2, s.shardid)"
		"  FROM pg_catalog.pg_dist_shard s"
		"  CROSS JOIN LATERAL ("
		"    SELECT pl.groupid FROM pg_catalog.pg_dist_placement pl"
		"    JOIN pg_catalog.pg_dist_node n ON n.groupid OPERATOR(pg_catalog.=) pl.groupid"
		"     AND n.isactive AND n.noderole OPERATOR(pg_catalog.=) 'primary'"
		"    WHERE pl.shardid OPERATOR(pg_catalog.=) s.shardid"
		"      AND pl.shardstate OPERATOR(pg_catalog.=) 1"
		"    ORDER BY pl.groupid LIMIT 1) p"
		"  JOIN pg_catalog.pg_dist_node n ON n.groupid OPERATOR(pg_catalog.=) p.groupid"
		"   AND n.noderole OPERATOR(pg_catalog.=) 'primary'"
		" WHERE s.logicalrelid OPERATOR(pg_catalog.=) $1"
		" ORDER BY s.shardid";
	Oid			argtypes[2] = {REGCLASSOID, REGCLASSOID};
	Datum		args[2] = {ObjectIdGetDatum(relid), ObjectIdGetDatum(indexoid)};
	MemoryContext outer = CurrentMemoryContext;
	List	   *shards = NIL;
	uint64		nshards;
	/*
	 * shard_name leaves out the schema "public"; the name is read as
	 * regclass on the worker, under the connection's search_path, whose
	 * "$user" schema (a schema named after the caller, which any role with
	 * CREATE on the database may have created) comes first
	 */
	char	   *nsp = get_namespace_name(get_rel_namespace(indexoid));
	bool		public_prefix = nsp != NULL && strcmp(nsp, "public") == 0;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(sql, 2, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the shards of \"%s\"", get_rel_name(relid));
	nshards = SPI_processed;
	for (uint64 i = 0; i < nshards; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		bool		isnull;
		MemoryContext old = MemoryContextSwitchTo(outer);
		MhCitusShard *s = (MhCitusShard *) palloc0(sizeof(MhCitusShard));

		s->shardid = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
		s->nodename = SPI_getvalue(t, d, 2);
		s->nodeport = DatumGetInt32(SPI_getbinval(t, d, 3, &isnull));
		s->index_name = public_prefix ? psprintf("public.%s", SPI_getvalue(t, d, 4)) : SPI_getvalue(t, d, 4);
		shards = lappend(shards, s);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	return shards;
}

char **
mh_citus_run_on_nodes(int n, char **nodes, int32 *ports, char **commands)
{
	static const char *sql =
		"SELECT node_name, node_port, success, result"
		"  FROM pg_catalog.master_run_on_worker($1, $2, $3, true)";
	Oid			argtypes[3] = {TEXTARRAYOID, INT4ARRAYOID, TEXTARRAYOID};
	Datum	   *nodev = (Datum *) palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *portv = (Datum *) palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *cmdv = (Datum *) palloc(sizeof(Datum) * Max(n, 1));
	Datum		args[3];
	char	  **results = (char **) palloc0(sizeof(char *) * Max(n, 1));
	MemoryContext outer = CurrentMemoryContext;

	for (int i = 0; i < n; i++)
	{
		nodev[i] = CStringGetTextDatum(nodes[i]);
		portv[i] = Int32GetDatum(ports[i]);
		cmdv[i] = CStringGetTextDatum(commands[i]);
	}
	args[0] = PointerGetDatum(construct_array(nodev, n, TEXTOID, -1, false, TYPALIGN_INT));
	args[1] = PointerGetDatum(construct_array(portv, n, INT4OID, sizeof(int32), true, TYPALIGN_INT));
	args[2] = PointerGetDatum(construct_array(cmdv, n, TEXTOID, -1, false, TYPALIGN_INT));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(sql, 3, argtypes, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "master_run_on_worker failed");
	if (SPI_processed != (uint64) n)
		elog(ERROR, "master_run_on_worker returned %llu results for %d commands",
			 (unsigned long long) SPI_processed, n);
	/* master_run_on_worker returns the results in the order of its arrays */
	for (int i = 0; i < n; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		bool		isnull;
		bool		ok = DatumGetBool(SPI_getbinval(t, d, 3, &isnull));
		char	   *result = SPI_getvalue(t, d, 4);

		if (isnull || !ok)
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("command on worker %s:%d failed: %s", nodes[i], ports[i],
							result ? result : "(no message)"),
					 errdetail("The command was: %s", commands[i])));
		results[i] = MemoryContextStrdup(outer, result ? result : "");
	}
	SPI_finish();
	return results;
}
