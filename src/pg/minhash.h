/*
 * Shared declarations of the PostgreSQL glue: the on-disk signature type,
 * GUCs, and the C++/PostgreSQL boundary rules.
 *
 * Boundary rules (see DEVELOPERS.md), enforced by the compiler where it can:
 *  - src/pg is compiled with -fno-exceptions (pg/pg_prelude.h checks it): no
 *    C++ exception can be thrown or caught in the glue, so none can leave an
 *    extern "C" entry point; the core's entry points are noexcept and return
 *    minhash::Status, which call_core_until_done() (pg/core_call.h) turns
 *    into CHECK_FOR_INTERRUPTS, a retry with more room, or ereport();
 *  - no object with a non-trivial destructor is alive in a frame that calls
 *    anything that may elog(ERROR)/palloc/CHECK_FOR_INTERRUPTS/detoast: the
 *    glue keeps no C++ objects but plain structs and trivially destructible
 *    lambdas (checked by call_core_until_done), and takes and fills plain
 *    buffers.
 *
 * Every file of src/pg includes pg/pg_prelude.h first.
 */
#ifndef MINHASH_PG_MINHASH_H
#define MINHASH_PG_MINHASH_H

#include "pg/pg_prelude.h"

extern "C" {
#include "utils/relcache.h"
}

namespace minhash {
struct PermutationFamily;
struct ShingleSpec;
struct UnitText;
}

/*
 * The minhash varlena. Layout (format version 1), all little-endian on disk
 * as the server's native order:
 *   int32  vl_len_    varlena header
 *   uint8  version    MINHASH_FORMAT_VERSION
 *   uint8  flags      bits 0-3: the hash family (minhash::HashFamily);
 *                     bits 4-5: the value width (minhash::ValueWidth: 0 =
 *                     32 bits, 1 = 16, 2 = 8); bits 6-7 0 (reserved)
 *   uint16 num_perm   k, 1..MINHASH_MAX_NUM_PERM (1024)
 *   uint64 seed       seed of the hash family
 *   values            k minima: uint32, or their low 16 or 8 bits packed
 *                     as uint16 or uint8 (a compact signature, core/bbit.h)
 * The type is declared with ALIGNMENT = double so seed is 8-aligned once detoasted.
 *
 * Version 1.0 of the extension wrote flags = 0 and had one family, the
 * native one, which is family 0, and one width, 32 bits, which is width 0:
 * every 1.0 and 1.1 signature (on disk, in text or binary form) reads as
 * before without conversion, and the format version stays 1. A library
 * older than the flags it meets refuses the value (invalid flags) rather
 * than misreading it.
 *
 * The oph family (core/oph.h) stores at 32 bits its undensified sketch: an
 * empty bin holds kEmptyValue (UINT32_MAX). Comparisons densify it first
 * (minhash_sig_values32), so the union of two sketches, the element-wise
 * minimum, stays exact (|, minhash_merge_agg). A compact oph signature is
 * densified before its values are narrowed: compact signatures never merge.
 */
typedef struct MinHashSig
{
	int32		vl_len_;
	uint8		version;
	uint8		flags;
	uint16		num_perm;
	uint64		seed;
	uint32		values[FLEXIBLE_ARRAY_MEMBER];
} MinHashSig;

#define MINHASH_FORMAT_VERSION 1
#define MINHASH_FLAGS_FAMILY_MASK 0x0F
#define MINHASH_FLAGS_WIDTH_SHIFT 4
#define MINHASH_FLAGS_WIDTH_MASK 0x30
/* families 0 .. MINHASH_NUM_FAMILIES-1 exist (mirrors minhash::kNumHashFamilies) */
#define MINHASH_NUM_FAMILIES 3
#define MINHASH_FAMILY_NATIVE 0
#define MINHASH_FAMILY_DATASKETCH 1
#define MINHASH_FAMILY_OPH 2
/* widths 0 .. MINHASH_NUM_WIDTHS-1 (mirrors minhash::kNumValueWidths) */
#define MINHASH_NUM_WIDTHS 3
#define MINHASH_WIDTH_32 0
#define MinHashSigFamily(sig) ((int) ((sig)->flags & MINHASH_FLAGS_FAMILY_MASK))
#define MinHashSigWidth(sig) ((int) (((sig)->flags & MINHASH_FLAGS_WIDTH_MASK) >> MINHASH_FLAGS_WIDTH_SHIFT))
#define MINHASH_WIDTH_BYTES(w) ((Size) 4 >> (w))
/* bits kept of each value: 32, 16, 8 */
#define MINHASH_WIDTH_BITS(w) (32 >> (w))
#define MINHASH_SIG_SIZE(k) (offsetof(MinHashSig, values) + sizeof(uint32) * (k))
#define MINHASH_SIG_SIZE_W(k, w) (offsetof(MinHashSig, values) + MINHASH_WIDTH_BYTES(w) * (k))
/* Mirrors minhash::kMinNumPerm/kMaxNumPerm for code that does not include the core. */
#define MINHASH_MIN_NUM_PERM 1
#define MINHASH_MAX_NUM_PERM 1024

