/*
 * The pass in table order shared by parallel workers (docs/pairs.md,
 * "Tables larger than memory").
 *
 * At 10M rows the pass reads nearly the whole table, and one process doing
 * it is bound by its own CPU: copying each block out of the kernel's cache
 * and checking its rows (about 330 MB/s here). So when the run may use
 * workers (pairs_parallel_workers) they share it:
 *  - the table is cut into runs of PASS_RUN_BLOCKS blocks, dealt to the
 *    workers in turn, so each reads its runs front to back (the kernel reads
 *    ahead within them) and the ends of one row reach one worker;
 *  - the leader reads the ends in table order and sends each, in batches,
 *    through the queue of its run's worker;
 *  - the worker fetches the row under the query's snapshot (the parallel
 *    machinery restores it), evaluates the key and sends back (end, row id,
 *    similarity, key or NULL, and minhash_clusters' keep column when it has
 *    one) through its second queue;
 *  - the leader puts those into the sort by end number, as the serial pass
 *    does.
 * The leader reads no table or index page while the workers run (the
 * hazard pairs_parallel.cpp's gather describes). The key is a column
 * coerced to the key type; a coercion that is not parallel safe keeps the
 * pass in the leader.
 */
#include "pg/pg_prelude.h"

#include "pg/pairs/pairs_table_order.h"

extern "C" {
#include "access/parallel.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_proc.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shm_mq.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"
}

/* shm_toc keys */
#define PASS_KEY_SHARED		UINT64CONST(0xB5A0000000000201)
#define PASS_KEY_EXPRS		UINT64CONST(0xB5A0000000000202)
#define PASS_KEY_QUEUES		UINT64CONST(0xB5A0000000000203)

/*
 * Blocks dealt to one worker at a time (4 MB). The leader feeds one run at a
 * time, so a worker is kept busy while the others' runs are dealt only by
 * what its queue holds: several runs' ends (about 2,500 ends of 40 bytes
 * a run at 10M rows), or the workers take turns.
 */
#define PASS_RUN_BLOCKS		512
/* each queue, both ways */
#define PASS_QUEUE_SIZE		((Size) 1024 * 1024)
/* ends per message to a worker */
#define PASS_BATCH			128
/* bytes of rows a worker gathers before sending them */
#define PASS_FLUSH			((Size) 16 * 1024)

typedef struct PassShared
{
	int16		key_typlen;
	bool		key_typbyval;
	Oid			keep_type;		/* InvalidOid: no keep column */
	int16		keep_typlen;
	bool		keep_typbyval;
	pg_atomic_uint64 fetches;	/* heap fetches, for the DEBUG1 summary */
	pg_atomic_uint64 rows_fetched;
	int			nparts;
	Oid			heapoids[FLEXIBLE_ARRAY_MEMBER];
} PassShared;

/* a resolved end as it travels back, followed by its key and keep column (datumSerialize) */
typedef struct PassRowHeader
{
	int64		number;
	int64		rowid;
	double		sim;
} PassRowHeader;

static shm_mq *
queue_of(char *queues, int worker, bool to_leader)
{
	return (shm_mq *) (queues + (Size) (2 * worker + (to_leader ? 1 : 0)) * PASS_QUEUE_SIZE);
}

static bool
unsafe_function(Oid func_id, void *context)
{
	return func_parallel(func_id) != PROPARALLEL_SAFE;
}

/* true if the expression may not run in a worker (as the planner's max_parallel_hazard) */
static bool
parallel_unsafe_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, CoerceToDomain))
		return true;			/* its constraints are not looked into: keep it in the leader */
	if (check_functions_in_node(node, unsafe_function, context))
		return true;
#if PG_VERSION_NUM >= 160000
	return expression_tree_walker(node, parallel_unsafe_walker, context);
#else
	/* through void (*)(void): the walker type of 15 takes no declared arguments */
	return expression_tree_walker(node, (bool (*)()) (void (*)(void)) parallel_unsafe_walker, context);
#endif
}

