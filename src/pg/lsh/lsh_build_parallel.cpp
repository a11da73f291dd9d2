/*
 * Parallel build of an lsh index (max_parallel_maintenance_workers).
 *
 * What costs in a build is the heap scan: detoasting each row and evaluating
 * the index expression (the signature). So the leader starts the workers that
 * plan_create_index_workers grants (as for a btree: table size,
 * maintenance_work_mem, the table's parallel_workers, and only if the index
 * expressions and predicate are parallel safe), and every participant -- the
 * workers and, unless parallel_leader_participation is off, the leader --
 * scans blocks of the table handed out by a parallel table scan. Each one
 * fills its own data page images (lsh_build.h) and appends a full one to the
 * index under the relation extension lock: the block number it gets fixes the
 * row ids of its rows, whose band entries then go to the participant's share
 * of one coordinated tuplesort (the participants sort their runs, in
 * maintenance_work_mem / participants each). The leader then reads the merge
 * of the runs and writes the band tree as a serial build does. The last,
 * partly filled data page of each participant goes on the free-slot list, so
 * a parallel index differs from a serial one only in where rows sit; both
 * answer every query alike.
 *
 * Index expressions run in the workers under the leader's user and security
 * context (the table owner, in a security-restricted operation: index_build
 * sets them and a parallel worker restores them), with the leader's GUCs.
 * The first participant to see a signature fixes k, seed and family for all
 * (lsh_shared_adopt_params); a signature that does not match fails the build
 * as it would fail a serial one.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh_build.h"

extern "C" {
#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
}

/* shm_toc keys */
#define LSH_KEY_SHARED			UINT64CONST(0xB5A0000000000001)
#define LSH_KEY_TUPLESORT		UINT64CONST(0xB5A0000000000002)
#define LSH_KEY_QUERY_TEXT		UINT64CONST(0xB5A0000000000003)
#define LSH_KEY_BUFFER_USAGE	UINT64CONST(0xB5A0000000000004)
#define LSH_KEY_WAL_USAGE		UINT64CONST(0xB5A0000000000005)

/* In dynamic shared memory; the parallel table scan's descriptor follows it. */
struct LshBuildShared
{
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isconcurrent;
	bool		use_wal;		/* the leader's RelationNeedsWAL(index) */
	int			scantuplesortstates;	/* participants planned: their sort memory share */

	slock_t		mutex;
	/* under mutex: */
	LshMetaPageData meta;		/* as the leader initialised it; parameters once have_params */
	bool		have_params;
	BlockNumber free_head;		/* partly filled data pages, linked */
	int			nparticipantsdone;
	double		reltuples;
	double		index_tuples;
	int64		nentries;
	uint64		nslots;
	bool		brokenhotchain;
};

#define LshSharedScan(shared) \
	((ParallelTableScanDesc) ((char *) (shared) + BUFFERALIGN(sizeof(LshBuildShared))))

struct LshBuildLeader
{
	ParallelContext *pcxt;
	Relation	heap;
	Relation	index;
	int			nparticipanttuplesorts;	/* workers launched, plus the leader if it takes part */
	bool		leaderparticipates;
	LshBuildShared *shared;
	Sharedsort *sharedsort;
	Snapshot	snapshot;
	BufferUsage *bufferusage;
	WalUsage   *walusage;
};

/* st->meta := the published parameters, keeping this participant's own slot count. Under mutex. */
static void
copy_published_params(LshBuildState *st, const LshBuildShared *shared)
{
	uint64		nslots = st->meta.nslots;

	st->meta = shared->meta;
	st->meta.nslots = nslots;
}

/*
 * The first participant to resolve parameters publishes them; later ones take
 * them (their own first signature is then checked against them as any other).
 */
void
lsh_shared_adopt_params(LshBuildState *st)
{
	LshBuildShared *shared = st->shared;

	SpinLockAcquire(&shared->mutex);
	if (!shared->have_params)
	{
		shared->meta = st->meta;
		shared->have_params = true;
	}
	else
		copy_published_params(st, shared);
	SpinLockRelease(&shared->mutex);
}