/*
 * The typmod minhash(k) or minhash(k, bits): k in the low 16 bits, the
 * width code above them, so that 1.0's and 1.1's typmods (k alone) mean
 * 32-bit values as they always did.
 */
#define MINHASH_TYPMOD(k, w) ((int32) ((k) | ((w) << 16)))
#define MinHashTypmodNumPerm(t) ((int) ((t) & 0xFFFF))
#define MinHashTypmodWidth(t) ((int) ((t) >> 16))

/*
 * Two ways to read a signature datum:
 *  - PG_GETARG_MINHASH_P / minhash_sig_detoast: as stored (any family and
 *    width; oph undensified), header and size checked;
 *  - DatumGetMinHashSig / minhash_sig_index_form: 32-bit values as the lsh
 *    index reads them through sig->values: an oph sketch densified, a
 *    compact signature's values zero-extended (copies). The header is the
 *    datum's, so MinHashSigWidth still says how many bits the values have;
 *    such a copy is a working form for the index, never a datum (its size
 *    does not match its width code).
 */
#define DatumGetMinHashSig(d) minhash_sig_index_form(d)
#define PG_GETARG_MINHASH_P(n) minhash_sig_detoast(PG_GETARG_DATUM(n))
#define PG_RETURN_MINHASH_P(x) PG_RETURN_POINTER(x)

/* src/pg/sig.cpp */

/* palloc'd, zeroed signature with header filled in, values set to the empty set's */
MinHashSig *minhash_sig_alloc(int num_perm, uint64 seed, int family);

/* the same at a width (minhash::ValueWidth code); compact values left 0 */
MinHashSig *minhash_sig_alloc_width(int num_perm, uint64 seed, int family, int width);

/* true if flags is a valid flags byte (a known family and width, reserved bits 0) */
bool		minhash_flags_valid(int flags);

/* "native", "datasketch", "oph" */
const char *minhash_family_name(int family);

/*
 * The family named by an enum minhash_family value (its label), and the seed
 * checked against what the family accepts: ERRCODE_INVALID_PARAMETER_VALUE.
 */
int			minhash_family_arg(Datum family_enum);
void		minhash_check_family_seed(int family, uint64 seed);

/* the width code of a bits argument (8, 16 or 32), else ERRCODE_INVALID_PARAMETER_VALUE */
int			minhash_width_arg(int64 bits);

/*
 * ERRCODE_INVALID_PARAMETER_VALUE unless a and b have the same family, k,
 * seed and width
 */
void minhash_check_compatible(const MinHashSig *a, const MinHashSig *b);

/*
 * ERRCODE_INVALID_PARAMETER_VALUE unless a and b can be merged (compatible,
 * 32-bit): what names the operation (|, minhash_merge_agg) in the message
 */
void		minhash_check_mergeable(const MinHashSig *a, const MinHashSig *b, const char *what);

/* PG_DETOAST_DATUM plus ERRCODE_DATA_CORRUPTED if the header is not a valid version 1 */
MinHashSig *minhash_sig_detoast(Datum d);

/* the 32-bit, densified working form the lsh index reads (see DatumGetMinHashSig) */
MinHashSig *minhash_sig_index_form(Datum d);

/*
 * The values comparisons see, widened to 32 bits into out (num_perm
 * entries): an oph sketch densified, compact values zero-extended.
 */
void		minhash_sig_values32(const MinHashSig *sig, uint32 *out);

/* The signature at a narrower (or equal) width: a palloc'd copy, or sig itself */
MinHashSig *minhash_sig_narrow(const MinHashSig *sig, int width);

/*
 * The similarity estimate of two compatible signatures (checked here): the
 * share of equal values, corrected for chance collisions at 16 and 8 bits
 * (core/bbit.h). The _in form keeps the densified form of oph arguments in
 * flinfo->fn_extra: a comparison function's, which has no other use for it.
 */
double		minhash_sig_estimate(const MinHashSig *a, const MinHashSig *b);
double		minhash_sig_estimate_in(FmgrInfo *flinfo, const MinHashSig *a, const MinHashSig *b);

/* ERRCODE_INVALID_PARAMETER_VALUE unless MINHASH_MIN_NUM_PERM <= num_perm <= MINHASH_MAX_NUM_PERM */
void minhash_check_num_perm(int num_perm);

/* src/pg/similarity.cpp */

/*
 * The fields of a minhash_query (query minhash, threshold float8), the right
 * side of %>=; false if either is NULL (matches nothing). A threshold outside
 * [0, 1] is an error (22023), as in minhash_similar(sig, q, t).
 */
bool minhash_query_fields(Datum query, Datum *sig, double *threshold);

/*
 * The hash family for (num_perm, seed), cached in *slot (allocated in mcxt on
 * first use, typically fn_mcxt): deriving 2·k 64-bit parameters per call would
 * cost as much as hashing a short document.
 */
const minhash::PermutationFamily *minhash_family(MemoryContext mcxt,
												 minhash::PermutationFamily **slot,
												 int num_perm, uint64 seed, int kind);

