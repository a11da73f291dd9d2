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
 */
#ifndef MINHASH_PG_MINHASH_H
#define MINHASH_PG_MINHASH_H

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}

#include <cstdint>

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

#define DatumGetMinHashSig(d) ((MinHashSig *) PG_DETOAST_DATUM(d))
#define PG_GETARG_MINHASH_P(n) DatumGetMinHashSig(PG_GETARG_DATUM(n))
#define PG_RETURN_MINHASH_P(x) PG_RETURN_POINTER(x)

/* palloc'd, zeroed signature with header filled in, values set to the empty set's */
MinHashSig *minhash_sig_alloc(int num_perm, uint64 seed);

/* ERRCODE_INVALID_PARAMETER_VALUE unless a and b have the same k and seed */
void minhash_check_compatible(const MinHashSig *a, const MinHashSig *b);

/* GUCs (minhash.*), defined in src/pg/guc.cpp, read at execution time */
extern double minhash_similarity_threshold;

#endif
