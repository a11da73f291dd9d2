/*
 * The all-pairs walk split among parallel workers (minhash_similar_pairs,
 * minhash_clusters; docs/pairs.md, "Parallel walk").
 *
 * Why it splits cleanly: a band group is a run of keys equal under
 * run->key_mask, a prefix of the key's bits, so a key range whose ends are
 * multiples of the group width holds whole groups; and a pair is verified
 * only in the group of its first fully equal band (pairs.h), so walkers of
 * disjoint ranges never verify a pair twice and need no shared set of pairs
 * seen. The key space is cut into PAIRS_CHUNKS such ranges, which the
 * workers (and the leader) take one at a time from a shared counter (band keys are uniform
 * hashes, so the ranges are about equal; taking them one at a time evens
 * out the rest). A worker walks a range as the serial walk does -- every
 * part's leaves (found by a descent to the range's first key) merged,
 * pending rows included, the same checked page reads, the same work_mem
 * bounds -- and sends the pairs that pass verification, as row ids, TIDs and
 * similarity, to the leader through its own shm_mq.
 *
 * The leader does what needs the query's state: it resolves each pair's
 * rows through the row cache (visibility under the snapshot, keys, exact
 * similarity, the table owner's expressions) and emits them, exactly as the
 * serial walk does, so the answer is the same set (in another order).
 * It walks no key range while workers run (see pairs_parallel_gather); the
 * ranges no worker took (one that could not start) it walks afterwards.
 *
 * Workers are used only where they pay: an index (all partitions' indexes
 * together) of at least minhash.pairs_min_parallel_index_size, up to
 * max_parallel_workers_per_gather of them (the cap of any parallel part of
 * a query), none when the query already runs in parallel mode or the index
 * is temporary. With no worker started, the leader walks serially.
 *
 * Errors: a worker's error (damage is XX002, as in the serial walk) reaches
 * the leader as that error, raised by the parallel machinery when the
 * leader next checks for interrupts or waits for the workers; a cancel of
 * the query stops the leader, whose abort stops the workers.
 */
#include "pg/pg_prelude.h"

#include "pg/pairs/pairs.h"

extern "C" {
#include "access/parallel.h"
#include "access/table.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shm_mq.h"
#include "storage/spin.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/wait_event.h"
}

/* shm_toc keys */
#define PAIRS_KEY_SHARED	UINT64CONST(0xB5A0000000000101)
#define PAIRS_KEY_QUEUES	UINT64CONST(0xB5A0000000000102)

/*
 * Key ranges the walk is cut into (fewer if groups are wider than 2^32 /
 * this): small enough that the leader, walking one between draining the
 * queues, keeps the workers waiting little (about 15 ms of walk each at 1M
 * rows), large enough that the descents to their first leaves cost nothing.
 */
#define PAIRS_CHUNKS		256
/* each worker's queue to the leader */
#define PAIRS_QUEUE_SIZE	((Size) 256 * 1024)
/* pairs per message */
#define PAIRS_BATCH			256

int			pairs_min_parallel_index_size = 1024;	/* blocks: 8 MB */

/* a verified pair, as a worker sends it */
typedef struct PairsWire
{
	uint64		ida;
	uint64		idb;
	double		sim;
	ItemPointerData tida;
	ItemPointerData tidb;
} PairsWire;

typedef struct PairsSharedPart
{
	Oid			heapoid;
	Oid			indexoid;
	BlockNumber leftmost;
	BlockNumber nblocks;
	uint64		nrowids;
	uint64		base;
} PairsSharedPart;

/* In dynamic shared memory: what a worker needs of the run, and the work handed out. */
typedef struct PairsShared
{
	LshIndexParams params;
	uint32		key_mask;
	int			depth;
	double		threshold;
	bool		exact;
	bool		collapse;
	char		funcname[NAMEDATALEN];
	char		indexname[NAMEDATALEN];
	uint32		nchunks;
	uint64		chunk_width;	/* keys per range */
	pg_atomic_uint32 next_chunk;	/* the next range to take */
	pg_atomic_uint32 chunks_done;	/* ranges walked and sent */

	slock_t		mutex;
	/* under mutex: the workers' counters, for the DEBUG1 summary */
	uint64		leaves;
	uint64		entries;
	uint64		groups;
	uint64		spilled_groups;
	uint64		collapsed_groups;
	uint64		candidates;

	int			nparts;
	PairsSharedPart parts[FLEXIBLE_ARRAY_MEMBER];
} PairsShared;

