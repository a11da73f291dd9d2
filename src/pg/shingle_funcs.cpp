/*
 * minhash_shingles(doc, k, unit): the distinct shingles of a document, what
 * minhash(doc) hashes -- the minhash counterpart of pg_trgm's show_trgm().
 */
#include "pg/pg_prelude.h"

#include "core/shingle.h"
#include "pg/core_call.h"
#include "pg/minhash.h"

extern "C" {
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "nodes/value.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(minhash_shingles);
PG_FUNCTION_INFO_V1(minhash_shingles_config);
PG_FUNCTION_INFO_V1(minhash_shingles_ignore);
}

/*
 * The core's byte budget: it charges each distinct shingle its length plus
 * kDistinctShingleOverhead, more than a text[] element costs (4-byte header,
 * at most 3 bytes of alignment), so whatever it accepts fits in one array of
 * at most MaxAllocSize bytes -- and the core's own memory stays bounded by
 * the same figure. (Each element costs at least 33 bytes, so the count stays
 * far below MaxArraySize.)
 */
#define SHINGLE_BUDGET ((size_t) (MaxAllocSize - ARR_OVERHEAD_NONULLS(1)))

static_assert(minhash::kDistinctShingleOverhead >= VARHDRSZ + sizeof(int) - 1,
			  "the budget must cover a text[] element's header and padding");

static void
shingles_too_large(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("document has too many distinct shingles for an array"),
			 errdetail("An array of them would exceed %zu bytes.", (size_t) MaxAllocSize),
			 errhint("minhash(doc) computes the signature of a document of any size without listing its shingles.")));
}

/*
 * The text[] of the shingles, built in one allocation rather than through a
 * palloc'd text per element and construct_array's copy (which would need
 * several times the array's size). Elements are stored as construct_array
 * stores them: 4-byte headers, int-aligned, no NULL bitmap.
 */
static ArrayType *
shingle_array(const minhash::DistinctShingles *set)
{
	size_t		count = set->size();
	bool		convert = GetDatabaseEncoding() != PG_UTF8;
	const char **conv_str = NULL;
	int		   *conv_len = NULL;
	Size		nbytes = ARR_OVERHEAD_NONULLS(1);
	ArrayType  *result;
	char	   *pos;

	if (count == 0)
		return construct_empty_array(TEXTOID);

	/* Pass 1: the size, after conversion to the server encoding if needed. */
	if (convert)
	{
		conv_str = (const char **) palloc(sizeof(char *) * count);
		conv_len = (int *) palloc(sizeof(int) * count);
	}
	for (size_t i = 0; i < count; i++)
	{
		std::string_view s = (*set)[i];
		size_t		n = s.size();

		if (convert)
		{
			const char *server = pg_any_to_server(s.data(), (int) n, PG_UTF8);

			if (server != s.data())
				n = strlen(server);
			conv_str[i] = server;
			conv_len[i] = (int) n;
		}
		nbytes += INTALIGN(VARHDRSZ + n);
		/* Only conversion can make the array larger than the core's budget. */
		if (nbytes > MaxAllocSize)
			shingles_too_large();
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}

	/* Pass 2: fill. palloc0 so alignment padding is zero. */
	result = (ArrayType *) palloc0(nbytes);
	SET_VARSIZE(result, nbytes);
	result->ndim = 1;
	result->dataoffset = 0;
	result->elemtype = TEXTOID;
	ARR_DIMS(result)[0] = (int) count;
	ARR_LBOUND(result)[0] = 1;
	pos = ARR_DATA_PTR(result);
	for (size_t i = 0; i < count; i++)
	{
		std::string_view s = (*set)[i];
		const char *str = convert ? conv_str[i] : s.data();
		size_t		n = convert ? (size_t) conv_len[i] : s.size();

		SET_VARSIZE(pos, VARHDRSZ + n);
		memcpy(VARDATA(pos), str, n);
		pos += INTALIGN(VARHDRSZ + n);
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	Assert(pos == (char *) result + nbytes);
	return result;
}

/*
 * The array of a set that lives on the core's heap (outside PostgreSQL's
 * memory): the set is freed even on error or cancel.
 */
static ArrayType *
shingle_array_of(minhash::DistinctShingles *set)
{
	ArrayType  *volatile result = NULL;

	PG_TRY();
	{
		result = shingle_array(set);
	}
	PG_FINALLY();
	{
		minhash::free_distinct_shingles(set);
	}
	PG_END_TRY();
	return result;
}

/* k in 0..kMaxShingleSize (0: the default), of words and characters or of lexemes */
static void
check_shingle_k(int32 k, bool lexemes)
{
	int			words = minhash::default_shingle_size(minhash::ShingleUnit::Word);

	if (k < 0 || k > minhash::kMaxShingleSize)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shingle size k must be between 1 and %d, not %d",
						minhash::kMaxShingleSize, k),
				 lexemes ? errhint("k = 0 selects the default: %d lexemes.", words)
				 : errhint("k = 0 selects the default: %d words or %d characters.", words,
						   minhash::default_shingle_size(minhash::ShingleUnit::Char))));
}

