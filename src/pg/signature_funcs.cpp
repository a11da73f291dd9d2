/*
 * minhash(doc text, ...) and minhash(anyarray, ...): build a signature, in
 * any family (native, datasketch, oph) and at any width (bits => 32, 16, 8:
 * the 32-bit signature narrowed to its values' low bits, core/bbit.h); a
 * document's accents or punctuation may be ignored (ignore => ..., core/shingle.h).
 *
 * Both cache the hash family in fn_extra: it depends only on (num_perm, seed),
 * which are constants in nearly every query, and deriving it costs 2·k 64-bit
 * mixes -- as much as hashing a short document. (The oph family derives one
 * key from the seed: nothing to cache.)
 */
#include "pg/pg_prelude.h"

#include "core/oph.h"
#include "core/signature.h"
#include "pg/core_call.h"
#include "pg/minhash.h"

extern "C" {
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(minhash_text);
PG_FUNCTION_INFO_V1(minhash_text_family);
PG_FUNCTION_INFO_V1(minhash_text_config);
PG_FUNCTION_INFO_V1(minhash_unknown);
PG_FUNCTION_INFO_V1(minhash_array);
PG_FUNCTION_INFO_V1(minhash_array_family);
PG_FUNCTION_INFO_V1(minhash_text_bits);
PG_FUNCTION_INFO_V1(minhash_text_config_bits);
PG_FUNCTION_INFO_V1(minhash_array_bits);
PG_FUNCTION_INFO_V1(minhash_text_ignore);
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

/* The hash family for a call, checked and cached in fn_extra */
static const minhash::PermutationFamily *
call_family(FunctionCallInfo fcinfo, int32 num_perm, uint64 seed, int kind)
{
	SignatureCache *cache = signature_cache(fcinfo);

	minhash_check_num_perm(num_perm);
	minhash_check_family_seed(kind, seed);
	return minhash_family(fcinfo->flinfo->fn_mcxt, &cache->family, num_perm, seed, kind);
}

/* The oph family for a call (one mix of the seed) */
static minhash::OphFamily
call_oph(int32 num_perm, uint64 seed)
{
	minhash::OphFamily family;

	minhash_check_num_perm(num_perm);
	minhash::init_oph_family(&family, num_perm, seed);
	return family;
}

[[noreturn]] static void
document_too_large(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("document too large to shingle")));
}

/*
 * The signature of one document at a width (a minhash::ValueWidth code);
 * fcinfo only provides the family cache.
 */
static MinHashSig *
sign_document(FunctionCallInfo fcinfo, text *doc, minhash::ShingleSpec spec,
			  int32 num_perm, uint64 seed, int kind, int width = MINHASH_WIDTH_32)
{
	size_t		len;
	const char *utf8;
	MinHashSig *sig;

	if (kind == MINHASH_FAMILY_OPH)
	{
		const minhash::OphFamily family = call_oph(num_perm, seed);

		utf8 = minhash_doc_utf8(doc, &len);
		sig = minhash_sig_alloc(num_perm, seed, kind);
		/* the undensified sketch, started over after an interrupt */
		if (call_core_until_done([&](minhash::InterruptFlag interrupt) noexcept {
				minhash::signature_init(sig->values, family.num_bins);
				return minhash::oph_sketch_of_text(family, std::string_view(utf8, len), spec,
												   sig->values, interrupt);
			}) != minhash::Status::Ok)
			document_too_large();
		return minhash_sig_narrow(sig, width);
	}

	const minhash::PermutationFamily *family = call_family(fcinfo, num_perm, seed, kind);

	utf8 = minhash_doc_utf8(doc, &len);
	sig = minhash_sig_alloc(num_perm, seed, kind);

	/* Started over after an interrupt: the signature of the same shingles. */
	if (call_core_until_done([&](minhash::InterruptFlag interrupt) noexcept {
			minhash::signature_init(sig->values, family->num_perm);
			return minhash::signature_of_text(*family, std::string_view(utf8, len), spec,
											  sig->values, interrupt);
		}) != minhash::Status::Ok)
		document_too_large();
	return minhash_sig_narrow(sig, width);
}

