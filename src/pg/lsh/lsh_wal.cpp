/*
 * Generic WAL records built from the byte ranges the caller changed (see
 * lsh_wal.h for why and how to use them).
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh_wal.h"

extern "C" {
#include "access/xloginsert.h"
#include "access/rmgr.h"
#include "miscadmin.h"
#include "storage/bufpage.h"
#include "utils/memutils.h"
}

/*
 * The fragments of one record, (offset, length, bytes) each as
 * generic_redo reads them: at most a page of bytes and a header per range,
 * per page. Allocated once per backend, outside any critical section.
 */
#define LSH_WAL_DELTA_MAX	(BLCKSZ + LSH_WAL_MAX_RANGES * 2 * sizeof(uint16))

static char *wal_delta = NULL;

void
lsh_wal_begin(LshWalRecord *r, Relation index)
{
	if (wal_delta == NULL)
		wal_delta = (char *) MemoryContextAlloc(TopMemoryContext,
												LSH_WAL_MAX_PAGES * LSH_WAL_DELTA_MAX);
	r->logged = RelationNeedsWAL(index);
	r->npages = 0;
	START_CRIT_SECTION();
}

int
lsh_wal_page(LshWalRecord *r, Buffer buf, bool fresh)
{
	LshWalPage *p;

	for (int i = 0; i < r->npages; i++)
	{
		if (r->pages[i].buf == buf)
		{
			r->pages[i].fresh |= fresh;
			return i;
		}
	}
	/* a caller's bug, inside a critical section: PANIC rather than log half a change */
	if (r->npages == LSH_WAL_MAX_PAGES)
		elog(PANIC, "lsh WAL record: more than %d pages", LSH_WAL_MAX_PAGES);
	p = &r->pages[r->npages];
	p->buf = buf;
	p->fresh = fresh;
	p->nranges = 0;
	return r->npages++;
}

void
lsh_wal_changed(LshWalRecord *r, int page, const void *at, Size len)
{
	LshWalPage *p = &r->pages[page];
	const char *base = (const char *) BufferGetPage(p->buf);
	Size		off = (Size) ((const char *) at - base);

	if ((const char *) at < base || off + len > BLCKSZ)
		elog(PANIC, "lsh WAL record: a changed range outside its page");
	if (len == 0 || p->fresh)
		return;
	if (p->nranges == LSH_WAL_MAX_RANGES)
	{
		/* out of ranges: widen the last one to cover this one too (correct, only longer) */
		LshWalRange *last = &p->ranges[p->nranges - 1];
		Size		lo = Min((Size) last->offset, off);
		Size		hi = Max((Size) last->offset + last->length, off + len);

		last->offset = (uint16) lo;
		last->length = (uint16) (hi - lo);
		return;
	}
	p->ranges[p->nranges].offset = (uint16) off;
	p->ranges[p->nranges].length = (uint16) len;
	p->nranges++;
}

void
lsh_wal_appended(LshWalRecord *r, int page, LocationIndex old_lower)
{
	PageHeader	hdr = (PageHeader) BufferGetPage(r->pages[page].buf);

	if (hdr->pd_lower == old_lower)
		return;
	lsh_wal_changed(r, page, (char *) hdr + old_lower, hdr->pd_lower - old_lower);
	lsh_wal_changed(r, page, &hdr->pd_lower, sizeof(hdr->pd_lower));
}

/*
 * The page's ranges as fragments into out: sorted, overlapping or adjacent
 * ones joined, the hole (pd_lower..pd_upper) left out as replay zeroes it.
 */
static Size
page_delta(LshWalPage *p, char *out)
{
	const char *page = (const char *) BufferGetPage(p->buf);
	PageHeader	hdr = (PageHeader) page;
	Size		n = 0;
	int			k = p->nranges;

	/* insertion sort: a handful of ranges */
	for (int i = 1; i < k; i++)
	{
		LshWalRange x = p->ranges[i];
		int			j = i - 1;

		while (j >= 0 && p->ranges[j].offset > x.offset)
		{
			p->ranges[j + 1] = p->ranges[j];
			j--;
		}
		p->ranges[j + 1] = x;
	}
	for (int i = 0; i < k;)
	{
		Size		lo = p->ranges[i].offset;
		Size		hi = lo + p->ranges[i].length;
		uint16		off16;
		uint16		len16;

		for (i++; i < k && p->ranges[i].offset <= hi; i++)
			hi = Max(hi, (Size) p->ranges[i].offset + p->ranges[i].length);
		/* nothing inside the hole needs logging: replay zeroes it */
		if (lo >= hdr->pd_lower && hi <= hdr->pd_upper)
			continue;
		off16 = (uint16) lo;
		len16 = (uint16) (hi - lo);
		memcpy(out + n, &off16, sizeof(off16));
		n += sizeof(off16);
		memcpy(out + n, &len16, sizeof(len16));
		n += sizeof(len16);
		memcpy(out + n, page + lo, hi - lo);
		n += hi - lo;
	}
	return n;
}

XLogRecPtr
lsh_wal_finish(LshWalRecord *r)
{
	XLogRecPtr	lsn = InvalidXLogRecPtr;

	for (int i = 0; i < r->npages; i++)
		MarkBufferDirty(r->pages[i].buf);
	if (r->logged)
	{
		XLogBeginInsert();
		for (int i = 0; i < r->npages; i++)
		{
			LshWalPage *p = &r->pages[i];

			if (p->fresh)
				XLogRegisterBuffer(i, p->buf, REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
			else
			{
				char	   *delta = wal_delta + (Size) i * LSH_WAL_DELTA_MAX;
				Size		len = page_delta(p, delta);

				XLogRegisterBuffer(i, p->buf, REGBUF_STANDARD);
				if (len > 0)
					XLogRegisterBufData(i, delta, (uint32) len);
			}
		}
		lsn = XLogInsert(RM_GENERIC_ID, 0);
		for (int i = 0; i < r->npages; i++)
			PageSetLSN(BufferGetPage(r->pages[i].buf), lsn);
	}
	END_CRIT_SECTION();
	return lsn;
}
