/*
 * Hints for the ways minhash(doc, ...) is most often called wrong: its
 * positional order is doc, unit, k, num_perm, seed, and newcomers put a
 * number second (minhash(body, 3)) or num_perm third (minhash(body, 'char',
 * 128), which means k = 128).
 */
#include "pg/pg_prelude.h"

#include "pg/minhash.h"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(minhash_text_int);
}

/*
 * Shingles this long are almost never meant: two texts then share a shingle
 * only where they share a run of 64 words or characters. Such a k is nearly
 * always a number of values written in k's place. The function cannot tell a
 * positional argument from a named one (the planner has reordered them), so
 * it warns either way, once per call site and query (the flag lives in the
 * caller's fn_extra) rather than once per row.
 */
#define MINHASH_SUSPICIOUS_K 64

void
minhash_warn_large_k(int32 k, text *unit, bool *warned)
{
	if (k < MINHASH_SUSPICIOUS_K || *warned)
		return;
	*warned = true;
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg("shingle size k = %d is unusually large", k),
			 errdetail("The arguments of minhash() are, in order, doc, unit, k (the shingle size), num_perm and seed."),
			 errhint("For %d values per signature write minhash(doc, '%s', num_perm => %d).",
					 k, text_to_cstring(unit), k)));
}

/*
 * minhash(doc, 3): a number where the unit goes, the SQL function
 * minhash(text, integer, "any", "any", "any"). Whether 3 was meant as the
 * shingle size or the number of values, the call is a mistake; without this
 * overload the parser reports "function minhash(text, integer) does not
 * exist" (or, for a literal, "could not determine polymorphic type"), which
 * names no way out. Same SQLSTATE as that error, plus the way out.
 */
extern "C" Datum
minhash_text_int(PG_FUNCTION_ARGS)
{
	char		example[32];

	if (PG_ARGISNULL(1))
		strlcpy(example, "3", sizeof(example));
	else
		snprintf(example, sizeof(example), "%d", PG_GETARG_INT32(1));

	/*
	 * minhash(doc, 3, 256): two numbers, most likely the shingle size and
	 * the number of values, as other MinHash libraries take them. The
	 * overload minhash(text, integer, integer, ...) is the one whose third
	 * argument is an integer.
	 */
	if (PG_NARGS() >= 3 && !PG_ARGISNULL(1) && !PG_ARGISNULL(2) &&
		get_fn_expr_argtype(fcinfo->flinfo, 2) == INT4OID)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("the second argument of minhash() is the shingle unit, not a number"),
				 errdetail("The arguments of minhash() are, in order, doc, unit, k (the shingle size), num_perm and seed."),
				 errhint("Name the numbers: minhash(doc, k => %s, num_perm => %d) for shingles of %s units and %d values.",
						 example, PG_GETARG_INT32(2), example, PG_GETARG_INT32(2))));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_FUNCTION),
			 errmsg("the second argument of minhash() is the shingle unit, not a number"),
			 errdetail("The arguments of minhash() are, in order, doc, unit, k (the shingle size), num_perm and seed."),
			 errhint("Name the number: minhash(doc, k => %s) for shingles of %s units, minhash(doc, num_perm => %s) for %s values.",
					 example, example, example, example)));
	PG_RETURN_NULL();
}
