/*
 * minhash_shingles(doc, k, unit): the distinct shingles of a document, what
 * minhash(doc) hashes -- the minhash counterpart of pg_trgm's show_trgm().
 */
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/shingle.h"
#include "pg/minhash.h"

extern "C" {
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(minhash_shingles);
}

/* The shingles as one malloc'd block: offsets[count + 1] into chars. */
typedef struct FlatShingles
{
	size_t		count;
	size_t	   *offsets;
	char	   *chars;
} FlatShingles;

static bool
distinct_shingles_flat(const char *doc, size_t len, minhash::ShingleSpec spec,
					   FlatShingles **out, CoreError *err) noexcept
{
	try
	{
		std::vector<std::string> shingles =
			minhash::distinct_shingles(std::string_view(doc, len), spec);
		size_t		bytes = 0;

		for (const std::string &s : shingles)
			bytes += s.size();

		void	   *block = malloc(sizeof(FlatShingles) +
								   sizeof(size_t) * (shingles.size() + 1) + bytes + 1);

		if (block == nullptr)
			throw std::bad_alloc();
		FlatShingles *flat = static_cast<FlatShingles *>(block);

		flat->count = shingles.size();
		flat->offsets = reinterpret_cast<size_t *>(flat + 1);
		flat->chars = reinterpret_cast<char *>(flat->offsets + shingles.size() + 1);
		size_t		pos = 0;

		for (size_t i = 0; i < shingles.size(); i++)
		{
			flat->offsets[i] = pos;
			memcpy(flat->chars + pos, shingles[i].data(), shingles[i].size());
			pos += shingles[i].size();
		}
		flat->offsets[shingles.size()] = pos;
		*out = flat;
		return true;
	}
	catch (...)
	{
		minhash_core_error_from_current(err);
		return false;
	}
}

/* Validates unit and k as minhash_shingles() and minhash(text) take them. */
minhash::ShingleSpec
minhash_shingle_spec(text *unit_name, int32 k)
{
	char	   *name = text_to_cstring(unit_name);
	minhash::ShingleSpec spec;

	if (!minhash::parse_shingle_unit(name, &spec.unit))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown shingle unit \"%s\"", name),
				 errhint("Valid units are \"word\", \"char\" and \"char_nospace\".")));
	if (k < 0 || k > minhash::kMaxShingleSize)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shingle size k must be between 1 and %d, not %d",
						minhash::kMaxShingleSize, k),
				 errhint("k = 0 selects the default: %d words or %d characters.",
						 minhash::default_shingle_size(minhash::ShingleUnit::Word),
						 minhash::default_shingle_size(minhash::ShingleUnit::Char))));
	spec.k = (k == 0) ? minhash::default_shingle_size(spec.unit) : k;
	pfree(name);
	return spec;
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
	minhash::ShingleSpec spec = minhash_shingle_spec(PG_GETARG_TEXT_PP(2), PG_GETARG_INT32(1));
	size_t		len;
	const char *utf8 = minhash_doc_utf8(doc, &len);
	FlatShingles *flat = NULL;
	CoreError	err;
	ArrayType  *result = NULL;

	if (!distinct_shingles_flat(utf8, len, spec, &flat, &err))
		minhash_report_core_error(&err);

	/* The block is malloc'd: free it even if building the array fails. */
	PG_TRY();
	{
		size_t		count = flat->count;
		Datum	   *elems = (Datum *) palloc(sizeof(Datum) * (count > 0 ? count : 1));

		for (size_t i = 0; i < count; i++)
		{
			const char *s = flat->chars + flat->offsets[i];
			int			n = (int) (flat->offsets[i + 1] - flat->offsets[i]);

			if (GetDatabaseEncoding() != PG_UTF8)
			{
				char	   *server = pg_any_to_server(s, n, PG_UTF8);

				if (server != s)
				{
					s = server;
					n = (int) strlen(server);
				}
			}
			elems[i] = PointerGetDatum(cstring_to_text_with_len(s, n));
		}
		result = construct_array(elems, (int) count, TEXTOID, -1, false, TYPALIGN_INT);
	}
	PG_FINALLY();
	{
		free(flat);
	}
	PG_END_TRY();

	PG_RETURN_ARRAYTYPE_P(result);
}