extern "C" Datum
minhash_text(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	minhash::ShingleSpec spec = minhash_shingle_spec(PG_GETARG_TEXT_PP(1), PG_GETARG_INT32(2));

	minhash_warn_large_k(PG_GETARG_INT32(2), PG_GETARG_TEXT_PP(1),
						 &signature_cache(fcinfo)->warned_k);
	PG_RETURN_MINHASH_P(sign_document(fcinfo, doc, spec, PG_GETARG_INT32(3),
									  seed_arg(fcinfo, 4), MINHASH_FAMILY_NATIVE));
}

/* minhash(doc, family, unit, k, num_perm, seed) */
extern "C" Datum
minhash_text_family(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	int			kind = minhash_family_arg(PG_GETARG_DATUM(1));
	minhash::ShingleSpec spec = minhash_shingle_spec(PG_GETARG_TEXT_PP(2), PG_GETARG_INT32(3));

	PG_RETURN_MINHASH_P(sign_document(fcinfo, doc, spec, PG_GETARG_INT32(4),
									  seed_arg(fcinfo, 5), kind));
}

/* The signature of the k-lexeme shingles of lx (lexemes.cpp) at a width */
static MinHashSig *
sign_lexemes(FunctionCallInfo fcinfo, const LexemeText *lx, int k, int32 num_perm, uint64 seed,
			 int kind, int width)
{
	MinHashSig *sig;

	if (kind == MINHASH_FAMILY_OPH)
	{
		const minhash::OphFamily family = call_oph(num_perm, seed);
		minhash::UnitText units = minhash_lexeme_units(lx);

		sig = minhash_sig_alloc(num_perm, seed, kind);
		/* Allocates nothing: Ok, or Interrupted and started over until Ok. */
		call_core_until_done([&](minhash::InterruptFlag interrupt) noexcept {
			minhash::signature_init(sig->values, family.num_bins);
			return minhash::oph_sketch_of_units(family, units, k, sig->values, interrupt);
		});
	}
	else
	{
		const minhash::PermutationFamily *family = call_family(fcinfo, num_perm, seed, kind);

		sig = minhash_sig_alloc(num_perm, seed, kind);
		minhash_lexeme_signature(lx, k, family, sig->values);
	}
	return minhash_sig_narrow(sig, width);
}

/*
 * minhash(doc, config, k, num_perm, seed, family): words are the lexemes of
 * to_tsvector(config, doc) (lexemes.cpp).
 */
extern "C" Datum
minhash_text_config(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	Oid			cfg = PG_GETARG_OID(1);
	int			k = minhash_lexeme_k(PG_GETARG_INT32(2));
	int32		num_perm = PG_GETARG_INT32(3);
	uint64		seed = seed_arg(fcinfo, 4);
	int			kind = minhash_family_arg(PG_GETARG_DATUM(5));
	LexemeText	lx;

	minhash_check_num_perm(num_perm);
	minhash_check_family_seed(kind, seed);
	minhash_lexemes(cfg, doc, &lx);
	PG_RETURN_MINHASH_P(sign_lexemes(fcinfo, &lx, k, num_perm, seed, kind, MINHASH_WIDTH_32));
}

/* minhash(doc, config, bits, family, k, num_perm, seed) */
extern "C" Datum
minhash_text_config_bits(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	Oid			cfg = PG_GETARG_OID(1);
	int			width = minhash_width_arg(PG_GETARG_INT64(2));
	int			kind = minhash_family_arg(PG_GETARG_DATUM(3));
	int			k = minhash_lexeme_k(PG_GETARG_INT32(4));
	int32		num_perm = PG_GETARG_INT32(5);
	uint64		seed = seed_arg(fcinfo, 6);
	LexemeText	lx;

	minhash_check_num_perm(num_perm);
	minhash_check_family_seed(kind, seed);
	minhash_lexemes(cfg, doc, &lx);
	PG_RETURN_MINHASH_P(sign_lexemes(fcinfo, &lx, k, num_perm, seed, kind, width));
}

/* minhash(doc, bits, family, unit, k, num_perm, seed) */
extern "C" Datum
minhash_text_bits(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	int			width = minhash_width_arg(PG_GETARG_INT64(1));
	int			kind = minhash_family_arg(PG_GETARG_DATUM(2));
	minhash::ShingleSpec spec = minhash_shingle_spec(PG_GETARG_TEXT_PP(3), PG_GETARG_INT32(4));

	minhash_warn_large_k(PG_GETARG_INT32(4), PG_GETARG_TEXT_PP(3),
						 &signature_cache(fcinfo)->warned_k);
	PG_RETURN_MINHASH_P(sign_document(fcinfo, doc, spec, PG_GETARG_INT32(5),
									  seed_arg(fcinfo, 6), kind, width));
}

