/*
 * Input/output of type minhash: the text form [family:][bitsN:]seed:[v1,...,vk],
 * the binary form, and the typmod minhash(k) or minhash(k, bits).
 *
 * The family prefix is written for every family but the native one, and the
 * width tag (bits16, bits8) for compact signatures only, so the text of a
 * native 32-bit signature is what 1.0 wrote and 1.0's text reads as native.
 *
 * Typmod semantics: a signature's first j values are the signature under the
 * first j hash functions (their parameters depend on (seed, index) only), so
 * an explicit cast to a smaller k truncates; an explicit cast to fewer bits
 * keeps the low bits of each value (b-bit minwise hashing, core/bbit.h).
 * Anything else whose k or width differs from the typmod is an error rather
 * than a silent change of precision. The oph family's bins depend on k, so
 * its signatures are never shortened.
 */
#include "pg/pg_prelude.h"

#include "core/bbit.h"
#include "core/sig_format.h"
#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(minhash_in);
PG_FUNCTION_INFO_V1(minhash_out);
PG_FUNCTION_INFO_V1(minhash_recv);
PG_FUNCTION_INFO_V1(minhash_send);
PG_FUNCTION_INFO_V1(minhash_typmod_in);
PG_FUNCTION_INFO_V1(minhash_typmod_out);
PG_FUNCTION_INFO_V1(minhash_enforce_typmod);
}

/* Literals longer than this are cut in messages: a 1024-value signature is 10 kB. */
#define LITERAL_SHOWN 64

[[noreturn]] static void
bad_literal(const char *str, const char *detail)
{
	int			len = strlen(str);
	int			shown = pg_mbcliplen(str, len, LITERAL_SHOWN);

	/*
	 * Neither "seed:" nor "[": most likely a document where a signature was
	 * expected (sig % 'some text' makes the literal a minhash).
	 */
	if (len > 0 && strchr(str, ':') == NULL && strchr(str, '[') == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%.*s%s\"", "minhash",
						shown, str, shown < len ? "..." : ""),
				 errdetail_internal("%s", detail),
				 errhint("A text is not a signature: compute its signature with minhash('%.*s%s'::text).",
						 shown, str, shown < len ? "..." : "")));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type %s: \"%.*s%s\"", "minhash",
					shown, str, shown < len ? "..." : ""),
			 errdetail_internal("%s", detail),
			 errhint("The text form is [family:][bitsN:]seed:[v1,v2,...,vk] with 1 to %d values, "
					 "unsigned 32-bit integers (16- or 8-bit after bits16: or bits8:).",
					 MINHASH_MAX_NUM_PERM)));
}

/*
 * A typmod is -1 (none) or MINHASH_TYPMOD(num_perm, width): num_perm 1 to
 * MINHASH_MAX_NUM_PERM, a width code 0 to 2. Only minhash_typmod_in makes
 * typmods, and it checks them; this guards the functions that take one as
 * an argument and can be called directly (minhash_enforce_typmod,
 * minhash_in, minhash_recv), so that none stores a signature of 0 values.
 */
static void
valid_typmod(int32 typmod)
{
	if (typmod != -1 &&
		(typmod < 0 || MinHashTypmodNumPerm(typmod) < MINHASH_MIN_NUM_PERM ||
		 MinHashTypmodNumPerm(typmod) > MINHASH_MAX_NUM_PERM ||
		 MinHashTypmodWidth(typmod) >= MINHASH_NUM_WIDTHS))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid type modifier %d for type minhash", typmod),
				 errdetail("The modifier is num_perm, between %d and %d, plus 65536 times the width code (0: 32 bits, 1: 16, 2: 8), or -1 for none.",
						   MINHASH_MIN_NUM_PERM, MINHASH_MAX_NUM_PERM)));
}

/* "minhash(128)" or "minhash(128,16)": the type a typmod names, for messages */
static char *
typmod_name(int32 typmod)
{
	int			w = MinHashTypmodWidth(typmod);

	return w == MINHASH_WIDTH_32 ? psprintf("minhash(%d)", MinHashTypmodNumPerm(typmod))
		: psprintf("minhash(%d,%d)", MinHashTypmodNumPerm(typmod), MINHASH_WIDTH_BITS(w));
}