/* a worker's rows, gathered, sent when PASS_FLUSH bytes are waiting; false: the leader left */
static bool
send_rows(shm_mq_handle *mqh, StringInfo buf, Size at_least)
{
	bool		ok = true;

	if (buf->len > 0 && (Size) buf->len >= at_least)
	{
		ok = shm_mq_send(mqh, buf->len, buf->data, false, true) == SHM_MQ_SUCCESS;
		resetStringInfo(buf);
	}
	return ok;
}

/* Entry point of a worker (CreateParallelContext names it). */
extern "C" PGDLLEXPORT void
minhash_pairs_pass_main(dsm_segment *seg, shm_toc *toc)
{
	PassShared *shared = (PassShared *) shm_toc_lookup(toc, PASS_KEY_SHARED, false);
	const char *exprs = (const char *) shm_toc_lookup(toc, PASS_KEY_EXPRS, false);
	char	   *queues = (char *) shm_toc_lookup(toc, PASS_KEY_QUEUES, false);
	shm_mq	   *inq = queue_of(queues, ParallelWorkerNumber, false);
	shm_mq	   *outq = queue_of(queues, ParallelWorkerNumber, true);
	shm_mq_handle *inh;
	shm_mq_handle *outh;
	PairsRun	run;
	PairsEnd   *ends = (PairsEnd *) palloc(sizeof(PairsEnd) * PASS_BATCH);
	StringInfoData buf;
	int32		last_part = -1;
	BlockNumber last_block = InvalidBlockNumber;
	PairsLastRow last;
	bool		leader_gone = false;

	shm_mq_set_receiver(inq, MyProc);
	shm_mq_set_sender(outq, MyProc);
	inh = shm_mq_attach(inq, seg, NULL);
	outh = shm_mq_attach(outq, seg, NULL);

	/* the part of a run pairs_fetch_key reads */
	memset((void *) &run, 0, sizeof(run));
	run.snapshot = GetActiveSnapshot();
	run.estate = CreateExecutorState();
	run.econtext = GetPerTupleExprContext(run.estate);
	run.key_typlen = shared->key_typlen;
	run.key_typbyval = shared->key_typbyval;
	run.keep_type = shared->keep_type;
	run.keep_typlen = shared->keep_typlen;
	run.keep_typbyval = shared->keep_typbyval;
	run.nparts = shared->nparts;
	run.parts = (PairsPart *) palloc0(sizeof(PairsPart) * run.nparts);
	for (int p = 0; p < run.nparts; p++)
	{
		PairsPart  *pt = &run.parts[p];

		/* the leader holds this lock too: a lock group shares it */
		pt->heap = table_open(shared->heapoids[p], AccessShareLock);
		pt->key_node = (Node *) stringToNode(exprs);
		exprs += strlen(exprs) + 1;
		pairs_prepare_key(&run, pt);
		if (OidIsValid(run.keep_type))
		{
			/* a plain column of the table: runs no code */
			pt->keep_node = (Node *) stringToNode(exprs);
			exprs += strlen(exprs) + 1;
			pt->keep_expr = ExecPrepareExpr((Expr *) pt->keep_node, run.estate);
		}
		pt->fetch = table_index_fetch_begin(pt->heap);
		pt->slot = table_slot_create(pt->heap, NULL);
	}
	initStringInfo(&buf);
	pairs_last_row_init(&last);

	while (!leader_gone)
	{
		Size		nbytes;
		void	   *data;
		int			n;

		/* the leader detaches when every end is sent */
		if (shm_mq_receive(inh, &nbytes, &data, false) != SHM_MQ_SUCCESS)
			break;
		if (nbytes % sizeof(PairsEnd) != 0 || nbytes > sizeof(PairsEnd) * PASS_BATCH)
			elog(ERROR, "minhash: parallel worker received a message of %zu bytes", nbytes);
		n = (int) (nbytes / sizeof(PairsEnd));
		/* the queue's bytes need not be aligned for a PairsEnd */
		memcpy(ends, data, nbytes);
		for (int i = 0; i < n; i++)
		{
			if (ends[i].part < 0 || ends[i].part >= run.nparts)
				elog(ERROR, "minhash: parallel worker received an end of part %d", ends[i].part);
			pairs_prefetch_jump(run.parts[ends[i].part].heap, ends[i].part,
								ItemPointerGetBlockNumber(&ends[i].tid), &last_part, &last_block);
		}
		for (int i = 0; i < n; i++)
		{
			const PairsEnd *e = &ends[i];
			PassRowHeader h = {e->number, e->rowid, e->sim};
			bool		visible;
			Size		keysize;
			char	   *at;

			if ((i & 63) == 0)
				CHECK_FOR_INTERRUPTS();
			/* a row's ends are adjacent and dealt to one worker: fetched once */
			visible = pairs_fetch_end(&run, &last, e);
			appendBinaryStringInfo(&buf, (const char *) &h, sizeof(h));
			keysize = datumEstimateSpace(last.key, !visible, run.key_typbyval, run.key_typlen);
			enlargeStringInfo(&buf, (int) keysize);
			at = buf.data + buf.len;
			datumSerialize(last.key, !visible, run.key_typbyval, run.key_typlen, &at);
			buf.len += (int) keysize;
			if (OidIsValid(run.keep_type))
			{
				bool		keep_isnull = !visible || last.keep_isnull;

				keysize = datumEstimateSpace(last.keep, keep_isnull, run.keep_typbyval, run.keep_typlen);
				enlargeStringInfo(&buf, (int) keysize);
				at = buf.data + buf.len;
				datumSerialize(last.keep, keep_isnull, run.keep_typbyval, run.keep_typlen, &at);
				buf.len += (int) keysize;
			}
			if (!send_rows(outh, &buf, PASS_FLUSH))
			{
				leader_gone = true;
				break;
			}
		}
		/* what this message asked for, all of it on its way */
		if (!leader_gone && !send_rows(outh, &buf, 0))
			leader_gone = true;
	}

	pg_atomic_fetch_add_u64(&shared->fetches, run.fetches);
	pg_atomic_fetch_add_u64(&shared->rows_fetched, last.fetched);
	pairs_fetch_key_done(&run);
	for (int p = 0; p < run.nparts; p++)
	{
		ExecDropSingleTupleTableSlot(run.parts[p].slot);
		table_index_fetch_end(run.parts[p].fetch);
		table_close(run.parts[p].heap, AccessShareLock);
	}
	FreeExecutorState(run.estate);
	shm_mq_detach(outh);
	shm_mq_detach(inh);
}

