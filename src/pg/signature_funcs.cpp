/*
 * minhash(doc text, ...) and minhash(anyarray, ...): build a signature.
 *
 * Both cache the hash family in fn_extra: it depends only on (num_perm, seed),
 * which are constants in nearly every query, and deriving it costs 2·k 64-bit
 * mixes -- as much as hashing a short document.
 */
#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(minhash_text);
PG_FUNCTION_INFO_V1(minhash_unknown);
PG_FUNCTION_INFO_V1(minhash_array);
}

/* fn_extra of both functions */
typedef struct SignatureCache
{
	minhash::PermutationFamily *family;
	bool		have_elem;
	ElementText elem;			/* minhash(anyarray) only */
	bool		warned_k;		/* minhash(text): the large-k warning was given */
} SignatureCache;

static SignatureCache *
signature_cache(FunctionCallInfo fcinfo)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(SignatureCache));
	return (SignatureCache *) fcinfo->flinfo->fn_extra;
}

static uint64
seed_arg(FunctionCallInfo fcinfo, int argno)
{
	/* int8 on the SQL side; the same 64 bits as the core's uint64 seed */
	return (uint64) PG_GETARG_INT64(argno);
}

static bool
signature_of_text_helper(const minhash::PermutationFamily *family, const char *doc, size_t len,
						 minhash::ShingleSpec spec, uint32 *values,
						 minhash::InterruptFlag interrupt, minhash::Status *status,
						 CoreError *err) noexcept
{
	try
	{
		minhash::signature_init(values, family->num_perm);
		*status = minhash::signature_of_text(*family, std::string_view(doc, len), spec,
											 values, interrupt);
		return true;
	}
	catch (...)
	{
		minhash_core_error_from_current(err);
		return false;
	}
}

/* The signature of one document; fcinfo only provides the family cache. */
static MinHashSig *
sign_document(FunctionCallInfo fcinfo, text *doc, minhash::ShingleSpec spec,
			  int32 num_perm, uint64 seed)
{
	SignatureCache *cache = signature_cache(fcinfo);
	const minhash::PermutationFamily *family;
	size_t		len;
	const char *utf8;
	MinHashSig *sig;

	minhash_check_num_perm(num_perm);
	family = minhash_family(fcinfo->flinfo->fn_mcxt, &cache->family, num_perm, seed);
	utf8 = minhash_doc_utf8(doc, &len);
	sig = minhash_sig_alloc(num_perm, seed);

	/*
	 * The core polls InterruptPending and stops early; service the interrupt
	 * here, outside any C++ object's lifetime, and start over if it did not
	 * cancel the query.
	 */
	for (;;)
	{
		minhash::Status status;
		CoreError	err;

		if (!signature_of_text_helper(family, utf8, len, spec, sig->values,
									  minhash_interrupt_flag(), &status, &err))
			minhash_report_core_error(&err);
		if (status == minhash::Status::Ok)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	return sig;
}

extern "C" Datum
minhash_text(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	minhash::ShingleSpec spec = minhash_shingle_spec(PG_GETARG_TEXT_PP(1), PG_GETARG_INT32(2));

	minhash_warn_large_k(PG_GETARG_INT32(2), PG_GETARG_TEXT_PP(1),
						 &signature_cache(fcinfo)->warned_k);
	PG_RETURN_MINHASH_P(sign_document(fcinfo, doc, spec, PG_GETARG_INT32(3),
									  seed_arg(fcinfo, 4)));
}

/*
 * minhash('a literal'): with one untyped argument the parser would read the
 * call as the cast 'a literal'::minhash unless a function takes `unknown`
 * exactly. The literal arrives as a C string; sign it with every default.
 */
extern "C" Datum
minhash_unknown(PG_FUNCTION_ARGS)
{
	text	   *doc = cstring_to_text(PG_GETARG_CSTRING(0));
	minhash::ShingleSpec spec;

	spec.unit = minhash::ShingleUnit::Word;
	spec.k = minhash::default_shingle_size(spec.unit);
	PG_RETURN_MINHASH_P(sign_document(fcinfo, doc, spec, minhash::kDefaultNumPerm,
									  minhash::kDefaultSeed));
}

/* Element hashes are folded into the signature this many at a time. */
#define HASH_BATCH 256

extern "C" Datum
minhash_array(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int32		num_perm = PG_GETARG_INT32(1);
	uint64		seed = seed_arg(fcinfo, 2);
	SignatureCache *cache = signature_cache(fcinfo);
	const minhash::PermutationFamily *family;
	MinHashSig *sig;
	ArrayIterator it;
	Datum		value;
	bool		isnull;
	uint64		hashes[HASH_BATCH];
	size_t		n = 0;

	minhash_check_num_perm(num_perm);
	family = minhash_family(fcinfo->flinfo->fn_mcxt, &cache->family, num_perm, seed);
	if (!cache->have_elem || cache->elem.typid != ARR_ELEMTYPE(arr))
	{
		element_text_init(&cache->elem, ARR_ELEMTYPE(arr), fcinfo->flinfo->fn_mcxt);
		cache->have_elem = true;
	}
	sig = minhash_sig_alloc(num_perm, seed);

	/* A set: NULL elements are skipped, repeats change nothing (min is idempotent). */
	it = array_create_iterator(arr, 0, NULL);
	while (array_iterate(it, &value, &isnull))
	{
		if (isnull)
			continue;
		hashes[n++] = element_hash(&cache->elem, value);
		if (n == HASH_BATCH)
		{
			minhash::signature_update(*family, hashes, n, sig->values);
			n = 0;
			CHECK_FOR_INTERRUPTS();
		}
	}
	if (n > 0)
		minhash::signature_update(*family, hashes, n, sig->values);
	array_free_iterator(it);
	PG_RETURN_MINHASH_P(sig);
}
