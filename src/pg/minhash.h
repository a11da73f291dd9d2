/*
 * Shared declarations of the PostgreSQL glue: the on-disk signature type,
 * GUCs, and the C++/PostgreSQL boundary rules.
 *
 * Boundary rules (see DEVELOPERS.md):
 *  - every extern "C" entry point catches C++ exceptions before they leave it,
 *    then reports with ereport() *after* the catch block has ended;
 *  - no object with a non-trivial destructor is alive in a frame that calls
 *    anything that may elog(ERROR)/palloc/CHECK_FOR_INTERRUPTS/detoast: core
 *    work runs in its own noexcept helper that takes and fills plain buffers.
 *
 * Include the core headers (src/core/) before this one: PostgreSQL's
 * port.h redefines printf-family names that the C++ standard headers use.
 */
#ifndef MINHASH_PG_MINHASH_H
#define MINHASH_PG_MINHASH_H

#include <csignal>
#include <cstddef>
#include <cstdint>

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}
#include "pg/compat.h"

namespace minhash {
struct PermutationFamily;
struct ShingleSpec;
}

/*
 * The minhash varlena. Layout (version 1), all little-endian on disk as the
 * server's native order:
 *   int32  vl_len_    varlena header
 *   uint8  version    MINHASH_FORMAT_VERSION
 *   uint8  flags      0 (reserved)
 *   uint16 num_perm   k, 1..1024
 *   uint64 seed       seed of the hash family
 *   uint32 values[k]  the minima
 * The type is declared with ALIGNMENT = double so seed is 8-aligned once detoasted.
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
#define MINHASH_SIG_SIZE(k) (offsetof(MinHashSig, values) + sizeof(uint32) * (k))
/* Mirrors minhash::kMinNumPerm/kMaxNumPerm for code that does not include the core. */
#define MINHASH_MIN_NUM_PERM 1
#define MINHASH_MAX_NUM_PERM 1024

/* Detoasts and checks version and size: a damaged datum is an error, not a crash. */
#define DatumGetMinHashSig(d) minhash_sig_detoast(d)
#define PG_GETARG_MINHASH_P(n) DatumGetMinHashSig(PG_GETARG_DATUM(n))
#define PG_RETURN_MINHASH_P(x) PG_RETURN_POINTER(x)

/* src/pg/sig.cpp */

/* palloc'd, zeroed signature with header filled in, values set to the empty set's */
MinHashSig *minhash_sig_alloc(int num_perm, uint64 seed);

/* ERRCODE_INVALID_PARAMETER_VALUE unless a and b have the same k and seed */
void minhash_check_compatible(const MinHashSig *a, const MinHashSig *b);

/* PG_DETOAST_DATUM plus ERRCODE_DATA_CORRUPTED if the header is not a valid version 1 */
MinHashSig *minhash_sig_detoast(Datum d);

/* ERRCODE_INVALID_PARAMETER_VALUE unless 1 <= num_perm <= 1024 */
void minhash_check_num_perm(int num_perm);

/*
 * The hash family for (num_perm, seed), cached in *slot (allocated in mcxt on
 * first use, typically fn_mcxt): deriving 2·k 64-bit parameters per call would
 * cost as much as hashing a short document.
 */
const minhash::PermutationFamily *minhash_family(MemoryContext mcxt,
												 minhash::PermutationFamily **slot,
												 int num_perm, uint64 seed);

/*
 * Core failures, reported by the noexcept helpers that call the core and
 * turned into ereport() by the fmgr function once the helper has returned.
 */
typedef enum CoreErrorKind
{
	CORE_OK = 0,
	CORE_OUT_OF_MEMORY,
	CORE_FAILED
} CoreErrorKind;

typedef struct CoreError
{
	CoreErrorKind kind;
	char		message[256];
} CoreError;

/* Fill a CoreError from the exception being handled; use only inside catch (...). */
void minhash_core_error_from_current(CoreError *err) noexcept;

/* ereport(ERROR) for a failed helper: out of memory or an internal error */
[[noreturn]] void minhash_report_core_error(const CoreError *err);

/*
 * Interrupt flag for a core loop: InterruptPending when CHECK_FOR_INTERRUPTS
 * is guaranteed to clear it (so a retry makes progress), else none.
 */
const volatile sig_atomic_t *minhash_interrupt_flag(void);

/* src/pg/element.cpp: set elements by their text form */

/*
 * How to get an element's text form: its type's output function, with a fast
 * path for text-like types whose output is their bytes. The text is converted
 * to UTF-8 so a set hashes alike in every database encoding, and the same as
 * the shingles minhash(text) hashes.
 */
typedef struct ElementText
{
	Oid			typid;
	bool		is_text;		/* text, varchar, bpchar: the bytes are the output */
	FmgrInfo	outfn;
} ElementText;

void		element_text_init(ElementText *et, Oid typid, MemoryContext mcxt);

/*
 * The UTF-8 text form of a non-NULL element. *to_free is set to memory the
 * caller may pfree after use (NULL if none).
 */
const char *element_text(ElementText *et, Datum value, size_t *len, void **to_free);

/* 64-bit hash (minhash::hash_bytes) of the element's UTF-8 text form */
uint64		element_hash(ElementText *et, Datum value);

/* src/pg/shingle_funcs.cpp: arguments shared with minhash(text) */

/* unit name and k (0 = the unit's default) checked: ERRCODE_INVALID_PARAMETER_VALUE */
minhash::ShingleSpec minhash_shingle_spec(text *unit_name, int32 k);

/* the document's bytes in UTF-8 (converted if the database encoding differs) */
const char *minhash_doc_utf8(text *doc, size_t *len);

/* src/pg/guc.cpp */

/* GUCs (minhash.*), read at execution time */
extern double minhash_similarity_threshold;

void		minhash_guc_init(void);

#endif
