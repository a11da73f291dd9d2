/*
 * The pending list of an lsh index (on-disk version 3): fast inserts whose
 * band entries wait to be merged into the tree in bulk, as GIN's fastupdate
 * does (docs/lsh.md, "Fast inserts: the pending list").
 *
 * An insert with fastupdate stores the signature in a data slot, as every
 * insert does, and appends the slot's row id and its band keys to the last
 * pending page, in one WAL record (metapage, data page, pending page[, a new
 * pending page]; lsh_wal.h). Its ~30 band entries, one leaf descent and leaf
 * write each, are left for the merge, which sorts the entries of many rows by
 * band key and appends all those of one leaf in one WAL record.
 *
 * The pending pages' layout is in lsh_page.h.
 *
 * Who sees a pending row: scans read the pending list (keeping the rows of
 * a keyed page whose key in some band falls in the probe's range, as a leaf
 * search would, and every row of a plain page) BEFORE probing the tree; the merge puts a row's entries in the
 * tree BEFORE it removes the row from the list. So a scan finds every row
 * committed before it started, in the list or in the tree (possibly both:
 * candidates are deduplicated by row id). The pairs walk reads the list
 * before the leaf level, as one more sorted cursor of entries.
 *
 * The merge is serialised by a heavyweight lock on the metapage's block
 * (LockPage, as GIN's ginInsertCleanup): inserts over the limit try it
 * (ConditionalLockPage) and go on if someone else merges; VACUUM and
 * minhash_lsh_clean_pending_list wait. A round closes the tail page
 * (LSH_PENDING_CLOSED: later inserts start a new page), reads the closed
 * pages, merges their rows and unlinks them. A crash between the tree
 * inserts and the unlink leaves metapage.merge_upto set: the next merge
 * then drops the entries already in the tree (looked for in every leaf
 * that may hold their key), so none is ever doubled.
 */
#ifndef MINHASH_PG_LSH_PENDING_H
#define MINHASH_PG_LSH_PENDING_H

#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"
#include "pg/lsh/lsh_array.h"
#include "pg/lsh/lsh_wal.h"

/* the band keys each pending row of this index carries: its bands, or 0 (plain pages) */
int			lsh_pending_keyed_bands(const LshIndexParams *params);

extern int	lsh_pending_list_limit;	/* GUC minhash.lsh_pending_list_limit, kB */

void		lsh_pending_init(void);

/* does this index take inserts into its pending list now? (metapage locked) */
bool		lsh_pending_usable(Relation index, const LshMetaPageData *meta);
/* the limit in bytes of signatures */
Size		lsh_pending_limit_bytes(Relation index);
/* an insert with fastupdate: the signature's slot and its row on the list, one WAL record (metapage locked) */
void		lsh_pending_insert(Relation index, Buffer metabuf, const MinHashSig *sig, ItemPointer tid);
/* is the list over its limit? (metapage locked; the insert reads it there, no second read) */
bool		lsh_pending_over_limit(Relation index, const LshMetaPageData *meta);
/* merge the whole list; wait: for the merge lock (else give up if it is taken). Rows merged. */
int64		lsh_pending_merge(Relation index, bool wait, bool use_maintenance_mem);

/*
 * the pending row ids (unsorted) added to *ids (scans); walk: the scan's
 * checked reads. metabuf: the metapage, pinned and SHARE-locked by the
 * caller (the scan's own metapage read: no second one); returned pinned and
 * unlocked once the walk holds the head page. lo/hi: the probe's key range
 * of each of the index's bands: a row on a keyed page is added if one of its
 * keys is in its band's range (NULL: every row). True if the rows came
 * from the backend's copy of the list (lsh_pending_cache.h).
 */
bool		lsh_pending_collect(Relation index, LshWalk *walk, Buffer metabuf, LshArray<uint32> *ids,
								const LshIndexParams *params, const uint32 *lo, const uint32 *hi);
/* the band entries of the pending rows that are LIVE, sorted by key (pairs walk) */
LshEntry   *lsh_pending_entries(Relation index, const LshIndexParams *params, int *n);
/*
 * minhash_lsh_check: walk the pending list and its free list (bounded);
 * problems go to report, each pending row id (below nslots_bound) to row,
 * with its band keys on a keyed page (else NULL).
 */
void		lsh_pending_check(Relation index, const LshMetaPageData *meta, uint64 nslots_bound,
							  void (*report) (void *arg, const char *msg),
							  void (*row) (void *arg, uint32 rowid, const uint32 *keys), void *arg,
							  uint64 *pages_seen);

#endif
