/*
 * Citus distributed tables (docs/scale-out.md, "Citus").
 *
 * Citus keeps a distributed table as a shell on the coordinator -- no rows,
 * and an empty lsh index -- and its rows in shards on the workers, each shard
 * with its own lsh index. It ships each query to the shards as SQL text.
 * What a single server answers from its own state must then either travel in
 * that text or be gathered from the shards:
 *
 *  citus_tables.cpp     is a relation a Citus table (pg_dist_partition), its
 *                       shards and where they live
 *  citus_planner.cpp    a planner hook that rewrites queries on Citus tables
 *                       before Citus deparses them:
 *  citus_threshold.cpp  `%` reads minhash.similarity_threshold, a setting of
 *                       the coordinator's session the workers never see: the
 *                       session's threshold is written into the query
 *                       (minhash_similar(a, b, t)), and cached plans are
 *                       invalidated when the setting changes
 *  citus_aggregates.cpp minhash_agg, polymorphic, cannot be computed on the
 *                       workers by Citus: written as minhash_merge_agg of
 *                       one-element signatures, which can
 *  citus_stats.cpp      minhash_lsh_stats summed over the shards' indexes,
 *                       minhash_lsh_recall read off them
 *  citus_pairs*.cpp     minhash_similar_pairs / minhash_clusters computed by
 *                       Citus's own distributed execution: band keys
 *                       repartitioned by key, candidates verified on the workers
 *                       (the call checked and planned in citus_pairs_plan.cpp,
 *                       the statements run in citus_pairs_run.cpp)
 *
 * Nothing here links to Citus: it reads Citus's catalogs and calls its SQL
 * functions, so the extension loads and works where Citus is absent.
 */
#ifndef MINHASH_PG_CITUS_H
#define MINHASH_PG_CITUS_H

#include "pg/pg_prelude.h"

extern "C" {
#include "access/attnum.h"
#include "nodes/pg_list.h"
#include "nodes/plannodes.h"
#include "nodes/primnodes.h"
}

/* citus_tables.cpp */

/*
 * The distribution method of a Citus table ('h' hash, 'n' reference or
 * Citus-local, 'a'/'r' append/range), or 0 for any other relation (also when
 * Citus is not installed in this database).
 */
char		mh_citus_table_method(Oid relid);

/* The distribution column of a hash- or range-distributed Citus table, else InvalidAttrNumber. */
AttrNumber	mh_citus_distribution_column(Oid relid);

/*
 * An error, with a hint to call it on the shards, if indexoid is the shell
 * index of a Citus table (for the functions that read one index's pages:
 * minhash_lsh_check, minhash_lsh_clean_pending_list).
 */
void		mh_citus_refuse_shell_index(Oid indexoid, const char *funcname);

/* One shard of a distributed table: where one placement of it lives. */
typedef struct MhCitusShard
{
	int64		shardid;
	char	   *nodename;
	int32		nodeport;
	char	   *index_name;		/* qualified, quoted name of the index's shard */
} MhCitusShard;

/* The shards of table relid (one active placement each) with the shard names of index indexoid. */
List	   *mh_citus_shards(Oid relid, Oid indexoid);

/*
 * Runs commands[i] on node i (the Citus function master_run_on_worker, in
 * parallel) and returns each one's single result as text; a failure is an
 * ERROR naming the node and carrying its message.
 */
char	  **mh_citus_run_on_nodes(int n, char **nodes, int32 *ports, char **commands);

/* citus_planner.cpp: the planner hook for queries on Citus tables */
void		mh_citus_planner_init(void);
bool		mh_citus_hook_installed(void);
bool		mh_citus_installed(void);	/* CREATE EXTENSION citus in this database */
/* funcid is C function symbol of this library (with nargs arguments, unless < 0) */
bool		mh_is_own_c_function(Oid funcid, const char *symbol, int nargs);

/* citus_threshold.cpp: `a % b` written as minhash_similar(a, b, <the setting>) */
typedef struct MhThresholdRewrite
{
	bool		have_threshold;
	double		threshold;
	Oid			function;		/* minhash_similar(minhash, minhash), if rewritten */
	Oid			function_t;		/* minhash_similar(minhash, minhash, float8) */
} MhThresholdRewrite;

bool		mh_citus_is_threshold_op(Node *node);
Node	   *mh_citus_threshold_call(Node *node, MhThresholdRewrite *rw);
void		mh_citus_threshold_planned(PlannedStmt *stmt, const MhThresholdRewrite *rw);
void		mh_citus_threshold_assigned(double oldval, double newval);

/* citus_aggregates.cpp: minhash_agg written as minhash_merge_agg of one-element signatures */
bool		mh_citus_is_minhash_agg(Aggref *aggref);
Node	   *mh_citus_merge_form(Aggref *aggref);

/* citus_stats.cpp: an lsh index's shards (num_perm 0: none has a signature yet) */
typedef struct MhCitusIndexStats
{
	int			num_perm;
	int64		seed;
	int			bands;
	int			rows;
	double		threshold;
	int			height;			/* the highest shard's */
	int64		counts[9];		/* pages .. entries, summed */
	double		leaf_fill;		/* weighted by leaf pages */
	int64		pending[2];		/* pending pages and rows, summed */
	int			nshards;
} MhCitusIndexStats;

void		mh_citus_index_stats(Oid relid, Oid indexoid, Oid ext_namespace,
								 MhCitusIndexStats *stats);

/*
 * minhash_lsh_recall of the shards' indexes at this threshold, as the text of
 * its rows joined by ';' ("(similarity,recall,depth)"), or NULL if no shard's
 * index holds a signature yet.
 */
char	   *mh_citus_shard_recall(Oid relid, Oid indexoid, Oid ext_namespace, double threshold);

/*
 * Dispatch of the functions that read an lsh index directly: true if the
 * index's table is a Citus table and the answer was computed (or an error
 * raised) here, false to go on with the local index.
 */
bool		mh_citus_lsh_stats(FunctionCallInfo fcinfo, Datum *result);

struct PairsArgs;
bool		mh_citus_similar_pairs(FunctionCallInfo fcinfo, const struct PairsArgs *args);
bool		mh_citus_clusters(FunctionCallInfo fcinfo, const struct PairsArgs *args,
							  bool representative, bool keep_desc);

#endif
