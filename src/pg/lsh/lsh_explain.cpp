/*
 * EXPLAIN ANALYZE output of lsh scans.
 *
 * PostgreSQL 15 gives an index access method no way to add lines to its plan
 * node (pgvector and GIN show their work only through the generic counters:
 * rows, buffers). So the module installs an ExplainOneQuery_hook that plans
 * and explains the query exactly as PostgreSQL does, with lsh scans
 * reporting their counters (LshScanCounters) while it runs; after the plan it
 * adds one line per lsh index scanned:
 *
 *   lsh scan "d_lsh": scans 1, bands probed 30, depth 4, candidates 12, verified 12, returned 10
 *
 * (text format; the other formats get the same line as a NOTICE, since the
 * structured document is closed by then). Outside EXPLAIN ANALYZE a scan
 * records nothing. EXPLAIN EXECUTE of a prepared statement does not pass
 * through the hook and shows no counters.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

extern "C" {
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_state.h"
#endif
#include "lib/stringinfo.h"
#include "optimizer/optimizer.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/rel.h"
}

#define LSH_EXPLAIN_MAX_INDEXES 32

typedef struct LshExplainEntry
{
	Oid			indexoid;
	NameData	name;
	LshScanCounters c;
} LshExplainEntry;

static ExplainOneQuery_hook_type prev_explain_hook = NULL;
static int	collecting = 0;		/* nesting depth of EXPLAIN ANALYZE */
static LshExplainEntry entries[LSH_EXPLAIN_MAX_INDEXES];
static int	nentries = 0;

void
lsh_counters_report(Relation index, const LshScanCounters *c, uint64 returned)
{
	LshExplainEntry *e = NULL;

	if (collecting == 0 || c->scans == 0)
		return;
	for (int i = 0; i < nentries; i++)
	{
		if (entries[i].indexoid == RelationGetRelid(index))
			e = &entries[i];
	}
	if (e == NULL)
	{
		if (nentries == LSH_EXPLAIN_MAX_INDEXES)
			return;
		e = &entries[nentries++];
		memset(e, 0, sizeof(*e));
		e->indexoid = RelationGetRelid(index);
		namestrcpy(&e->name, RelationGetRelationName(index));
		e->c.depth = c->depth;
	}
	e->c.scans += c->scans;
	e->c.bands_probed += c->bands_probed;
	e->c.depth = Min(e->c.depth, c->depth);
	e->c.candidates += c->candidates;
	e->c.verified += c->verified;
	e->c.returned += returned;
	e->c.pending_copied += c->pending_copied;
}

/*
 * Plan and explain the query as ExplainOneQuery does when no hook is set.
 * (From PostgreSQL 17 on, EXPLAIN (MEMORY)'s planner memory is not measured
 * on this path: the plan is explained without it.)
 */
static void
explain_as_core(Query *query, int cursorOptions, IntoClause *into, ExplainState *es,
				const char *queryString, ParamListInfo params, QueryEnvironment *queryEnv)
{
	PlannedStmt *plan;
	instr_time	planstart,
				planduration;
	BufferUsage bufusage_start,
				bufusage;

	if (prev_explain_hook)
	{
		prev_explain_hook(query, cursorOptions, into, es, queryString, params, queryEnv);
		return;
	}
	if (es->buffers)
		bufusage_start = pgBufferUsage;
	INSTR_TIME_SET_CURRENT(planstart);
	plan = pg_plan_query(query, queryString, cursorOptions, params);
	INSTR_TIME_SET_CURRENT(planduration);
	INSTR_TIME_SUBTRACT(planduration, planstart);
	if (es->buffers)
	{
		memset(&bufusage, 0, sizeof(BufferUsage));
		BufferUsageAccumDiff(&bufusage, &pgBufferUsage, &bufusage_start);
	}
	ExplainOnePlan(plan, into, es, queryString, params, queryEnv, &planduration,
				   es->buffers ? &bufusage : NULL
#if PG_VERSION_NUM >= 170000
				   , NULL
#endif
		);
}

static void
lsh_explain_one_query(Query *query, int cursorOptions, IntoClause *into, ExplainState *es,
					  const char *queryString, ParamListInfo params, QueryEnvironment *queryEnv)
{
	StringInfoData line;

	if (!es->analyze)
	{
		explain_as_core(query, cursorOptions, into, es, queryString, params, queryEnv);
		return;
	}

	if (collecting == 0)
		nentries = 0;
	collecting++;
	PG_TRY();
	{
		explain_as_core(query, cursorOptions, into, es, queryString, params, queryEnv);
	}
	PG_FINALLY();
	{
		collecting--;
	}
	PG_END_TRY();
	if (collecting > 0)
		return;

	initStringInfo(&line);
	for (int i = 0; i < nentries; i++)
	{
		const LshExplainEntry *e = &entries[i];

		resetStringInfo(&line);
		appendStringInfo(&line, "lsh scan \"%s\": scans " UINT64_FORMAT ", bands probed " UINT64_FORMAT
						 ", depth ", NameStr(e->name), e->c.scans, e->c.bands_probed);
		if (e->c.depth > 0)
			appendStringInfo(&line, "%d", e->c.depth);
		else
			appendStringInfoString(&line, "all");
		appendStringInfo(&line, ", candidates " UINT64_FORMAT ", verified " UINT64_FORMAT
						 ", returned " UINT64_FORMAT,
						 e->c.candidates, e->c.verified, e->c.returned);
		if (e->c.pending_copied > 0)
			appendStringInfo(&line, ", pending list read from a copy in " UINT64_FORMAT " scans",
							 e->c.pending_copied);
		if (es->format == EXPLAIN_FORMAT_TEXT)
			appendStringInfo(es->str, "%s\n", line.data);
		else
			ereport(NOTICE, (errmsg_internal("%s", line.data)));
	}
	pfree(line.data);
	nentries = 0;
}

void
lsh_explain_init(void)
{
	prev_explain_hook = ExplainOneQuery_hook;
	ExplainOneQuery_hook = lsh_explain_one_query;
}
