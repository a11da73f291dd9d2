/*
 * Input/output of type minhash: the text form [family:]seed:[v1,...,vk], the
 * binary form, and the typmod minhash(k).
 *
 * The family prefix is written for every family but the native one, so the
 * text of a native signature is what 1.0 wrote and 1.0's text reads as native.
 *
 * Typmod semantics: a signature's first j values are the signature under the
 * first j hash functions (their parameters depend on (seed, index) only), so
 * an explicit cast to a smaller k truncates. Anything else whose k differs
 * from the typmod is an error rather than a silent change of precision.
 */
#include "pg/pg_prelude.h"

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
	 * No "seed:" at all: most likely a document where a signature was
	 * expected (sig % 'some text' makes the literal a minhash).
	 */
	if (strchr(str, ':') == NULL)
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
			 errhint("The text form is seed:[v1,v2,...,vk] with 1 to %d unsigned 32-bit values.",
					 MINHASH_MAX_NUM_PERM)));
}

/*
 * A typmod is -1 (none) or a num_perm, 1 to MINHASH_MAX_NUM_PERM. Only minhash_typmod_in
 * makes typmods, and it checks them; this guards the functions that take
 * one as an argument and can be called directly (minhash_enforce_typmod,
 * minhash_in, minhash_recv), so that none stores a signature of 0 values.
 */
static void
valid_typmod(int32 typmod)
{
	if (typmod != -1 && (typmod < MINHASH_MIN_NUM_PERM || typmod > MINHASH_MAX_NUM_PERM))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid type modifier %d for type minhash", typmod),
				 errdetail("The modifier is num_perm, between %d and %d, or -1 for none.",
						   MINHASH_MIN_NUM_PERM, MINHASH_MAX_NUM_PERM)));
}

/* The enforcement shared by input, recv and the length-coercion cast */
static void
check_typmod(int num_perm, int32 typmod)
{
	valid_typmod(typmod);
	if (typmod >= 0 && num_perm != typmod)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signature has num_perm %d, but the type is minhash(%d)",
						num_perm, typmod),
				 errhint("An explicit cast to minhash(k) shortens a signature; none lengthens it.")));
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
	std::string_view text(str, strlen(str));
	size_t		rest = 0;
	MinHashSig *sig;

	/* an optional family name and ":" before the seed (none: native, as 1.0 wrote) */
	if (!minhash::parse_family_prefix(text, &family, &rest))
		bad_literal(str, "Unknown hash family before the seed: valid families are datasketch and native.");
	e = minhash::parse_signature_text(text.substr(rest), &seed, values, MINHASH_MAX_NUM_PERM, &n);
	if (e != minhash::SigTextError::Ok)
		bad_literal(str, text_error_detail(e));

	check_typmod(n, typmod);
	if (family == minhash::HashFamily::Datasketch && (seed < 0 || (uint64) seed > PG_UINT32_MAX))
		bad_literal(str, "A datasketch seed is between 0 and 4294967295.");
	sig = minhash_sig_alloc(n, (uint64) seed, (int) family);
	memcpy(sig->values, values, sizeof(uint32) * n);
	PG_RETURN_MINHASH_P(sig);
}

extern "C" Datum
minhash_out(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);
	/* the core writes the text (the Python package writes it with the same function) */
	char	   *out = (char *) palloc(minhash::signature_text_capacity(sig->num_perm) + 1);
	size_t		len = minhash::format_signature_text((minhash::HashFamily) MinHashSigFamily(sig),
													 sig->seed, sig->values, sig->num_perm, out);

	out[len] = '\0';
	PG_RETURN_CSTRING(out);
}

/*
 * Binary form: uint8 version, uint8 flags, uint16 num_perm, int64 seed,
 * num_perm × uint32, all in network byte order. flags carries the family as
 * on disk (1.0 sent 0: native).
 */
extern "C" Datum
minhash_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int32		typmod = PG_GETARG_INT32(2);
	const uint8_t *data = (const uint8_t *) buf->data + buf->cursor;
	int			have = buf->len - buf->cursor;
	minhash::SigBinaryHeader h;
	int			need;
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
	check_typmod(h.num_perm, typmod);
	need = (int) minhash::signature_binary_size(h.num_perm);
	if (have != need)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary minhash: expected %d bytes, got %d", need, have),
				 errdetail("A signature of num_perm %d takes %d bytes: a %d-byte header and %d values of 4 bytes.",
						   h.num_perm, need, (int) minhash::kSigBinaryHeader, h.num_perm)));

	if ((h.flags & MINHASH_FLAGS_FAMILY_MASK) == MINHASH_FAMILY_DATASKETCH && h.seed > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid datasketch seed %llu in binary minhash", (unsigned long long) h.seed)));

	sig = minhash_sig_alloc(h.num_perm, h.seed, h.flags & MINHASH_FLAGS_FAMILY_MASK);
	(void) minhash::decode_signature_values(data, (size_t) have, h.num_perm, sig->values);
	buf->cursor += need;
	PG_RETURN_MINHASH_P(sig);
}

extern "C" Datum
minhash_send(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbyte(&buf, sig->version);
	pq_sendbyte(&buf, sig->flags);
	pq_sendint16(&buf, sig->num_perm);
	pq_sendint64(&buf, sig->seed);
	for (int i = 0; i < sig->num_perm; i++)
		pq_sendint32(&buf, sig->values[i]);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

extern "C" Datum
minhash_typmod_in(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int			n;
	int32	   *mods = ArrayGetIntegerTypmods(arr, &n);

	if (n != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid type modifier"),
				 errdetail("Type minhash takes one modifier, num_perm: minhash(128).")));
	if (mods[0] < MINHASH_MIN_NUM_PERM || mods[0] > MINHASH_MAX_NUM_PERM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_perm for type minhash must be between %d and %d, not %d",
						MINHASH_MIN_NUM_PERM, MINHASH_MAX_NUM_PERM, mods[0])));
	PG_RETURN_INT32(mods[0]);
}

extern "C" Datum
minhash_typmod_out(PG_FUNCTION_ARGS)
{
	int32		typmod = PG_GETARG_INT32(0);

	PG_RETURN_CSTRING(typmod >= 0 ? psprintf("(%d)", typmod) : pstrdup(""));
}

/* The length-coercion cast minhash → minhash(k): assignment checks, explicit truncates. */
extern "C" Datum
minhash_enforce_typmod(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);
	int32		typmod = PG_GETARG_INT32(1);
	bool		is_explicit = PG_GETARG_BOOL(2);
	MinHashSig *prefix;

	valid_typmod(typmod);
	if (typmod < 0 || sig->num_perm == typmod)
		PG_RETURN_MINHASH_P(sig);
	if (!is_explicit || typmod > sig->num_perm)
		check_typmod(sig->num_perm, typmod);

	prefix = minhash_sig_alloc(typmod, sig->seed, MinHashSigFamily(sig));
	memcpy(prefix->values, sig->values, sizeof(uint32) * typmod);
	PG_RETURN_MINHASH_P(prefix);
}