/* The enforcement shared by input, recv and the length-coercion cast */
static void
check_typmod(int num_perm, int width, int32 typmod)
{
	valid_typmod(typmod);
	if (typmod < 0)
		return;
	if (num_perm != MinHashTypmodNumPerm(typmod))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signature has num_perm %d, but the type is %s",
						num_perm, typmod_name(typmod)),
				 errhint("An explicit cast to minhash(k) shortens a signature; none lengthens it.")));
	if (width != MinHashTypmodWidth(typmod))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signature keeps %d bits of each value, but the type is %s",
						MINHASH_WIDTH_BITS(width), typmod_name(typmod)),
				 width < MinHashTypmodWidth(typmod)
				 ? errhint("An explicit cast to %s keeps the low bits of each value; or sign with minhash(..., bits => %d).",
						   typmod_name(typmod), MINHASH_WIDTH_BITS(MinHashTypmodWidth(typmod)))
				 : errhint("No cast widens a compact signature: sign the document again.")));
}

/* The detail of each text-form error (the parser is the core's, so the fuzzer reaches it) */
static const char *
text_error_detail(minhash::SigTextError e)
{
	switch (e)
	{
		case minhash::SigTextError::BadSeed:
			return "Expected a signed 64-bit integer seed at the start.";
		case minhash::SigTextError::NoColon:
			return "Expected \":\" after the seed.";
		case minhash::SigTextError::NoBracket:
			return "Expected \"[\" after \":\".";
		case minhash::SigTextError::Empty:
			return "A signature has at least one value.";
		case minhash::SigTextError::BadValue:
			return "Expected an unsigned 32-bit integer value.";
		case minhash::SigTextError::TooMany:
			return "A signature has at most " CppAsString2(MINHASH_MAX_NUM_PERM) " values.";
		case minhash::SigTextError::BadSeparator:
			return "Expected \",\" or \"]\" after a value.";
		case minhash::SigTextError::Trailing:
			return "Unexpected text after \"]\".";
		case minhash::SigTextError::Ok:
			break;
	}
	return "Invalid signature.";
}

/*
 * A family name or width tag where the seed should be: the two out of order
 * (bits16:oph:1:[...]) or one written twice.
 */
static bool
misplaced_prefix(std::string_view at_seed)
{
	minhash::HashFamily family;
	minhash::ValueWidth width;
	size_t		rest = 0;

	if (minhash::parse_family_prefix(at_seed, &family, &rest) && rest > 0)
		return true;
	rest = 0;
	return minhash::parse_width_prefix(at_seed, &width, &rest) && rest > 0;
}

extern "C" Datum
minhash_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	int32		typmod = PG_GETARG_INT32(2);
	uint32		values[MINHASH_MAX_NUM_PERM];
	int			n = 0;
	int64_t		seed = 0;
	minhash::SigTextError e;
	minhash::HashFamily family = minhash::HashFamily::Native;
	minhash::ValueWidth width = minhash::ValueWidth::Bits32;
	std::string_view text(str, strlen(str));
	size_t		rest = 0;
	size_t		after_width = 0;
	MinHashSig *sig;

	/* an optional family name and ":" before the seed (none: native, as 1.0 wrote) */
	if (!minhash::parse_family_prefix(text, &family, &rest))
		bad_literal(str, "Unknown hash family before the seed: valid families are datasketch, native and oph.");
	/* then an optional width tag (none: 32 bits) */
	if (!minhash::parse_width_prefix(text.substr(rest), &width, &after_width))
		bad_literal(str, "Unknown width before the seed: valid tags are bits8, bits16 and bits32.");
	rest += after_width;
	e = minhash::parse_signature_text(text.substr(rest), &seed, values, MINHASH_MAX_NUM_PERM, &n);
	if (e == minhash::SigTextError::BadSeed && misplaced_prefix(text.substr(rest)))
		bad_literal(str, "The hash family comes first, then the width tag, each at most once, then the seed: oph:bits16:1:[...].");
	if (e != minhash::SigTextError::Ok)
		bad_literal(str, text_error_detail(e));
	if (width != minhash::ValueWidth::Bits32)
	{
		uint32		limit = ((uint32) 1 << minhash::width_bits(width)) - 1;

		for (int i = 0; i < n; i++)
			if (values[i] > limit)
				bad_literal(str, psprintf("Signatures of %d bits have values from 0 to %u; value %d is %u.",
										  minhash::width_bits(width), limit, i + 1, values[i]));
	}

	check_typmod(n, (int) width, typmod);
	if (family == minhash::HashFamily::Datasketch && (seed < 0 || (uint64) seed > PG_UINT32_MAX))
		bad_literal(str, "A datasketch seed is between 0 and 4294967295.");
	sig = minhash_sig_alloc_width(n, (uint64) seed, (int) family, (int) width);
	minhash::narrow_values(values, n, width, sig->values);
	PG_RETURN_MINHASH_P(sig);
}