/* a worker's pairs on their way to its queue */
typedef struct PairsSender
{
	shm_mq_handle *mqh;
	int			n;
	bool		detached;		/* the leader is gone: stop */
	PairsWire	batch[PAIRS_BATCH];
} PairsSender;

void
pairs_parallel_init(void)
{
	DefineCustomIntVariable("minhash.pairs_min_parallel_index_size",
							"Smallest lsh index for which minhash_similar_pairs and minhash_clusters use parallel workers.",
							"The workers walk the index's key ranges and verify pairs; the leader fetches the rows, or, past effective_cache_size, the workers fetch them in table order. max_parallel_workers_per_gather caps their number.",
							&pairs_min_parallel_index_size,
							1024, 0, INT_MAX / 3,
							PGC_USERSET, GUC_UNIT_BLOCKS,
							NULL, NULL, NULL);
}

/*
 * Parallel workers a run may use, for its walk or its pass in table order
 * (pairs_table_order_parallel.cpp): up to max_parallel_workers_per_gather
 * for an index of at least minhash.pairs_min_parallel_index_size, none when
 * the session's own buffers hold table or index.
 */
int
pairs_parallel_workers(const PairsRun *run)
{
	uint64		blocks = 0;

	if (max_parallel_workers_per_gather <= 0 || IsInParallelMode() || !IsUnderPostmaster)
		return 0;
	for (int p = 0; p < run->nparts; p++)
	{
		/* workers cannot read a session's local buffers */
		if (RelationUsesLocalBuffers(run->parts[p].index) ||
			RelationUsesLocalBuffers(run->parts[p].heap))
			return 0;
		blocks += run->parts[p].nblocks;
	}
	if (blocks < (uint64) pairs_min_parallel_index_size)
		return 0;
	return max_parallel_workers_per_gather;
}

/* Workers to ask for (0: walk serially), and the key ranges to cut the walk into. */
static int
pairs_parallel_request(const PairsRun *run, uint32 *nchunks, uint64 *width)
{
	uint64		group = (uint64) (uint32) ~run->key_mask + 1;	/* keys per band group, a power of two */
	int			workers = pairs_parallel_workers(run);

	if (workers <= 0)
		return 0;
	/* a group is keys equal under a prefix mask; anything else cannot be cut into ranges */
	if ((group & (group - 1)) != 0)
		return 0;
	*width = Max(group, (UINT64CONST(1) << 32) / PAIRS_CHUNKS);
	*nchunks = (uint32) ((UINT64CONST(1) << 32) / *width);
	if (*nchunks < 2)
		return 0;
	return (int) Min((uint32) workers, *nchunks);
}

/* The next key range [lo, hi] to walk, from the shared counter; false when none is left. */
static bool
take_chunk(PairsShared *shared, uint32 *lo, uint32 *hi)
{
	uint32		chunk = pg_atomic_fetch_add_u32(&shared->next_chunk, 1);
	uint64		first = (uint64) chunk * shared->chunk_width;

	if (chunk >= shared->nchunks)
		return false;
	*lo = (uint32) first;
	*hi = (uint32) (first + shared->chunk_width - 1);
	return true;
}

static void
sender_flush(PairsSender *s)
{
	if (s->n > 0 && !s->detached &&
		shm_mq_send(s->mqh, sizeof(PairsWire) * s->n, s->batch, false, true) == SHM_MQ_DETACHED)
		s->detached = true;
	s->n = 0;
}

