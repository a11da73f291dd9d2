/*
 * jaccard(anyarray, anyarray): the exact Jaccard similarity of two sets, the
 * reference the estimate is judged against. Elements are compared by their
 * UTF-8 text form (as minhash(anyarray) hashes them), NULLs are ignored,
 * duplicates count once, and two empty sets are identical.
 */
#include <string>
#include <vector>

#include "core/jaccard.h"
#include "pg/minhash.h"

extern "C" {
#include "miscadmin.h"
#include "utils/array.h"

PG_FUNCTION_INFO_V1(minhash_jaccard_array);
}

/* An array's elements as text: pointers and lengths into palloc'd memory */
typedef struct ElementList
{
	int			count;
	const char **str;
	size_t	   *len;
} ElementList;

static void
collect_elements(ArrayType *arr, ElementText *et, ElementList *out)
{
	int			nitems = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	ArrayIterator it = array_create_iterator(arr, 0, NULL);
	Datum		value;
	bool		isnull;
	int			n = 0;

	out->str = (const char **) palloc(sizeof(char *) * (nitems > 0 ? nitems : 1));
	out->len = (size_t *) palloc(sizeof(size_t) * (nitems > 0 ? nitems : 1));
	while (array_iterate(it, &value, &isnull))
	{
		void	   *to_free;

		if (isnull)
			continue;
		/* kept until the call ends: the strings are compared after the loop */
		out->str[n] = element_text(et, value, &out->len[n], &to_free);
		n++;
		if ((n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	array_free_iterator(it);
	out->count = n;
}

static bool
jaccard_exact_helper(const ElementList *a, const ElementList *b, double *result,
					 CoreError *err) noexcept
{
	try
	{
		std::vector<std::string> sa, sb;

		sa.reserve(a->count);
		for (int i = 0; i < a->count; i++)
			sa.emplace_back(a->str[i], a->len[i]);
		sb.reserve(b->count);
		for (int i = 0; i < b->count; i++)
			sb.emplace_back(b->str[i], b->len[i]);
		*result = minhash::jaccard_exact(std::move(sa), std::move(sb));
		return true;
	}
	catch (...)
	{
		minhash_core_error_from_current(err);
		return false;
	}
}

extern "C" Datum
minhash_jaccard_array(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *b = PG_GETARG_ARRAYTYPE_P(1);
	ElementText *et = (ElementText *) fcinfo->flinfo->fn_extra;
	ElementList la, lb;
	double		result;
	CoreError	err;

	/* Both arrays have the same element type: anyarray resolves to one type. */
	if (et == NULL || et->typid != ARR_ELEMTYPE(a))
	{
		if (et == NULL)
			et = (ElementText *) MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(ElementText));
		element_text_init(et, ARR_ELEMTYPE(a), fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = et;
	}
	collect_elements(a, et, &la);
	collect_elements(b, et, &lb);

	if (!jaccard_exact_helper(&la, &lb, &result, &err))
		minhash_report_core_error(&err);
	PG_RETURN_FLOAT8(result);
}