/* Validates unit and k as minhash_shingles() and minhash(text) take them. */
/* A value echoed in a message is cut to this many bytes (a document may be megabytes). */
#define UNIT_SHOWN 40

minhash::ShingleSpec
minhash_shingle_spec(text *unit_name, int32 k, UnitArgOf of)
{
	char	   *name = text_to_cstring(unit_name);
	minhash::ShingleSpec spec;

	if (!minhash::parse_shingle_unit(name, &spec.unit))
	{
		int			len = strlen(name);
		int			shown = pg_mbcliplen(name, len, UNIT_SHOWN);
		uint8_t		ignore = 0;
		std::string_view bad;

		/* minhash(body, 'accents'): meant as ignore => 'accents' */
		if (minhash::parse_ignore(name, &ignore, &bad) && ignore != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown shingle unit \"%s\"", name),
					 errhint("Name the argument to ignore %s: ignore => '%s'.", name, name)));

		/* longer than a name, or several words: the document, passed where the unit goes */
		if (len >= NAMEDATALEN || strpbrk(name, " \t\n\r") != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown shingle unit \"%.*s%s\"", shown, name, shown < len ? "..." : ""),
					 of == UnitArgOf::Shingles ?
					 errdetail("The arguments of minhash_shingles() are, in order, doc, k (the shingle size) and unit.") :
					 errdetail("The arguments of minhash() are, in order, doc, unit, k (the shingle size), num_perm and seed."),
					 of == UnitArgOf::Shingles ?
					 errhint("The document comes first: minhash_shingles(doc, k, 'char').") :
					 errhint("The document comes first: minhash(doc, 'char').")));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown shingle unit \"%s\"", name),
				 errhint("Valid units are \"word\", \"char\" and \"char_nospace\"; "
						 "a text search configuration is passed as config => '%s'.", name)));
	}
	check_shingle_k(k, false);
	spec.k = (k == 0) ? minhash::default_shingle_size(spec.unit) : k;
	pfree(name);
	return spec;
}

uint8
minhash_ignore_arg(text *list)
{
	char	   *s = text_to_cstring(list);
	uint8_t		flags = 0;
	std::string_view bad;

	if (!minhash::parse_ignore(s, &flags, &bad))
	{
		int			len = (int) bad.size();
		int			shown = pg_mbcliplen(bad.data(), len, UNIT_SHOWN);
		minhash::ShingleUnit unit;

		/*
		 * minhash(body, 'char', bits => 16) or family => 'oph': with those
		 * named, a string second resolves to ignore's overload (its domain
		 * over text), not to the unit as in minhash(body, 'char').
		 */
		if (minhash::parse_shingle_unit(s, &unit))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown ignore option \"%s\"", s),
					 errhint("\"%s\" is a shingle unit: name the argument, unit => '%s'.", s, s)));
		/* minhash(body, 'english', bits => 16): likewise for config */
		if (strlen(s) < NAMEDATALEN &&
			OidIsValid(get_ts_config_oid(list_make1(makeString(s)), true)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown ignore option \"%s\"", s),
					 errhint("\"%s\" is a text search configuration: name the argument, config => '%s'.", s, s)));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown ignore option \"%.*s%s\"", shown, bad.data(),
						shown < len ? "..." : ""),
				 errhint("Valid options are \"accents\" and \"punctuation\", separated by a comma.")));
	}
	pfree(s);
	return flags;
}

