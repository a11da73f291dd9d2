/*
 * Between the all-pairs walk (pairs_walk.cpp: band groups, verification) and
 * its partition-cursor merge (pairs_merge.cpp: every part's leaves in key
 * order): the merge hands the walk each band group as a start, the group's
 * entries part by part, and an end.
 */
#ifndef MINHASH_PG_PAIRS_MERGE_H
#define MINHASH_PG_PAIRS_MERGE_H

#include "pg/pairs/pairs.h"

/* pairs_merge.cpp */
typedef struct PairsMerge PairsMerge;

PairsMerge *pairs_merge_begin(PairsRun *run, PairsWalk *walk, bool ranged);
void		pairs_merge_all(PairsMerge *pm);
void		pairs_merge_range(PairsMerge *pm, uint32 lo, uint32 hi);
void		pairs_merge_end(PairsMerge *pm);

/* pairs_walk.cpp: what the merge hands the walk */
void		pairs_group_start(PairsWalk *w, uint32 key);
void		pairs_group_add(PairsWalk *w, int part, const LshEntry *e, int n);
void		pairs_group_finish(PairsWalk *w);
/* a leaf's entries, just read: warm what verifying its groups will read */
void		pairs_prefetch_leaf(PairsWalk *w, int part, const LshEntry *e, int n);

#endif