static void
send_verified(PairsRun *run, void *arg, uint64 ida, ItemPointer tida, uint64 idb,
			  ItemPointer tidb, double sim)
{
	PairsSender *s = (PairsSender *) arg;
	PairsWire  *p = &s->batch[s->n++];

	p->ida = ida;
	p->idb = idb;
	p->sim = sim;
	p->tida = *tida;
	p->tidb = *tidb;
	if (s->n == PAIRS_BATCH)
		sender_flush(s);
}

/* Entry point of a worker (CreateParallelContext names it). */
extern "C" PGDLLEXPORT void
minhash_pairs_parallel_main(dsm_segment *seg, shm_toc *toc)
{
	PairsShared *shared = (PairsShared *) shm_toc_lookup(toc, PAIRS_KEY_SHARED, false);
	char	   *queues = (char *) shm_toc_lookup(toc, PAIRS_KEY_QUEUES, false);
	shm_mq	   *mq = (shm_mq *) (queues + (Size) ParallelWorkerNumber * PAIRS_QUEUE_SIZE);
	PairsSender *sender = (PairsSender *) palloc0(sizeof(PairsSender));
	PairsRun	run;
	PairsWalk  *w;

	shm_mq_set_sender(mq, MyProc);
	sender->mqh = shm_mq_attach(mq, seg, NULL);

	/* the part of a run the walk reads (pairs.h); rows are the leader's */
	memset((void *) &run, 0, sizeof(run));
	run.args.threshold = shared->threshold;
	run.args.exact = shared->exact;
	run.collapse = shared->collapse;
	run.args.funcname = shared->funcname;
	run.indexname = shared->indexname;
	run.params = shared->params;
	run.key_mask = shared->key_mask;
	run.depth = shared->depth;
	run.budget = (Size) work_mem * 1024 / 4;
	run.cxt = AllocSetContextCreate(CurrentMemoryContext, "minhash pairs worker",
									ALLOCSET_DEFAULT_SIZES);
	run.nparts = shared->nparts;
	run.parts = (PairsPart *) palloc0(sizeof(PairsPart) * run.nparts);
	for (int p = 0; p < run.nparts; p++)
	{
		const PairsSharedPart *sp = &shared->parts[p];
		PairsPart  *pt = &run.parts[p];

		/* the leader holds these locks too: a lock group shares them */
		pt->heap = table_open(sp->heapoid, AccessShareLock);
		pt->index = index_open(sp->indexoid, AccessShareLock);
		pt->leftmost = sp->leftmost;
		pt->nblocks = sp->nblocks;
		pt->nrowids = sp->nrowids;
		pt->base = sp->base;
		run.nrowids = sp->base + sp->nrowids;
	}

	w = pairs_walk_begin(&run, send_verified, sender, true);
	while (!sender->detached)
	{
		uint32		lo,
					hi;

		if (!take_chunk(shared, &lo, &hi))
			break;
		pairs_walk_range(w, lo, hi);
		sender_flush(sender);
		pg_atomic_fetch_add_u32(&shared->chunks_done, 1);
	}
	pairs_walk_end(w);

	SpinLockAcquire(&shared->mutex);
	shared->leaves += run.leaves;
	shared->entries += run.entries;
	shared->groups += run.groups;
	shared->spilled_groups += run.spilled_groups;
	shared->collapsed_groups += run.collapsed_groups;
	shared->candidates += run.candidates;
	SpinLockRelease(&shared->mutex);

	shm_mq_detach(sender->mqh);
	for (int p = 0; p < run.nparts; p++)
	{
		index_close(run.parts[p].index, AccessShareLock);
		table_close(run.parts[p].heap, AccessShareLock);
	}
	MemoryContextDelete(run.cxt);
}

/* progress: the share of the key ranges walked (the serial walk's last line is below 100% too) */
static void
report_chunks(PairsRun *run, PairsShared *shared)
{
	uint32		done = pg_atomic_read_u32(&shared->chunks_done);

	if (done < shared->nchunks)
		pairs_report_progress(run, (double) done / shared->nchunks);
}