extern "C" Datum
minhash_out(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);
	uint32		values[MINHASH_MAX_NUM_PERM];
	char	   *out = (char *) palloc(minhash::signature_text_capacity(sig->num_perm) + 1);
	size_t		len;

	/*
	 * Stored values, widened (an oph sketch undensified, as the union needs
	 * it); the core writes the text, as the Python package does.
	 */
	minhash::widen_values(sig->values, sig->num_perm, (minhash::ValueWidth) MinHashSigWidth(sig), values);
	len = minhash::format_signature_text((minhash::HashFamily) MinHashSigFamily(sig),
										 (minhash::ValueWidth) MinHashSigWidth(sig),
										 sig->seed, values, sig->num_perm, out);
	out[len] = '\0';
	PG_RETURN_CSTRING(out);
}

/*
 * Binary form: uint8 version, uint8 flags, uint16 num_perm, int64 seed,
 * num_perm values of 4, 2 or 1 bytes (the width in flags), all in network
 * byte order. flags carries the family and width as on disk (1.0 sent 0:
 * native, 32 bits).
 */
extern "C" Datum
minhash_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int32		typmod = PG_GETARG_INT32(2);
	const uint8_t *data = (const uint8_t *) buf->data + buf->cursor;
	int			have = buf->len - buf->cursor;
	minhash::SigBinaryHeader h;
	minhash::ValueWidth width;
	int			need;
	uint32		values[MINHASH_MAX_NUM_PERM];
	MinHashSig *sig;

	/*
	 * The layout is decoded by the core (fuzzed there). A short value is
	 * malformed data (22P03), not a broken protocol message (08P01, what
	 * pq_getmsg* would report): say what was expected.
	 */
	if (!minhash::decode_signature_header(data, (size_t) have, &h))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary minhash: expected %d bytes, got %d",
						(int) minhash::kSigBinaryHeader, have),
				 errdetail("The value ends inside the header.")));
	if (h.version != MINHASH_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("unsupported minhash binary format version %d", h.version)));
	if (!minhash_flags_valid(h.flags))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid flags %d in binary minhash", h.flags)));
	if (h.num_perm < MINHASH_MIN_NUM_PERM || h.num_perm > MINHASH_MAX_NUM_PERM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid num_perm %d in binary minhash", h.num_perm)));
	width = (minhash::ValueWidth) ((h.flags & MINHASH_FLAGS_WIDTH_MASK) >> MINHASH_FLAGS_WIDTH_SHIFT);
	check_typmod(h.num_perm, (int) width, typmod);
	need = (int) minhash::signature_binary_size(h.num_perm, width);
	if (have != need)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary minhash: expected %d bytes, got %d", need, have),
				 errdetail("A signature of num_perm %d takes %d bytes: a %d-byte header and %d values of %d bytes.",
						   h.num_perm, need, (int) minhash::kSigBinaryHeader, h.num_perm,
						   (int) minhash::value_bytes(width))));

	if ((h.flags & MINHASH_FLAGS_FAMILY_MASK) == MINHASH_FAMILY_DATASKETCH && h.seed > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid datasketch seed %lld in binary minhash", (long long) (int64) h.seed),
				 errdetail("A datasketch seed is between 0 and %u.", (unsigned) PG_UINT32_MAX)));

	sig = minhash_sig_alloc_width(h.num_perm, h.seed, h.flags & MINHASH_FLAGS_FAMILY_MASK,
								  (int) width);
	(void) minhash::decode_signature_values(data, (size_t) have, h.num_perm, values, width);
	minhash::narrow_values(values, h.num_perm, width, sig->values);
	buf->cursor += need;
	PG_RETURN_MINHASH_P(sig);
}

