/*
 * minhash_similar_pairs(index, key_column[, key_type], threshold, exact,
 * text_column, unit, k): every pair of rows whose similarity reaches the
 * threshold, each once, as (key_a, key_b, similarity) with key_a < key_b.
 * The rows come out of one walk of the index (pairs_walk.cpp) into a
 * tuplestore, which spills beyond work_mem.
 */
#include "pg/pg_prelude.h"

#include "pg/citus/citus.h"
#include "pg/pairs/pairs.h"

extern "C" {
#include "funcapi.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(minhash_similar_pairs);
PG_FUNCTION_INFO_V1(minhash_similar_pairs_any);
}

typedef struct PairsOut
{
	Tuplestorestate *store;
	TupleDesc	desc;
} PairsOut;

static void
emit_pair(PairsRun *run, void *arg, const PairsRow *a, const PairsRow *b, double similarity)
{
	PairsOut   *out = (PairsOut *) arg;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = a->key;
	values[1] = b->key;
	values[2] = Float8GetDatum(similarity);
	tuplestore_putvalues(out->store, out->desc, values, nulls);
}

static Datum
similar_pairs(FunctionCallInfo fcinfo, bool polymorphic)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			first = polymorphic ? 3 : 2;
	PairsArgs	args;
	PairsRun	run;
	PairsOut	out;

	/* (index, key_column[, key_type], threshold, exact, text_column, unit, k) */
	pairs_parse_args(fcinfo, &args, "minhash_similar_pairs", polymorphic, first, first + 1);
	if (mh_citus_similar_pairs(fcinfo, &args))
		return (Datum) 0;		/* a Citus table, by distributed SQL */
	InitMaterializedSRF(fcinfo, 0);
	out.store = rsinfo->setResult;
	out.desc = rsinfo->setDesc;

	pairs_begin(&run, &args);
	pairs_walk(&run, emit_pair, &out);
	pairs_end(&run);
	return (Datum) 0;
}

extern "C" Datum
minhash_similar_pairs(PG_FUNCTION_ARGS)
{
	return similar_pairs(fcinfo, false);
}

extern "C" Datum
minhash_similar_pairs_any(PG_FUNCTION_ARGS)
{
	return similar_pairs(fcinfo, true);
}
