/*
 * A backend's copy of the band keys of an lsh index's pending list, grouped
 * by band and key, for a session whose scans read the same list again and
 * again.
 *
 * Every scan filters every pending row (lsh_pending_collect): 30 band keys a
 * row, so a full 1 MB list of 2,000 rows costs a query about as much as the
 * tree probe itself. Between two merges the list only grows at its tail, so
 * a backend that has scanned it often enough keeps its rows' keys by band,
 * bucketed within the band's span of keys (about four rows a bucket), and a scan then reads
 * the buckets of its probe's range in each band and filters only the rows
 * appended since. The copy is built when the rows the backend's scans
 * filtered one by one since the list last changed at its head reach
 * LSH_PENDING_CACHE_RENT times the list (so building costs about what the
 * filtering it saves has already cost: a session of a few queries never
 * builds it), and only while it fits in work_mem. EXPLAIN ANALYZE counts the
 * scans that read a copy.
 *
 * A merge round bumps the metapage's pending_merges in the record that
 * unlinks its pages; a copy whose count, list head or relation file differs
 * is dropped. The rows it holds are then the list's first rows: the rows
 * after them start on its last page, at the count read there. Every scan
 * with a copy also reads the list's head and that page, and finds the
 * copy's first and last rows where they were (else it drops the copy and
 * reads the whole list): a library that does not count its merges (1.1,
 * still loaded in older backends after an upgrade) cannot leave a copy in
 * use that its merge made stale, for merged rows keep their slots, so the
 * rows of a list filled again have other row ids.
 */
#ifndef MINHASH_PG_LSH_PENDING_CACHE_H
#define MINHASH_PG_LSH_PENDING_CACHE_H

#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"
#include "pg/lsh/lsh_array.h"

typedef struct LshPendingCache LshPendingCache;

/* this backend's entry for the index, reset if the list changed at its head (metapage locked) */
LshPendingCache *lsh_pending_cache_for(Relation index, const LshMetaPageData *meta);
/* does the entry hold a copy of the list's first rows, for this index's bands? */
bool		lsh_pending_cache_built(const LshPendingCache *c, const LshIndexParams *params);
/* rows the copy holds (the list's first rows); its last page, the rows read on it and the last one's id */
uint64		lsh_pending_cache_rows(const LshPendingCache *c);
BlockNumber lsh_pending_cache_last(const LshPendingCache *c, int *last_count, uint32 *last_rowid);
/* the row id of the list's first row when the copy was made */
uint32		lsh_pending_cache_first(const LshPendingCache *c);
/* rows a scan filtered one by one */
void		lsh_pending_cache_count(LshPendingCache *c, uint64 rows);
/* should this scan build the copy? (metapage locked) */
bool		lsh_pending_cache_should_build(const LshPendingCache *c, const LshMetaPageData *meta,
										   const LshIndexParams *params);
/* building: begin, every pending page from the head in list order, finish */
void		lsh_pending_cache_begin(LshPendingCache *c, const LshIndexParams *params);
void		lsh_pending_cache_add(LshPendingCache *c, Page page, BlockNumber blkno);
void		lsh_pending_cache_finish(LshPendingCache *c);
/* the copy's row ids with a key in its band's range [lo, hi], and every plain page's row */
void		lsh_pending_cache_probe(const LshPendingCache *c, const uint32 *lo, const uint32 *hi,
									LshArray<uint32> *ids);
/* drop the copy (what a scan read no longer continues it) */
void		lsh_pending_cache_forget(LshPendingCache *c);

#endif
