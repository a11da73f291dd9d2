/*
 * Input/output of type minhash: the text form seed:[v1,...,vk], the binary
 * form, and the typmod minhash(k).
 *
 * Typmod semantics: a signature's first j values are the signature under the
 * first j hash functions (their parameters depend on (seed, index) only), so
 * an explicit cast to a smaller k truncates. Anything else whose k differs
 * from the typmod is an error rather than a silent change of precision.
 */
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

static inline bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static const char *
skip_space(const char *p)
{
	while (is_space(*p))
		p++;
	return p;
}

/* Literals longer than this are cut in messages: a 1024-value signature is 10 kB. */
#define LITERAL_SHOWN 64

[[noreturn]] static void
bad_literal(const char *str, const char *detail)
{
	int			len = strlen(str);
	int			shown = pg_mbcliplen(str, len, LITERAL_SHOWN);

	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type %s: \"%.*s%s\"", "minhash",
					shown, str, shown < len ? "..." : ""),
			 errdetail_internal("%s", detail),
			 errhint("The text form is seed:[v1,v2,...,vk] with 1 to %d unsigned 32-bit values.",
					 MINHASH_MAX_NUM_PERM)));
}

/* Decimal digits at *pp into an unsigned value <= limit; false if none or too big. */
static bool
parse_unsigned(const char **pp, uint64 limit, uint64 *out)
{
	const char *p = *pp;
	uint64		v = 0;

	if (!isdigit((unsigned char) *p))
		return false;
	for (; isdigit((unsigned char) *p); p++)
	{
		unsigned	d = (unsigned) (*p - '0');

		if (v > (limit - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*pp = p;
	*out = v;
	return true;
}

/* Signed 64-bit seed, the same number minhash_seed() and the seed arguments use */
static bool
parse_seed(const char **pp, int64 *out)
{
	const char *p = *pp;
	bool		neg = false;
	uint64		mag;

	if (*p == '-' || *p == '+')
	{
		neg = (*p == '-');
		p++;
	}
	if (!parse_unsigned(&p, neg ? (uint64) PG_INT64_MAX + 1 : (uint64) PG_INT64_MAX, &mag))
		return false;
	*out = neg ? (int64) (0 - mag) : (int64) mag;
	*pp = p;
	return true;
}

/* The enforcement shared by input, recv and the length-coercion cast */
static void
check_typmod(int num_perm, int32 typmod)
{
	if (typmod >= 0 && num_perm != typmod)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signature has num_perm %d, but the type is minhash(%d)",
						num_perm, typmod),
				 errhint("An explicit cast to minhash(k) shortens a signature; none lengthens it.")));
}

extern "C" Datum
minhash_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	int32		typmod = PG_GETARG_INT32(2);
	uint32		values[MINHASH_MAX_NUM_PERM];
	int			n = 0;
	int64		seed;
	const char *p = skip_space(str);
	MinHashSig *sig;

	if (!parse_seed(&p, &seed))
		bad_literal(str, "Expected a signed 64-bit integer seed at the start.");
	p = skip_space(p);
	if (*p++ != ':')
		bad_literal(str, "Expected \":\" after the seed.");
	p = skip_space(p);
	if (*p++ != '[')
		bad_literal(str, "Expected \"[\" after \":\".");
	for (;;)
	{
		uint64		v;

		p = skip_space(p);
		if (!parse_unsigned(&p, PG_UINT32_MAX, &v))
			bad_literal(str, n == 0 && *p == ']'
						? "A signature has at least one value."
						: "Expected an unsigned 32-bit integer value.");
		if (n == MINHASH_MAX_NUM_PERM)
			bad_literal(str, "A signature has at most 1024 values.");
		values[n++] = (uint32) v;
		p = skip_space(p);
		if (*p == ',')
		{
			p++;
			continue;
		}
		if (*p == ']')
		{
			p++;
			break;
		}
		bad_literal(str, "Expected \",\" or \"]\" after a value.");
	}
	p = skip_space(p);
	if (*p != '\0')
		bad_literal(str, "Unexpected text after \"]\".");

	check_typmod(n, typmod);
	sig = minhash_sig_alloc(n, (uint64) seed);
	memcpy(sig->values, values, sizeof(uint32) * n);
	PG_RETURN_MINHASH_P(sig);
}

extern "C" Datum
minhash_out(PG_FUNCTION_ARGS)
{
	MinHashSig *sig = PG_GETARG_MINHASH_P(0);
	/* seed (≤ 20 chars), ":[", k values of ≤ 10 digits and a comma, "]", NUL */
	char	   *out = (char *) palloc(24 + (Size) sig->num_perm * 11 + 2);
	char	   *p = out;

	p += pg_lltoa((int64) sig->seed, p);
	*p++ = ':';
	*p++ = '[';
	for (int i = 0; i < sig->num_perm; i++)
	{
		if (i > 0)
			*p++ = ',';
		p += pg_ultoa_n(sig->values[i], p);
	}
	*p++ = ']';
	*p = '\0';
	PG_RETURN_CSTRING(out);
}

/*
 * Binary form: uint8 version, uint8 flags, uint16 num_perm, int64 seed,
 * num_perm × uint32, all in network byte order.
 */
extern "C" Datum
minhash_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int32		typmod = PG_GETARG_INT32(2);
	int			version = pq_getmsgbyte(buf);
	int			flags = pq_getmsgbyte(buf);
	int			num_perm = (int) pq_getmsgint(buf, 2);
	uint64		seed = (uint64) pq_getmsgint64(buf);
	MinHashSig *sig;

	if (version != MINHASH_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("unsupported minhash binary format version %d", version)));
	if (flags != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid flags %d in binary minhash", flags)));
	if (num_perm < MINHASH_MIN_NUM_PERM || num_perm > MINHASH_MAX_NUM_PERM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid num_perm %d in binary minhash", num_perm)));
	check_typmod(num_perm, typmod);

	sig = minhash_sig_alloc(num_perm, seed);
	for (int i = 0; i < num_perm; i++)
		sig->values[i] = (uint32) pq_getmsgint(buf, 4);
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

	if (typmod < 0 || sig->num_perm == typmod)
		PG_RETURN_MINHASH_P(sig);
	if (!is_explicit || typmod > sig->num_perm)
		check_typmod(sig->num_perm, typmod);

	prefix = minhash_sig_alloc(typmod, sig->seed);
	memcpy(prefix->values, sig->values, sizeof(uint32) * typmod);
	PG_RETURN_MINHASH_P(prefix);
}