/*
 * The workers' pairs, into the row cache and out, until every worker is
 * done. The leader does not walk key ranges itself (whatever
 * parallel_leader_participation says): from PostgreSQL 17 on, a backend
 * that fails while reading a page (a damaged index: "invalid page") keeps the
 * page's I/O marked in progress until its resource owner is released, which
 * comes after it has waited for its parallel workers to exit; a worker that
 * waits for that page's I/O while holding the lock of the page it came from
 * (the walk's lock coupling holds off interrupts) never sees the leader's
 * termination request, and both wait forever (TAP 100_damage found it on 17).
 * Workers only read index pages, the leader only heap pages, so none waits
 * for the other's I/O.
 */
static void
pairs_parallel_gather(PairsRun *run, ParallelContext *pcxt, PairsShared *shared,
					  shm_mq_handle **mqh, PairsEmitFn emit, void *arg)
{
	int			nworkers = pcxt->nworkers_launched;
	bool	   *done = (bool *) palloc0(sizeof(bool) * nworkers);
	int			active = nworkers;

	while (active > 0)
	{
		bool		got = false;

		/* a worker's error is raised here (HandleParallelMessages), a cancel too */
		CHECK_FOR_INTERRUPTS();
		for (int i = 0; i < nworkers; i++)
		{
			Size		nbytes;
			void	   *data;
			shm_mq_result res;

			if (done[i])
				continue;
			res = shm_mq_receive(mqh[i], &nbytes, &data, true);
			if (res == SHM_MQ_WOULD_BLOCK)
				continue;
			if (res == SHM_MQ_DETACHED)
			{
				done[i] = true;
				active--;
				continue;
			}
			got = true;
			if (nbytes % sizeof(PairsWire) != 0)
				elog(ERROR, "%s: parallel worker sent a message of %zu bytes",
					 run->args.funcname, nbytes);
			for (Size j = 0; j < nbytes / sizeof(PairsWire); j++)
			{
				/* the queue's bytes need not be aligned for a PairsWire */
				PairsWire	p;

				memcpy(&p, (char *) data + j * sizeof(PairsWire), sizeof(p));
				pairs_emit_verified(run, emit, arg, p.ida, &p.tida, p.idb, &p.tidb, p.sim);
				if ((j & 63) == 63)
					CHECK_FOR_INTERRUPTS();
			}
			report_chunks(run, shared);
		}
		if (!got && active > 0)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1,
							 WAIT_EVENT_EXECUTE_GATHER);
			ResetLatch(MyLatch);
		}
	}
	pfree(done);

	/* ranges no worker took (one that could not start): here, now that no worker reads */
	{
		uint32		lo,
					hi;

		if (take_chunk(shared, &lo, &hi))
		{
			PairsDirectOut out = {emit, arg};
			PairsWalk  *w = pairs_walk_begin(run, pairs_direct_verified, &out, true);

			do
			{
				pairs_walk_range(w, lo, hi);
				pg_atomic_fetch_add_u32(&shared->chunks_done, 1);
				report_chunks(run, shared);
			} while (take_chunk(shared, &lo, &hi));
			pairs_walk_end(w);
		}
	}
}

/*
 * Walk the run's index with parallel workers, emitting every pair; false
 * (nothing done) when workers do not pay or none started: walk serially.
 */