/*
 * Take the published parameters if there are some (the leader's, found before
 * the scan, or another participant's): true if st->meta now holds them.
 */
bool
lsh_shared_take_params(LshBuildState *st)
{
	LshBuildShared *shared = st->shared;
	bool		known;

	SpinLockAcquire(&shared->mutex);
	known = shared->have_params;
	if (known)
		copy_published_params(st, shared);
	SpinLockRelease(&shared->mutex);
	return known;
}

/* Link a participant's partly filled data page (about to be written at blkno) into the free list. */
void
lsh_shared_free_push(LshBuildShared *shared, Page page, BlockNumber blkno)
{
	LshPageOpaque opaque = LshPageGetOpaque(page);

	opaque->flags |= LSH_IN_FREELIST;
	SpinLockAcquire(&shared->mutex);
	opaque->next = shared->free_head;
	shared->free_head = blkno;
	SpinLockRelease(&shared->mutex);
}

bool
lsh_shared_use_wal(LshBuildShared *shared)
{
	return shared->use_wal;
}

/*
 * One participant's share: scan the blocks the parallel scan hands out, fill
 * data pages, sort the band entries of its rows (a worker run of the shared
 * sort), then add its counts to the shared state.
 */
static void
lsh_participate(LshBuildShared *shared, Sharedsort *sharedsort, Relation heap, Relation index,
				IndexInfo *indexInfo, int sortmem, bool progress)
{
	LshBuildState st;
	SortCoordinate coordinate;
	TableScanDesc scan;
	double		reltuples;

	lsh_build_state_init(&st, index, &shared->meta, shared);
	/* another participant may be publishing its parameters meanwhile */
	SpinLockAcquire(&shared->mutex);
	st.meta = shared->meta;
	SpinLockRelease(&shared->mutex);
	st.meta.nslots = 0;

	coordinate = (SortCoordinate) palloc0(sizeof(SortCoordinateData));
	coordinate->isWorker = true;
	coordinate->nParticipants = -1;
	coordinate->sharedsort = sharedsort;
	st.sort = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
									sortmem, coordinate, TUPLESORT_NONE);

	scan = table_beginscan_parallel(heap, LshSharedScan(shared));
	reltuples = table_index_build_scan(heap, index, indexInfo, true, progress,
									   lsh_build_callback, &st, scan);
	lsh_build_flush_data(&st);
	lsh_build_wal_flush(&st.wal);
	tuplesort_performsort(st.sort);

	SpinLockAcquire(&shared->mutex);
	shared->nparticipantsdone++;
	shared->reltuples += reltuples;
	shared->index_tuples += st.index_tuples;
	shared->nentries += st.nentries;
	shared->nslots += st.meta.nslots;
	if (indexInfo->ii_BrokenHotChain)
		shared->brokenhotchain = true;
	SpinLockRelease(&shared->mutex);

	/* the sorted run stays in the shared file set for the leader */
	tuplesort_end(st.sort);
	MemoryContextDelete(st.tmpctx);
}

/* Entry point of a worker (CreateParallelContext names it). */
extern "C" PGDLLEXPORT void
lsh_parallel_build_main(dsm_segment *seg, shm_toc *toc)
{
	LshBuildShared *shared;
	Sharedsort *sharedsort;
	Relation	heap;
	Relation	index;
	IndexInfo  *indexInfo;
	LOCKMODE	heapLockmode;
	LOCKMODE	indexLockmode;
	BufferUsage *bufferusage;
	WalUsage   *walusage;
	char	   *sqltext;

	sqltext = (char *) shm_toc_lookup(toc, LSH_KEY_QUERY_TEXT, true);
	debug_query_string = sqltext;
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	shared = (LshBuildShared *) shm_toc_lookup(toc, LSH_KEY_SHARED, false);
	/* the leader's locks, as index_build and index_concurrently_build hold them */
	if (!shared->isconcurrent)
	{
		heapLockmode = ShareLock;
		indexLockmode = AccessExclusiveLock;
	}
	else
	{
		heapLockmode = ShareUpdateExclusiveLock;
		indexLockmode = RowExclusiveLock;
	}
	heap = table_open(shared->heaprelid, heapLockmode);
	index = index_open(shared->indexrelid, indexLockmode);
	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = shared->isconcurrent;

	sharedsort = (Sharedsort *) shm_toc_lookup(toc, LSH_KEY_TUPLESORT, false);
	tuplesort_attach_shared(sharedsort, seg);

	InstrStartParallelQuery();
	lsh_participate(shared, sharedsort, heap, index, indexInfo,
					maintenance_work_mem / shared->scantuplesortstates, false);
	bufferusage = (BufferUsage *) shm_toc_lookup(toc, LSH_KEY_BUFFER_USAGE, false);
	walusage = (WalUsage *) shm_toc_lookup(toc, LSH_KEY_WAL_USAGE, false);
	InstrEndParallelQuery(&bufferusage[ParallelWorkerNumber], &walusage[ParallelWorkerNumber]);

	index_close(index, indexLockmode);
	table_close(heap, heapLockmode);
}

