/*
 * Set elements by their text form. minhash(anyarray), minhash_agg and
 * jaccard(anyarray, anyarray) all identify an element with the UTF-8 bytes of
 * its type's output: integer 42 and text '42' are the same element, and the
 * text[] of minhash_shingles(doc) hashes exactly like minhash(doc).
 */
#include "core/hash.h"
#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/lsyscache.h"
}

void
element_text_init(ElementText *et, Oid typid, MemoryContext mcxt)
{
	Oid			outfunc;
	bool		isvarlena;

	et->typid = typid;
	/* Their output function returns the stored bytes: skip the call and the copy. */
	et->is_text = (typid == TEXTOID || typid == VARCHAROID || typid == BPCHAROID);
	getTypeOutputInfo(typid, &outfunc, &isvarlena);
	fmgr_info_cxt(outfunc, &et->outfn, mcxt);
}

const char *
element_text(ElementText *et, Datum value, size_t *len, void **to_free)
{
	const char *str;
	size_t		n;
	void	   *copy = NULL;

	if (et->is_text)
	{
		struct varlena *v = (struct varlena *) DatumGetPointer(value);
		struct varlena *flat = pg_detoast_datum_packed(v);

		if (flat != v)
			copy = flat;
		str = VARDATA_ANY(flat);
		n = VARSIZE_ANY_EXHDR(flat);
	}
	else
	{
		char	   *out = OutputFunctionCall(&et->outfn, value);

		copy = out;
		str = out;
		n = strlen(out);
	}

	if (GetDatabaseEncoding() != PG_UTF8)
	{
		char	   *utf8 = pg_server_to_any(str, (int) n, PG_UTF8);

		if (utf8 != str)
		{
			if (copy)
				pfree(copy);
			copy = utf8;
			str = utf8;
			n = strlen(utf8);
		}
	}

	*len = n;
	*to_free = copy;
	return str;
}

uint64
element_hash(ElementText *et, Datum value, int family)
{
	size_t		len;
	void	   *to_free;
	const char *str = element_text(et, value, &len, &to_free);
	uint64		h = minhash::family_hash((minhash::HashFamily) family, str, len);

	if (to_free)
		pfree(to_free);
	return h;
}