bool
pairs_parallel_walk(PairsRun *run, PairsEmitFn emit, void *arg)
{
	uint32		nchunks = 0;
	uint64		width = 0;
	int			request = pairs_parallel_request(run, &nchunks, &width);
	ParallelContext *pcxt;
	Size		sharedsize;
	PairsShared *shared;
	char	   *queues;
	shm_mq_handle **mqh;
	MemoryContext oldcxt;

	if (request <= 0)
		return false;

	oldcxt = MemoryContextSwitchTo(run->cxt);
	EnterParallelMode();
	pcxt = CreateParallelContext("minhash", "minhash_pairs_parallel_main", request);
	sharedsize = add_size(offsetof(PairsShared, parts),
						  mul_size(sizeof(PairsSharedPart), run->nparts));
	shm_toc_estimate_chunk(&pcxt->estimator, sharedsize);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(PAIRS_QUEUE_SIZE, pcxt->nworkers));
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL || pcxt->nworkers == 0)
	{
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		MemoryContextSwitchTo(oldcxt);
		return false;
	}

	shared = (PairsShared *) shm_toc_allocate(pcxt->toc, sharedsize);
	memset((void *) shared, 0, sharedsize);
	shared->params = run->params;
	shared->key_mask = run->key_mask;
	shared->depth = run->depth;
	shared->threshold = run->args.threshold;
	shared->exact = run->args.exact;
	shared->collapse = run->collapse;
	strlcpy(shared->funcname, run->args.funcname, sizeof(shared->funcname));
	strlcpy(shared->indexname, run->indexname, sizeof(shared->indexname));
	shared->nchunks = nchunks;
	shared->chunk_width = width;
	pg_atomic_init_u32(&shared->next_chunk, 0);
	pg_atomic_init_u32(&shared->chunks_done, 0);
	SpinLockInit(&shared->mutex);
	shared->nparts = run->nparts;
	for (int p = 0; p < run->nparts; p++)
	{
		const PairsPart *pt = &run->parts[p];
		PairsSharedPart *sp = &shared->parts[p];

		sp->heapoid = RelationGetRelid(pt->heap);
		sp->indexoid = RelationGetRelid(pt->index);
		sp->leftmost = pt->leftmost;
		sp->nblocks = pt->nblocks;
		sp->nrowids = pt->nrowids;
		sp->base = pt->base;
	}
	shm_toc_insert(pcxt->toc, PAIRS_KEY_SHARED, shared);

	queues = (char *) shm_toc_allocate(pcxt->toc, mul_size(PAIRS_QUEUE_SIZE, pcxt->nworkers));
	for (int i = 0; i < pcxt->nworkers; i++)
	{
		shm_mq	   *mq = shm_mq_create(queues + (Size) i * PAIRS_QUEUE_SIZE, PAIRS_QUEUE_SIZE);

		shm_mq_set_receiver(mq, MyProc);
	}
	shm_toc_insert(pcxt->toc, PAIRS_KEY_QUEUES, queues);

	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			(errmsg_internal("%s: %d of %d parallel workers launched to walk index \"%s\"",
							 run->args.funcname, pcxt->nworkers_launched, request,
							 run->indexname)));
	if (pcxt->nworkers_launched == 0)
	{
		WaitForParallelWorkersToFinish(pcxt);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		MemoryContextSwitchTo(oldcxt);
		return false;
	}

	mqh = (shm_mq_handle **) palloc(sizeof(shm_mq_handle *) * pcxt->nworkers_launched);
	for (int i = 0; i < pcxt->nworkers_launched; i++)
	{
		mqh[i] = shm_mq_attach((shm_mq *) (queues + (Size) i * PAIRS_QUEUE_SIZE), pcxt->seg, NULL);
		/* a worker that dies before attaching detaches its queue */
		shm_mq_set_handle(mqh[i], pcxt->worker[i].bgwhandle);
	}

	run->started = run->last_notice = GetCurrentTimestamp();
	run->last_decile = 0;
	pairs_parallel_gather(run, pcxt, shared, mqh, emit, arg);

	/* errors of the workers not raised yet are raised here */
	WaitForParallelWorkersToFinish(pcxt);
	/* every range must have been walked: a worker that left one undone failed */
	if (pg_atomic_read_u32(&shared->chunks_done) != shared->nchunks)
		elog(ERROR, "%s: parallel walk of index \"%s\" finished %u of %u key ranges",
			 run->args.funcname, run->indexname, pg_atomic_read_u32(&shared->chunks_done),
			 shared->nchunks);
	run->leaves += shared->leaves;
	run->entries += shared->entries;
	run->groups += shared->groups;
	run->spilled_groups += shared->spilled_groups;
	run->collapsed_groups += shared->collapsed_groups;
	run->candidates += shared->candidates;

	for (int i = 0; i < pcxt->nworkers_launched; i++)
		shm_mq_detach(mqh[i]);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	MemoryContextSwitchTo(oldcxt);
	return true;
}