typedef struct PassLeader
{
	PairsRun   *run;
	PairsDeferred *d;
	int			nworkers;
	shm_mq_handle **in;			/* to each worker */
	shm_mq_handle **out;		/* from each worker; NULL once it detached */
	int			active;			/* workers still sending */
	MemoryContext keycxt;		/* keys restored from one message */
} PassLeader;

/* the rows of one message from a worker, into the sort by end number */
static void
put_rows(PassLeader *l, const char *data, Size nbytes)
{
	const char *end = data + nbytes;
	char	   *at = (char *) data;
	MemoryContext oldcxt = MemoryContextSwitchTo(l->keycxt);

	while (at < end)
	{
		PassRowHeader h;
		bool		isnull;
		Datum		key;
		bool		keep_isnull = true;
		Datum		keep = (Datum) 0;

		if ((Size) (end - at) < sizeof(h))
			elog(ERROR, "%s: parallel worker sent a truncated row", l->run->args.funcname);
		memcpy(&h, at, sizeof(h));
		at += sizeof(h);
		key = datumRestore(&at, &isnull);
		if (OidIsValid(l->run->keep_type))
			keep = datumRestore(&at, &keep_isnull);
		pairs_table_order_put_row(l->d, h.number, h.rowid, h.sim, !isnull, key, keep, keep_isnull);
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(l->keycxt);
}

/* Take in whatever the workers sent; true if anything came. */
static bool
drain(PassLeader *l)
{
	bool		got = false;

	for (int i = 0; i < l->nworkers; i++)
	{
		Size		nbytes;
		void	   *data;
		shm_mq_result res;

		while (l->out[i] != NULL &&
			   (res = shm_mq_receive(l->out[i], &nbytes, &data, true)) != SHM_MQ_WOULD_BLOCK)
		{
			if (res == SHM_MQ_DETACHED)
			{
				l->out[i] = NULL;
				l->active--;
				break;
			}
			put_rows(l, (const char *) data, nbytes);
			got = true;
			CHECK_FOR_INTERRUPTS();
		}
	}
	return got;
}

/* the wait event of a message queue's sender (renamed in 17) */
#if PG_VERSION_NUM >= 170000
#define PASS_WAIT_EVENT		WAIT_EVENT_MESSAGE_QUEUE_SEND
#else
#define PASS_WAIT_EVENT		WAIT_EVENT_MQ_SEND
#endif

/* wait for a worker to read or write a queue; a worker's error is raised here */
static void
wait_for_workers(void)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1, PASS_WAIT_EVENT);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/* a batch of ends to worker w, taking in rows while its queue is full */
static void
send_ends(PassLeader *l, int w, const PairsEnd *ends, int n)
{
	for (;;)
	{
		shm_mq_result res = shm_mq_send(l->in[w], sizeof(PairsEnd) * n, ends, true, true);

		if (res == SHM_MQ_SUCCESS)
			return;
		if (res == SHM_MQ_DETACHED)
		{
			CHECK_FOR_INTERRUPTS();		/* its error, if it sent one */
			elog(ERROR, "%s: a parallel worker left before resolving its rows",
				 l->run->args.funcname);
		}
		if (!drain(l))
			wait_for_workers();
	}
}

