/*
 * Set elements: the bytes that identify an element, hashed by
 * minhash(anyarray) and minhash_agg and compared by jaccard(anyarray,
 * anyarray). minhash(anyarray) is IMMUTABLE (it can be indexed), so these
 * bytes must not depend on any setting: a signature computed in one session
 * must equal the one computed in any other, whatever its TimeZone, DateStyle,
 * IntervalStyle, extra_float_digits, lc_monetary, bytea_output, search_path
 * or client_encoding. Each element type gets one of three representations,
 * chosen once per type (docs/sql.md, "Set elements"):
 *
 *  1. Its UTF-8 text form, for the built-in types whose output reads no
 *     setting (integers, text types, bool, uuid, numeric, json, jsonb, inet,
 *     ..., enums; see text_output_is_stable). This keeps 1.0's signatures
 *     of those types, and integer 42 and text '42' the same element, so the
 *     text[] of minhash_shingles(doc) hashes exactly like minhash(doc).
 *     Integers are formatted here (pg_lltoa), without the output function.
 *  2. Its binary send form, for the other built-in types (timestamps,
 *     dates, intervals, floats, money, bytea, geometric types, ranges...):
 *     a fixed, portable encoding of the value that carries no text, so no
 *     setting -- client_encoding included -- changes it.
 *  3. For other types (user-defined, composite): the type's extended hash
 *     support function (the one hash partitioning uses, which PostgreSQL
 *     keeps stable), as 8 bytes; else its send form; else its text output
 *     (then the signature is only as immutable as that output).
 *
 * Text forms are converted to UTF-8, so a set hashes alike in every
 * database encoding.
 */
#include "pg/pg_prelude.h"

#include "core/hash.h"
#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
#include "access/transam.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"
}

/* Built-in types whose output function depends on the value alone. */
static bool
text_output_is_stable(Oid typid)
{
	switch (typid)
	{
		case BOOLOID:
		case CHAROID:
		case NAMEOID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case XIDOID:
		case XID8OID:
		case CIDOID:
		case TIDOID:
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case REFCURSOROID:
		case UUIDOID:
		case NUMERICOID:
		case JSONOID:
		case JSONBOID:
		case JSONPATHOID:
		case XMLOID:
		case INETOID:
		case CIDROID:
		case MACADDROID:
		case MACADDR8OID:
		case BITOID:
		case VARBITOID:
		case TSVECTOROID:
		case TSQUERYOID:
		case PG_LSNOID:
			return true;
		default:
			return false;
	}
}

void
element_text_init(ElementText *et, Oid typid, MemoryContext mcxt)
{
	Oid			base = getBaseType(typid);	/* a domain's values are its base type's */
	Oid			func;
	bool		isvarlena;
	char		typtype = get_typtype(base);

	et->typid = typid;
	et->collation = InvalidOid;
	if (base == TEXTOID || base == VARCHAROID || base == BPCHAROID)
		et->kind = ELEMENT_TEXT_BYTES;
	else if (base == INT2OID)
		et->kind = ELEMENT_INT2;
	else if (base == INT4OID)
		et->kind = ELEMENT_INT4;
	else if (base == INT8OID)
		et->kind = ELEMENT_INT8;
	else if (text_output_is_stable(base) || typtype == TYPTYPE_ENUM)
		et->kind = ELEMENT_TEXT_OUT;
	else
	{
		bool		builtin = base < FirstGenbkiObjectId && typtype != TYPTYPE_COMPOSITE &&
			typtype != TYPTYPE_PSEUDO;
		TypeCacheEntry *tce = builtin ? NULL :
			lookup_type_cache(base, TYPECACHE_HASH_EXTENDED_PROC_FINFO);
		Oid			sendfn;
		int16		typlen;
		bool		typbyval;
		char		typalign;
		char		typdelim;
		Oid			typioparam;

		/* InvalidOid when the type has none (getTypeBinaryOutputInfo would error) */
		get_type_io_data(base, IOFunc_send, &typlen, &typbyval, &typalign, &typdelim,
						 &typioparam, &sendfn);
		if (tce != NULL && OidIsValid(tce->hash_extended_proc))
		{
			et->kind = ELEMENT_HASH;
			fmgr_info_cxt(tce->hash_extended_proc, &et->fn, mcxt);
			if (type_is_collatable(base))
				et->collation = OidIsValid(get_typcollation(base)) ?
					get_typcollation(base) : DEFAULT_COLLATION_OID;
			return;
		}
		if (OidIsValid(sendfn))
		{
			et->kind = ELEMENT_SEND;
			fmgr_info_cxt(sendfn, &et->fn, mcxt);
			return;
		}
		et->kind = ELEMENT_TEXT_OUT;
	}
	if (et->kind == ELEMENT_TEXT_OUT)
	{
		getTypeOutputInfo(base, &func, &isvarlena);
		fmgr_info_cxt(func, &et->fn, mcxt);
	}
}

const char *
element_bytes(ElementText *et, Datum value, size_t *len, void **to_free, char *scratch)
{
	const char *str;
	size_t		n;
	void	   *copy = NULL;

	switch (et->kind)
	{
		case ELEMENT_INT2:
			*len = (size_t) pg_itoa(DatumGetInt16(value), scratch);
			*to_free = NULL;
			return scratch;
		case ELEMENT_INT4:
			*len = (size_t) pg_ltoa(DatumGetInt32(value), scratch);
			*to_free = NULL;
			return scratch;
		case ELEMENT_INT8:
			*len = (size_t) pg_lltoa(DatumGetInt64(value), scratch);
			*to_free = NULL;
			return scratch;
		case ELEMENT_HASH:
			{
				uint64		h = DatumGetUInt64(FunctionCall2Coll(&et->fn, et->collation, value,
																 UInt64GetDatum(0)));

				memcpy(scratch, &h, sizeof(h));
				*len = sizeof(h);
				*to_free = NULL;
				return scratch;
			}
		case ELEMENT_SEND:
			{
				bytea	   *b = SendFunctionCall(&et->fn, value);

				*len = VARSIZE(b) - VARHDRSZ;
				*to_free = b;
				return VARDATA(b);
			}
		case ELEMENT_TEXT_BYTES:
			{
				struct varlena *v = (struct varlena *) DatumGetPointer(value);
				struct varlena *flat = pg_detoast_datum_packed(v);

				if (flat != v)
					copy = flat;
				str = VARDATA_ANY(flat);
				n = VARSIZE_ANY_EXHDR(flat);
				break;
			}
		case ELEMENT_TEXT_OUT:
		default:
			{
				char	   *out = OutputFunctionCall(&et->fn, value);

				copy = out;
				str = out;
				n = strlen(out);
				break;
			}
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
	char		scratch[ELEMENT_SCRATCH_SIZE];
	size_t		len;
	void	   *to_free;
	const char *bytes = element_bytes(et, value, &len, &to_free, scratch);
	uint64		h = minhash::family_hash((minhash::HashFamily) family, bytes, len);

	if (to_free)
		pfree(to_free);
	return h;
}