static void
lsh_parallel_cleanup(ParallelContext *pcxt, Snapshot snapshot)
{
	if (IsMVCCSnapshot(snapshot))
		UnregisterSnapshot(snapshot);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
}

/*
 * Start the workers; NULL (build serially) when none is granted or none
 * started. meta: the metapage as initialised, with the options.
 */
LshBuildLeader *
lsh_parallel_begin(Relation heap, Relation index, IndexInfo *indexInfo, const LshMetaPageData *meta,
				   bool have_params)
{
	int			request;
	bool		leaderparticipates = parallel_leader_participation;
	int			scantuplesortstates;
	ParallelContext *pcxt;
	Snapshot	snapshot;
	Size		estshared;
	Size		estsort;
	LshBuildShared *shared;
	Sharedsort *sharedsort;
	LshBuildLeader *leader;
	BufferUsage *bufferusage;
	WalUsage   *walusage;
	int			querylen = 0;

	if (!IsNormalProcessingMode() || RelationUsesLocalBuffers(heap))
		return NULL;

	/*
	 * As for a btree: the table's size, its parallel_workers storage
	 * parameter (0 keeps a build serial) and maintenance_work_mem decide. On
	 * an idle 2-core machine one worker already shortens a build
	 * (BENCHMARKS.md, "Index build").
	 */
	request = plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index));
	if (request <= 0)
		return NULL;

	EnterParallelMode();
	pcxt = CreateParallelContext("minhash", "lsh_parallel_build_main", request);
	scantuplesortstates = leaderparticipates ? request + 1 : request;

	/* a concurrent build sees an MVCC snapshot; a plain one every tuple (SnapshotAny) */
	if (!indexInfo->ii_Concurrent)
		snapshot = SnapshotAny;
	else
		snapshot = RegisterSnapshot(GetTransactionSnapshot());

	estshared = BUFFERALIGN(sizeof(LshBuildShared)) + table_parallelscan_estimate(heap, snapshot);
	estsort = tuplesort_estimate_shared(scantuplesortstates);
	shm_toc_estimate_chunk(&pcxt->estimator, estshared);
	shm_toc_estimate_chunk(&pcxt->estimator, estsort);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_estimate_keys(&pcxt->estimator, 4);
	if (debug_query_string)
	{
		querylen = strlen(debug_query_string);
		shm_toc_estimate_chunk(&pcxt->estimator, querylen + 1);
		shm_toc_estimate_keys(&pcxt->estimator, 1);
	}

	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		lsh_parallel_cleanup(pcxt, snapshot);
		return NULL;
	}

	shared = (LshBuildShared *) shm_toc_allocate(pcxt->toc, estshared);
	memset(shared, 0, sizeof(LshBuildShared));
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isconcurrent = indexInfo->ii_Concurrent;
	shared->use_wal = RelationNeedsWAL(index);
	shared->scantuplesortstates = scantuplesortstates;
	SpinLockInit(&shared->mutex);
	shared->meta = *meta;
	/* known before the scan when the leader found a live row (lsh_build_live_params) */
	shared->have_params = have_params;
	shared->free_head = InvalidBlockNumber;
	table_parallelscan_initialize(heap, LshSharedScan(shared), snapshot);

	sharedsort = (Sharedsort *) shm_toc_allocate(pcxt->toc, estsort);
	tuplesort_initialize_shared(sharedsort, scantuplesortstates, pcxt->seg);

	shm_toc_insert(pcxt->toc, LSH_KEY_SHARED, shared);
	shm_toc_insert(pcxt->toc, LSH_KEY_TUPLESORT, sharedsort);
	if (debug_query_string)
	{
		char	   *sqltext = (char *) shm_toc_allocate(pcxt->toc, querylen + 1);

		memcpy(sqltext, debug_query_string, querylen + 1);
		shm_toc_insert(pcxt->toc, LSH_KEY_QUERY_TEXT, sqltext);
	}
	bufferusage = (BufferUsage *) shm_toc_allocate(pcxt->toc,
												   mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, LSH_KEY_BUFFER_USAGE, bufferusage);
	walusage = (WalUsage *) shm_toc_allocate(pcxt->toc, mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, LSH_KEY_WAL_USAGE, walusage);

	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			(errmsg_internal("lsh build of \"%s\": %d of %d parallel workers launched",
							 RelationGetRelationName(index), pcxt->nworkers_launched, request)));
	if (pcxt->nworkers_launched == 0)
	{
		WaitForParallelWorkersToFinish(pcxt);
		lsh_parallel_cleanup(pcxt, snapshot);
		return NULL;
	}

	leader = (LshBuildLeader *) palloc0(sizeof(LshBuildLeader));
	leader->pcxt = pcxt;
	leader->heap = heap;
	leader->index = index;
	leader->leaderparticipates = leaderparticipates;
	leader->nparticipanttuplesorts = pcxt->nworkers_launched + (leaderparticipates ? 1 : 0);
	leader->shared = shared;
	leader->sharedsort = sharedsort;
	leader->snapshot = snapshot;
	leader->bufferusage = bufferusage;
	leader->walusage = walusage;
	return leader;
}