/* src/pg/element.cpp: the bytes that identify a set element */

/* how an element type is represented (element.cpp explains the choice) */
typedef enum ElementKind
{
	ELEMENT_TEXT_BYTES,			/* text, varchar, bpchar: the stored bytes are the output */
	ELEMENT_INT2,				/* integers: their decimal text, formatted here */
	ELEMENT_INT4,
	ELEMENT_INT8,
	ELEMENT_TEXT_OUT,			/* the output function (setting-independent types) */
	ELEMENT_SEND,				/* the binary send form */
	ELEMENT_HASH				/* the extended hash support function, 8 bytes */
} ElementKind;

typedef struct ElementText
{
	Oid			typid;
	ElementKind kind;
	Oid			collation;		/* ELEMENT_HASH of a collatable type */
	FmgrInfo	fn;				/* output, send or extended hash function */
} ElementText;

/* room element_bytes may use in the caller's scratch buffer */
#define ELEMENT_SCRATCH_SIZE 32

void		element_text_init(ElementText *et, Oid typid, MemoryContext mcxt);

/*
 * The bytes identifying a non-NULL element: UTF-8 text, send form or hash.
 * They may live in scratch (ELEMENT_SCRATCH_SIZE bytes); *to_free is set to
 * memory the caller may pfree after use (NULL if none).
 */
const char *element_bytes(ElementText *et, Datum value, size_t *len, void **to_free,
						  char *scratch);

/* 64-bit hash (minhash::family_hash) of the element's bytes (see element_bytes) */
uint64		element_hash(ElementText *et, Datum value, int family);

/* src/pg/owner.cpp: a table's user code runs as its owner (REINDEX's rules) */

typedef struct MinhashOwnerContext
{
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
} MinhashOwnerContext;

/*
 * Between begin and end, the current user is heap's owner, inside a
 * security-restricted operation, at a new GUC nest level with search_path
 * pg_catalog, pg_temp. Evaluate index expressions and predicates (and build
 * them: RelationGetIndexExpressions folds constants by calling functions)
 * only in there. Nothing in between may depend on the caller's rights.
 */
void		minhash_owner_begin(Relation heap, MinhashOwnerContext *ctx);
void		minhash_owner_end(MinhashOwnerContext *ctx);

/*
 * Whether evaluating expr (one the extension built, such as a key column
 * coerced to key_type) runs code that is not built in: functions, the I/O
 * functions of a conversion through text, domain constraints. Such code runs
 * as heap's owner (minhash_owner_begin), so it may only be the owner's or a
 * superuser's: *foreign_func (*foreign_type, a domain) is set to the first
 * that belongs to another role, else InvalidOid.
 */
bool		minhash_runs_user_code(Node *expr, Relation heap, Oid *foreign_func,
								   Oid *foreign_type);

/* src/pg/shingle_funcs.cpp: arguments shared with minhash(text) */

/* the function a unit was passed to: its arguments are named in the hints */
enum class UnitArgOf
{
	Minhash,					/* minhash(doc, unit, k, ...) */
	Shingles					/* minhash_shingles(doc, k, unit) */
};

/* unit name and k (0 = the unit's default) checked: ERRCODE_INVALID_PARAMETER_VALUE */
minhash::ShingleSpec minhash_shingle_spec(text *unit_name, int32 k,
										  UnitArgOf of = UnitArgOf::Minhash);

/* the document's bytes in UTF-8 (converted if the database encoding differs) */
const char *minhash_doc_utf8(text *doc, size_t *len);

/* ignore => 'accents, punctuation' as minhash::kIgnore* flags, checked */
uint8		minhash_ignore_arg(text *list);

/* src/pg/lexemes.cpp: words from a text search configuration */

/* The lexemes in document order, UTF-8, joined by single spaces in text */
typedef struct LexemeText
{
	char	   *text;
	uint32	   *starts;			/* byte offset of each lexeme */
	uint32	   *ends;			/* one past each lexeme */
	int			count;
} LexemeText;

void		minhash_lexemes(Oid cfg, text *doc, LexemeText *out);

/* k of a lexeme shingle checked as for words (0: the word default, 5) */
int			minhash_lexeme_k(int32 k);

/* folds the k-lexeme shingles into values (initialised by the caller) */
void		minhash_lexeme_signature(const LexemeText *lx, int k,
									 const minhash::PermutationFamily *family, uint32 *values);

/* the lexemes as units of the core's shingle window (pointing into lx) */
minhash::UnitText minhash_lexeme_units(const LexemeText *lx);

/* src/pg/signature_hints.cpp */

/* WARNING (once: *warned) that a shingle size k of 64 or more was likely meant as num_perm */
void		minhash_warn_large_k(int32 k, text *unit, bool *warned);

/* src/pg/guc.cpp */

/*
 * minhash.similarity_threshold, read when it is used (so SET applies to the
 * next query), as every reader must get it: an error if the value the user
 * set was rejected when the library loaded. The variable itself is private
 * to guc.cpp.
 */
double		minhash_threshold(void);

void		minhash_guc_init(void);

#endif