int
minhash_lexeme_k(int32 k)
{
	check_shingle_k(k, true);
	return k == 0 ? minhash::default_shingle_size(minhash::ShingleUnit::Word) : k;
}

/* The document's bytes in UTF-8, the encoding the core expects */
const char *
minhash_doc_utf8(text *doc, size_t *len)
{
	const char *data = VARDATA_ANY(doc);
	size_t		n = VARSIZE_ANY_EXHDR(doc);

	if (GetDatabaseEncoding() != PG_UTF8)
	{
		char	   *utf8 = pg_server_to_any(data, (int) n, PG_UTF8);

		if (utf8 != data)
		{
			data = utf8;
			n = strlen(utf8);
		}
	}
	*len = n;
	return data;
}

extern "C" Datum
minhash_shingles(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	minhash::ShingleSpec spec = minhash_shingle_spec(PG_GETARG_TEXT_PP(2), PG_GETARG_INT32(1),
													 UnitArgOf::Shingles);
	size_t		len;
	const char *utf8 = minhash_doc_utf8(doc, &len);
	minhash::DistinctShingles *set = NULL;

	if (call_core_until_done([&](minhash::InterruptFlag interrupt) noexcept {
			return minhash::new_distinct_shingles(std::string_view(utf8, len), spec, interrupt,
												  SHINGLE_BUDGET, &set);
		}) != minhash::Status::Ok)
		shingles_too_large();
	PG_RETURN_ARRAYTYPE_P(shingle_array_of(set));
}

/* minhash_shingles(doc, k, ignore, unit) */
extern "C" Datum
minhash_shingles_ignore(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	uint8		ignore = minhash_ignore_arg(PG_GETARG_TEXT_PP(2));
	minhash::ShingleSpec spec = minhash_shingle_spec(PG_GETARG_TEXT_PP(3), PG_GETARG_INT32(1),
													 UnitArgOf::Shingles);
	size_t		len;
	const char *utf8 = minhash_doc_utf8(doc, &len);
	minhash::DistinctShingles *set = NULL;

	spec.ignore = ignore;
	if (call_core_until_done([&](minhash::InterruptFlag interrupt) noexcept {
			return minhash::new_distinct_shingles(std::string_view(utf8, len), spec, interrupt,
												  SHINGLE_BUDGET, &set);
		}) != minhash::Status::Ok)
		shingles_too_large();
	PG_RETURN_ARRAYTYPE_P(shingle_array_of(set));
}

/* minhash_shingles(doc, k, config): shingles of the lexemes (lexemes.cpp) */
extern "C" Datum
minhash_shingles_config(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	int			k = minhash_lexeme_k(PG_GETARG_INT32(1));
	Oid			cfg = PG_GETARG_OID(2);
	LexemeText	lx;

	minhash::UnitText units;
	minhash::DistinctShingles *set = NULL;

	minhash_lexemes(cfg, doc, &lx);
	units = minhash_lexeme_units(&lx);
	if (call_core_until_done([&](minhash::InterruptFlag interrupt) noexcept {
			return minhash::new_distinct_shingles(units, k, interrupt, SHINGLE_BUDGET, &set);
		}) != minhash::Status::Ok)
		shingles_too_large();
	PG_RETURN_ARRAYTYPE_P(shingle_array_of(set));
}