/* deal the ends, in table order, to the workers of their runs; then take in the last rows */
static void
deal(PassLeader *l)
{
	PairsEnd  (*batch)[PASS_BATCH] = (PairsEnd (*)[PASS_BATCH])
		palloc(sizeof(PairsEnd) * PASS_BATCH * l->nworkers);
	int		   *n = (int *) palloc0(sizeof(int) * l->nworkers);
	PairsEnd	e;
	uint64		count = 0;

	while (pairs_table_order_next_end(l->d, &e))
	{
		int			w = (int) (((uint64) e.part + ItemPointerGetBlockNumber(&e.tid) / PASS_RUN_BLOCKS) %
							   (uint64) l->nworkers);

		if ((++count & 0xFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		batch[w][n[w]++] = e;
		if (n[w] == PASS_BATCH)
		{
			send_ends(l, w, batch[w], n[w]);
			n[w] = 0;
		}
	}
	for (int w = 0; w < l->nworkers; w++)
	{
		if (n[w] > 0)
			send_ends(l, w, batch[w], n[w]);
		/* no more ends: the worker finishes and detaches its own queue */
		shm_mq_detach(l->in[w]);
	}
	while (l->active > 0)
		if (!drain(l))
			wait_for_workers();
	pfree(batch);
	pfree(n);
}

/*
 * Resolve the ends of d with parallel workers into d's sort by end number;
 * false (nothing done) when workers may not be used or none started.
 */
bool
pairs_table_order_parallel(PairsRun *run, PairsDeferred *d, uint64 *rows_fetched)
{
	int			request = pairs_parallel_workers(run);
	Size		sharedsize;
	Size		exprsize = 0;
	int			nexprs;
	char	  **exprs;
	ParallelContext *pcxt;
	PassShared *shared;
	char	   *queues;
	char	   *at;
	PassLeader	l;

	if (request <= 0)
		return false;
	for (int p = 0; p < run->nparts; p++)
		if (parallel_unsafe_walker(run->parts[p].key_node, NULL))
			return false;

	/* each part's key expression, then (with a keep column) its keep column */
	nexprs = OidIsValid(run->keep_type) ? 2 * run->nparts : run->nparts;
	exprs = (char **) palloc(sizeof(char *) * nexprs);
	for (int p = 0, e = 0; p < run->nparts; p++)
	{
		exprs[e++] = nodeToString(run->parts[p].key_node);
		if (OidIsValid(run->keep_type))
			exprs[e++] = nodeToString(run->parts[p].keep_node);
	}
	for (int e = 0; e < nexprs; e++)
		exprsize += strlen(exprs[e]) + 1;
	sharedsize = add_size(offsetof(PassShared, heapoids), mul_size(sizeof(Oid), run->nparts));

	EnterParallelMode();
	pcxt = CreateParallelContext("minhash", "minhash_pairs_pass_main", request);
	shm_toc_estimate_chunk(&pcxt->estimator, sharedsize);
	shm_toc_estimate_chunk(&pcxt->estimator, exprsize);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(2 * PASS_QUEUE_SIZE, pcxt->nworkers));
	shm_toc_estimate_keys(&pcxt->estimator, 3);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL || pcxt->nworkers == 0)
	{
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return false;
	}

	shared = (PassShared *) shm_toc_allocate(pcxt->toc, sharedsize);
	memset((void *) shared, 0, sharedsize);
	shared->key_typlen = run->key_typlen;
	shared->key_typbyval = run->key_typbyval;
	shared->keep_type = run->keep_type;
	shared->keep_typlen = run->keep_typlen;
	shared->keep_typbyval = run->keep_typbyval;
	pg_atomic_init_u64(&shared->fetches, 0);
	pg_atomic_init_u64(&shared->rows_fetched, 0);
	shared->nparts = run->nparts;
	for (int p = 0; p < run->nparts; p++)
		shared->heapoids[p] = RelationGetRelid(run->parts[p].heap);
	shm_toc_insert(pcxt->toc, PASS_KEY_SHARED, shared);

	at = (char *) shm_toc_allocate(pcxt->toc, exprsize);
	shm_toc_insert(pcxt->toc, PASS_KEY_EXPRS, at);
	for (int e = 0; e < nexprs; e++)
	{
		Size		len = strlen(exprs[e]) + 1;

		memcpy(at, exprs[e], len);
		at += len;
	}

	queues = (char *) shm_toc_allocate(pcxt->toc, mul_size(2 * PASS_QUEUE_SIZE, pcxt->nworkers));
	for (int i = 0; i < pcxt->nworkers; i++)
	{
		shm_mq_set_sender(shm_mq_create(queue_of(queues, i, false), PASS_QUEUE_SIZE), MyProc);
		shm_mq_set_receiver(shm_mq_create(queue_of(queues, i, true), PASS_QUEUE_SIZE), MyProc);
	}
	shm_toc_insert(pcxt->toc, PASS_KEY_QUEUES, queues);

	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			(errmsg_internal("%s: %d of %d parallel workers launched to resolve rows in table order",
							 run->args.funcname, pcxt->nworkers_launched, request)));
	if (pcxt->nworkers_launched == 0)
	{
		WaitForParallelWorkersToFinish(pcxt);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return false;
	}

	l.run = run;
	l.d = d;
	l.nworkers = pcxt->nworkers_launched;
	l.active = l.nworkers;
	l.in = (shm_mq_handle **) palloc(sizeof(shm_mq_handle *) * l.nworkers);
	l.out = (shm_mq_handle **) palloc(sizeof(shm_mq_handle *) * l.nworkers);
	for (int i = 0; i < l.nworkers; i++)
	{
		l.in[i] = shm_mq_attach(queue_of(queues, i, false), pcxt->seg, NULL);
		l.out[i] = shm_mq_attach(queue_of(queues, i, true), pcxt->seg, NULL);
		/* a worker that dies before attaching detaches its queues */
		shm_mq_set_handle(l.in[i], pcxt->worker[i].bgwhandle);
		shm_mq_set_handle(l.out[i], pcxt->worker[i].bgwhandle);
	}
	l.keycxt = AllocSetContextCreate(CurrentMemoryContext, "minhash pass keys",
									 ALLOCSET_DEFAULT_SIZES);
	deal(&l);

	/* errors of the workers not raised yet are raised here */
	WaitForParallelWorkersToFinish(pcxt);
	*rows_fetched += pg_atomic_read_u64(&shared->rows_fetched);
	run->fetches += pg_atomic_read_u64(&shared->fetches);
	MemoryContextDelete(l.keycxt);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return true;
}