/* minhash(doc, ignore, bits, family, unit, k, num_perm, seed) */
extern "C" Datum
minhash_text_ignore(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	uint8		ignore = minhash_ignore_arg(PG_GETARG_TEXT_PP(1));
	int			width = minhash_width_arg(PG_GETARG_INT64(2));
	int			kind = minhash_family_arg(PG_GETARG_DATUM(3));
	minhash::ShingleSpec spec = minhash_shingle_spec(PG_GETARG_TEXT_PP(4), PG_GETARG_INT32(5));

	spec.ignore = ignore;
	minhash_warn_large_k(PG_GETARG_INT32(5), PG_GETARG_TEXT_PP(4),
						 &signature_cache(fcinfo)->warned_k);
	PG_RETURN_MINHASH_P(sign_document(fcinfo, doc, spec, PG_GETARG_INT32(6),
									  seed_arg(fcinfo, 7), kind, width));
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
									  minhash::kDefaultSeed, MINHASH_FAMILY_NATIVE));
}

/* Element hashes are folded into the signature this many at a time. */
#define HASH_BATCH 256

static MinHashSig *
sign_array(FunctionCallInfo fcinfo, ArrayType *arr, int32 num_perm, uint64 seed, int kind,
		   int width = MINHASH_WIDTH_32)
{
	SignatureCache *cache = signature_cache(fcinfo);
	const minhash::PermutationFamily *family = NULL;
	minhash::OphFamily oph = {};
	MinHashSig *sig;
	ArrayIterator it;
	Datum		value;
	bool		isnull;
	uint64		hashes[HASH_BATCH];
	size_t		n = 0;

	if (kind == MINHASH_FAMILY_OPH)
		oph = call_oph(num_perm, seed);
	else
		family = call_family(fcinfo, num_perm, seed, kind);
	if (!cache->have_elem || cache->elem.typid != ARR_ELEMTYPE(arr))
	{
		element_text_init(&cache->elem, ARR_ELEMTYPE(arr), fcinfo->flinfo->fn_mcxt);
		cache->have_elem = true;
	}
	sig = minhash_sig_alloc(num_perm, seed, kind);

	/* A set: NULL elements are skipped, repeats change nothing (min is idempotent). */
	it = array_create_iterator(arr, 0, NULL);
	while (array_iterate(it, &value, &isnull))
	{
		if (isnull)
			continue;
		hashes[n++] = element_hash(&cache->elem, value, kind);
		if (n == HASH_BATCH)
		{
			if (family != NULL)
				minhash::signature_update(*family, hashes, n, sig->values);
			else
				minhash::oph_update(oph, hashes, n, sig->values);
			n = 0;
			CHECK_FOR_INTERRUPTS();
		}
	}
	if (n > 0 && family != NULL)
		minhash::signature_update(*family, hashes, n, sig->values);
	else if (n > 0)
		minhash::oph_update(oph, hashes, n, sig->values);
	array_free_iterator(it);
	return minhash_sig_narrow(sig, width);
}

extern "C" Datum
minhash_array(PG_FUNCTION_ARGS)
{
	PG_RETURN_MINHASH_P(sign_array(fcinfo, PG_GETARG_ARRAYTYPE_P(0), PG_GETARG_INT32(1),
								   seed_arg(fcinfo, 2), MINHASH_FAMILY_NATIVE));
}

/* minhash(elements, family, num_perm, seed) */
extern "C" Datum
minhash_array_family(PG_FUNCTION_ARGS)
{
	int			kind = minhash_family_arg(PG_GETARG_DATUM(1));

	PG_RETURN_MINHASH_P(sign_array(fcinfo, PG_GETARG_ARRAYTYPE_P(0), PG_GETARG_INT32(2),
								   seed_arg(fcinfo, 3), kind));
}

/* minhash(elements, bits, family, num_perm, seed) */
extern "C" Datum
minhash_array_bits(PG_FUNCTION_ARGS)
{
	int			width = minhash_width_arg(PG_GETARG_INT64(1));
	int			kind = minhash_family_arg(PG_GETARG_DATUM(2));

	PG_RETURN_MINHASH_P(sign_array(fcinfo, PG_GETARG_ARRAYTYPE_P(0), PG_GETARG_INT32(3),
								   seed_arg(fcinfo, 4), kind, width));
}
