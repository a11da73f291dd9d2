/*
 * jaccard(anyarray, anyarray): the exact Jaccard similarity of two sets, the
 * reference the estimate is judged against. Elements are compared by the
 * bytes minhash(anyarray) hashes (element.cpp: the UTF-8 text form of
 * integers, text types and others whose output reads no setting, the binary
 * or hashed form of the rest), NULLs are ignored,
 * duplicates count once, and two empty sets are identical.
 *
 * Each element becomes (64-bit hash, pointer, length) in palloc'd memory; the
 * core sorts those by hash and compares bytes only between equal hashes, so
 * the result is exact while no string is copied. The core polls
 * InterruptPending and allocates nothing: all memory is PostgreSQL's.
 */
#include "pg/pg_prelude.h"

#include "core/hash.h"
#include "core/jaccard.h"
#include "pg/core_call.h"
#include "pg/minhash.h"

extern "C" {
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(minhash_jaccard_array);
}

/*
 * The non-NULL elements of arr with their hashes. Their bytes stay
 * allocated until the call ends: the core compares them.
 */
static minhash::HashedElement *
collect_elements(ArrayType *arr, ElementText *et, size_t *count)
{
	int			nitems = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	/* an array may hold up to MaxArraySize elements: more than MaxAllocSize / 24 */
	minhash::HashedElement *out = (minhash::HashedElement *)
		MemoryContextAllocHuge(CurrentMemoryContext,
							   sizeof(minhash::HashedElement) * (nitems > 0 ? nitems : 1));
	ArrayIterator it = array_create_iterator(arr, 0, NULL);
	Datum		value;
	bool		isnull;
	size_t		n = 0;

	while (array_iterate(it, &value, &isnull))
	{
		void	   *to_free;
		char		scratch[ELEMENT_SCRATCH_SIZE];

		if (isnull)
			continue;
		out[n].data = element_bytes(et, value, &out[n].len, &to_free, scratch);
		/* the core compares the bytes after the loop: keep them */
		if (out[n].data == scratch)
			out[n].data = (const char *) memcpy(palloc(out[n].len), scratch, out[n].len);
		out[n].hash = minhash::hash_bytes(out[n].data, out[n].len);
		n++;
		if ((n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	array_free_iterator(it);
	*count = n;
	return out;
}

extern "C" Datum
minhash_jaccard_array(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *b = PG_GETARG_ARRAYTYPE_P(1);
	ElementText *et = (ElementText *) fcinfo->flinfo->fn_extra;
	minhash::HashedElement *la,
			   *lb,
			   *scratch;
	size_t		na,
				nb;
	double		result;

	/* Both arrays have the same element type: anyarray resolves to one type. */
	if (et == NULL || et->typid != ARR_ELEMTYPE(a))
	{
		if (et == NULL)
			et = (ElementText *) MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(ElementText));
		element_text_init(et, ARR_ELEMTYPE(a), fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = et;
	}
	la = collect_elements(a, et, &na);
	lb = collect_elements(b, et, &nb);
	scratch = (minhash::HashedElement *)
		MemoryContextAllocHuge(CurrentMemoryContext,
							   sizeof(minhash::HashedElement) * Max(Max(na, nb), 1));

	/*
	 * The core stops when InterruptPending is set, leaving both lists whole
	 * (reordered): call_core_until_done services the interrupt and, if the
	 * query goes on, calls again. It allocates nothing: never TooLarge.
	 */
	call_core_until_done([&](minhash::InterruptFlag interrupt) noexcept {
		return minhash::jaccard_exact(la, na, lb, nb, scratch, interrupt, &result);
	});

	PG_RETURN_FLOAT8(result);
}
