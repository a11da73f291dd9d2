/*
 * Between the all-pairs walk (pairs_walk.cpp: the verification of band
 * groups) and its partition-cursor merge (pairs_merge.cpp: every part's
 * leaves in key order, gathered into band groups): the merge hands the walk
 * each group of two rows or more.
 */
#ifndef MINHASH_PG_PAIRS_MERGE_H
#define MINHASH_PG_PAIRS_MERGE_H

#include "pg/pairs/pairs.h"

extern "C" {
#include "utils/tuplesort.h"
}

/* the row ids of one band group */
typedef struct PairsGroup
{
	bool		open;
	uint32		key;
	uint64	   *ids;			/* global row ids */
	int			n;
	int			cap;
	int			max_ids;		/* beyond this, the ids go to spill */
	Tuplesortstate *spill;
} PairsGroup;

/* pairs_merge.cpp */
typedef struct PairsMerge PairsMerge;

PairsMerge *pairs_merge_begin(PairsRun *run, PairsWalk *walk, bool ranged);
void		pairs_merge_all(PairsMerge *pm);
void		pairs_merge_range(PairsMerge *pm, uint32 lo, uint32 hi);
void		pairs_merge_end(PairsMerge *pm);

/* pairs_walk.cpp: what the merge hands the walk */
void		pairs_verify_group(PairsWalk *w, PairsGroup *g);
/* a leaf's entries, just read: warm what verifying its groups will read */
void		pairs_prefetch_leaf(PairsWalk *w, int part, const LshEntry *e, int n);

#endif
