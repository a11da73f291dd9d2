/*
 * minhash_similar_pairs and minhash_clusters on a Citus table, between its
 * three files: citus_pairs_plan.cpp checks the call and fills the plan,
 * citus_pairs_run.cpp runs the distributed statements (steps A-D, described
 * there) and hands each verified pair to a callback, citus_pairs.cpp turns
 * pairs into the functions' results.
 */
#ifndef MINHASH_PG_CITUS_CITUS_PAIRS_H
#define MINHASH_PG_CITUS_CITUS_PAIRS_H

#include "pg/citus/citus.h"
#include "pg/pairs/pairs.h"

extern "C" {
#include "storage/itemptr.h"
}

/* What the distributed statements need to know. */
typedef struct CitusPairsPlan
{
	const char *funcname;
	Oid			relid;
	const char *table;			/* qualified, quoted */
	const char *dist;			/* distribution column, quoted */
	const char *dist_type;		/* its type, qualified, with typmod and COLLATE */
	const char *dist_eq;		/* its equality operator, OPERATOR(schema.=) */
	const char *sig;			/* the indexed column, quoted */
	const char *key;			/* the key column, quoted */
	const char *key_type;		/* the type keys are returned as, qualified */
	const char *key_column;		/* the same with the key's collation, for a column */
	Oid			key_typid;
	Oid			key_collation;
	bool		key_ordered;	/* key_type has a btree order: key_a < key_b */
	const char *keep;			/* minhash_clusters' keep column, quoted, or NULL */
	const char *keep_type;		/* its base type, qualified, with typmod and COLLATE */
	Oid			keep_typid;		/* that base type */
	Oid			keep_collation;	/* the column's */
	bool		exact;			/* exact => true */
	const char *text;			/* text_column, quoted */
	const char *shingles;		/* the arguments k, unit of minhash_shingles */
	int64		shingle_limit;	/* more distinct shingles: the estimate verifies */
	const char *ext;			/* the extension's schema, quoted */
	Oid			scratch_nsp;
	int			bands;
	int			rows;
	int			depth;
	int			nshards;
	double		threshold;
} CitusPairsPlan;

/* One verified pair as the final statement returns it. */
typedef struct CitusPair
{
	Datum		key_a;
	Datum		key_b;
	double		similarity;
	int32		hash_a;			/* for clusters: the rows' names */
	ItemPointer tid_a;
	int32		hash_b;
	ItemPointer tid_b;
	Datum		keep_a;			/* with a keep column */
	bool		keep_a_isnull;
	Datum		keep_b;
	bool		keep_b_isnull;
} CitusPair;

typedef void (*CitusPairFn) (const CitusPair *pair, void *arg);

/*
 * Is the index's table a Citus table, and can its pairs be computed here?
 * Fills *plan, or raises the error that says what is not supported.
 */
bool		citus_pairs_plan(const PairsArgs *args, const char *funcname, CitusPairsPlan *plan);

/* Runs steps A-D and calls fn for each verified pair; with_rows adds the rows' names (clusters). */
void		citus_pairs_run(const CitusPairsPlan *plan, bool with_rows, CitusPairFn fn, void *arg);

#endif
