/*
 * WAL for the pages of an lsh build, logged as they are written.
 *
 * Every page a build writes is final when it is written (a data page when
 * full, or a participant's last one with its free-list link already set; a
 * leaf with its high key and right link; an internal page), except the
 * metapage, rewritten at the end. So a participant keeps the pins of the
 * pages it wrote, unlocked, and logs them as full-page images in one WAL
 * record per LSH_BUILD_WAL_BATCH pages (32, all a record can reference) while they
 * are still in shared buffers.
 * Logging the finished index instead (log_newpage_range) read it all back,
 * from disk once it outgrew shared_buffers: 28% of a 10M-row build.
 *
 * Without WAL (an unlogged index, or wal_level = minimal for a relfilenode
 * created in this transaction, which is synced at commit) pages are just
 * released. A record is what log_newpage_range writes (XLOG_FPI, standard
 * page layout), so replay is PostgreSQL's own.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh_build.h"

extern "C" {
#include "access/xloginsert.h"
#include "catalog/pg_control.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
}

/*
 * Every participant of a parallel build keeps a batch pinned: with a tiny
 * shared_buffers (the minimum is 16 buffers) fewer pages go to a record, so
 * the pins never crowd out the buffers the build itself needs.
 */
void
lsh_build_wal_init(LshBuildWal *batch, bool use_wal)
{
	batch->use_wal = use_wal;
	batch->n = 0;
	batch->limit = Max(1, Min(LSH_BUILD_WAL_BATCH, NBuffers / 64));
}

/*
 * Log the batch's pages in one record and release them. Each is locked again
 * for the record (nobody else uses a page of an index being built; the lock
 * is what WAL-logging a buffer asks for) and dirtied inside the critical
 * section, as every WAL-logged change is.
 */
void
lsh_build_wal_flush(LshBuildWal *batch)
{
	XLogRecPtr	lsn;

	if (batch->n == 0)
		return;
	XLogEnsureRecordSpace(LSH_BUILD_WAL_BATCH - 1, 0);
	for (int i = 0; i < batch->n; i++)
		LockBuffer(batch->bufs[i], BUFFER_LOCK_EXCLUSIVE);

	START_CRIT_SECTION();
	XLogBeginInsert();
	for (int i = 0; i < batch->n; i++)
	{
		MarkBufferDirty(batch->bufs[i]);
		XLogRegisterBuffer((uint8) i, batch->bufs[i], REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
	}
	lsn = XLogInsert(RM_XLOG_ID, XLOG_FPI);
	for (int i = 0; i < batch->n; i++)
		PageSetLSN(BufferGetPage(batch->bufs[i]), lsn);
	END_CRIT_SECTION();

	for (int i = 0; i < batch->n; i++)
		UnlockReleaseBuffer(batch->bufs[i]);
	batch->n = 0;
}

/*
 * A page written in its final form: buf is pinned, unlocked and dirty; the
 * batch takes the pin.
 */
void
lsh_build_wal_add(LshBuildWal *batch, Buffer buf)
{
	if (!batch->use_wal)
	{
		ReleaseBuffer(buf);
		return;
	}
	batch->bufs[batch->n++] = buf;
	if (batch->n >= batch->limit)
		lsh_build_wal_flush(batch);
}