extern "C" Datum
minhash_send(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);
	minhash::ValueWidth width = (minhash::ValueWidth) MinHashSigWidth(sig);
	uint32		values[MINHASH_MAX_NUM_PERM];
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbyte(&buf, sig->version);
	pq_sendbyte(&buf, sig->flags);
	pq_sendint16(&buf, sig->num_perm);
	pq_sendint64(&buf, sig->seed);
	minhash::widen_values(sig->values, sig->num_perm, width, values);
	for (int i = 0; i < sig->num_perm; i++)
	{
		if (width == minhash::ValueWidth::Bits16)
			pq_sendint16(&buf, (uint16) values[i]);
		else if (width == minhash::ValueWidth::Bits8)
			pq_sendbyte(&buf, (uint8) values[i]);
		else
			pq_sendint32(&buf, values[i]);
	}
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

extern "C" Datum
minhash_typmod_in(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int			n;
	int32	   *mods = ArrayGetIntegerTypmods(arr, &n);
	minhash::ValueWidth width = minhash::ValueWidth::Bits32;

	if (n != 1 && n != 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid type modifier"),
				 errdetail("Type minhash takes num_perm and optionally the bits kept of each value: minhash(128) or minhash(128, 16).")));
	if (mods[0] < MINHASH_MIN_NUM_PERM || mods[0] > MINHASH_MAX_NUM_PERM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_perm for type minhash must be between %d and %d, not %d",
						MINHASH_MIN_NUM_PERM, MINHASH_MAX_NUM_PERM, mods[0])));
	if (n == 2 && !minhash::width_of_bits(mods[1], &width))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bits for type minhash must be 8, 16 or 32, not %d", mods[1])));
	/* minhash(k, 32) is minhash(k): one typmod per type */
	PG_RETURN_INT32(MINHASH_TYPMOD(mods[0], (int) width));
}

extern "C" Datum
minhash_typmod_out(PG_FUNCTION_ARGS)
{
	int32		typmod = PG_GETARG_INT32(0);
	int			w = MinHashTypmodWidth(typmod);

	if (typmod < 0)
		PG_RETURN_CSTRING(pstrdup(""));
	PG_RETURN_CSTRING(w == MINHASH_WIDTH_32 ? psprintf("(%d)", MinHashTypmodNumPerm(typmod))
					  : psprintf("(%d,%d)", MinHashTypmodNumPerm(typmod), MINHASH_WIDTH_BITS(w)));
}

/*
 * The length-coercion cast minhash → minhash(k[, bits]): assignment
 * checks, an explicit cast truncates k and narrows the values.
 */
extern "C" Datum
minhash_enforce_typmod(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);
	int32		typmod = PG_GETARG_INT32(1);
	bool		is_explicit = PG_GETARG_BOOL(2);
	int			k;
	int			width;
	int			from = MinHashSigWidth(sig);
	MinHashSig *prefix;

	valid_typmod(typmod);
	if (typmod < 0)
		PG_RETURN_MINHASH_P(sig);
	k = MinHashTypmodNumPerm(typmod);
	width = MinHashTypmodWidth(typmod);
	if (sig->num_perm == k && from == width)
		PG_RETURN_MINHASH_P(sig);
	if (!is_explicit || k > sig->num_perm || width < from)
		check_typmod(sig->num_perm, from, typmod);

	if (k < sig->num_perm && MinHashSigFamily(sig) == MINHASH_FAMILY_OPH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("an oph signature cannot be shortened"),
				 errdetail("One-permutation hashing spreads the elements over all %d bins: its first %d values are not a signature of %d values.",
						   (int) sig->num_perm, k, k),
				 errhint("Sign the document again with num_perm => %d.", k)));

	prefix = sig;
	if (k < sig->num_perm)
	{
		prefix = minhash_sig_alloc_width(k, sig->seed, MinHashSigFamily(sig), from);
		memcpy(prefix->values, sig->values, MINHASH_WIDTH_BYTES(from) * k);
	}
	PG_RETURN_MINHASH_P(minhash_sig_narrow(prefix, width));
}
