/*
 * Small WAL records for the changes an insert or a merge makes, in the
 * format of PostgreSQL's generic resource manager (access/generic_xlog.h).
 *
 * GenericXLog finds what changed by copying each page it is given and
 * comparing the copy with the page byte by byte: for a leaf that gains a few
 * entries or a data page that gains a slot, 16 kB of copies and up to 8 kB
 * of comparisons to log some tens of bytes -- most of an insert's and a
 * merge's CPU (BENCHMARKS.md, "Fast ingest"). The hot paths know exactly
 * which bytes they change (an appended entry, pd_lower, a slot, a few
 * metapage fields), so they change the pages in place and name those ranges;
 * the record is then what GenericXLog would have written, and replay, full
 * page images and standbys are the generic manager's own (generic_redo:
 * apply the fragments, zero the hole between pd_lower and pd_upper).
 *
 * Use, with every page exclusively locked and nothing left that can fail:
 *
 *     LshWalRecord r;
 *     lsh_wal_begin(&r, index);          -- enters a critical section
 *     int p = lsh_wal_page(&r, buf, false);
 *     ... change the page in place ...
 *     lsh_wal_changed(&r, p, &field, sizeof(field));   -- each range changed
 *     lsh_wal_finish(&r);                -- logs, sets LSNs, leaves it
 *
 * A page registered as new (fresh = true) is logged whole. Ranges are read
 * at finish, so a field changed twice is named once. Pages keep the hole
 * between pd_lower and pd_upper zeroed (appends only write below pd_lower),
 * as replay assumes.
 */
#ifndef MINHASH_PG_LSH_WAL_H
#define MINHASH_PG_LSH_WAL_H

#include "pg/pg_prelude.h"

extern "C" {
#include "access/generic_xlog.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
}

#define LSH_WAL_MAX_PAGES	MAX_GENERIC_XLOG_PAGES
#define LSH_WAL_MAX_RANGES	16

typedef struct LshWalRange
{
	uint16		offset;
	uint16		length;
} LshWalRange;

typedef struct LshWalPage
{
	Buffer		buf;
	bool		fresh;			/* logged as a full image */
	int			nranges;
	LshWalRange ranges[LSH_WAL_MAX_RANGES];
} LshWalPage;

typedef struct LshWalRecord
{
	bool		logged;			/* RelationNeedsWAL */
	int			npages;
	LshWalPage	pages[LSH_WAL_MAX_PAGES];
} LshWalRecord;

void		lsh_wal_begin(LshWalRecord *r, Relation index);
int			lsh_wal_page(LshWalRecord *r, Buffer buf, bool fresh);
void		lsh_wal_changed(LshWalRecord *r, int page, const void *at, Size len);
/* entries appended to the page since its pd_lower was old_lower: them and pd_lower */
void		lsh_wal_appended(LshWalRecord *r, int page, LocationIndex old_lower);
XLogRecPtr	lsh_wal_finish(LshWalRecord *r);

#endif