/*
 * The leader's part of the scan: take part (reporting the heap scan's
 * progress) unless parallel_leader_participation is off, wait for the
 * workers, then gather their counts into st and set st->sort to the merge of
 * every participant's run. Returns the heap tuples seen.
 */
double
lsh_parallel_scan(LshBuildLeader *leader, LshBuildState *st, IndexInfo *indexInfo)
{
	LshBuildShared *shared = leader->shared;
	SortCoordinate coordinate;

	if (leader->leaderparticipates)
		lsh_participate(shared, leader->sharedsort, leader->heap, leader->index, indexInfo,
						maintenance_work_mem / shared->scantuplesortstates, true);
	/* errors of the workers are raised here */
	WaitForParallelWorkersToFinish(leader->pcxt);
	for (int i = 0; i < leader->pcxt->nworkers_launched; i++)
		InstrAccumParallelQuery(&leader->bufferusage[i], &leader->walusage[i]);

	if (shared->nparticipantsdone != leader->nparticipanttuplesorts)
		elog(ERROR, "lsh build: %d of %d participants finished",
			 shared->nparticipantsdone, leader->nparticipanttuplesorts);
	if (shared->have_params)
	{
		st->meta = shared->meta;
		lsh_meta_params(&st->meta, &st->params);
		st->have_params = true;
	}
	st->meta.nslots = shared->nslots;
	st->meta.free_head = shared->free_head;
	st->index_tuples = shared->index_tuples;
	st->nentries = shared->nentries;
	if (shared->brokenhotchain)
		indexInfo->ii_BrokenHotChain = true;

	coordinate = (SortCoordinate) palloc0(sizeof(SortCoordinateData));
	coordinate->isWorker = false;
	coordinate->nParticipants = leader->nparticipanttuplesorts;
	coordinate->sharedsort = leader->sharedsort;
	st->sort = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
									 maintenance_work_mem, coordinate, TUPLESORT_NONE);
	return shared->reltuples;
}

/* After the leader has read the merged sort: the shared file set and workers go. */
void
lsh_parallel_end(LshBuildLeader *leader)
{
	lsh_parallel_cleanup(leader->pcxt, leader->snapshot);
	pfree(leader);
}
