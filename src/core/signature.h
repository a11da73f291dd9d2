// MinHash signatures: k hash functions standing in for k random permutations.
// A signature holds, for each function, the minimum over the set's elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/shingle.h"

namespace minhash {

constexpr int kMinNumPerm = 1;
constexpr int kMaxNumPerm = 1024;
constexpr int kDefaultNumPerm = 128;
constexpr uint64_t kDefaultSeed = 1;
// The value of every position in the signature of the empty set.
constexpr uint32_t kEmptyValue = UINT32_MAX;

// How elements are hashed and permuted. The number is stored in every
// signature (its flags byte), so keep the values stable.
//  Native      XXH3-64 of the bytes, folded to 32 bits, then multiply-add-shift
//              with splitmix64 parameters (signature.cpp)
//  Datasketch  datasketch.MinHash's defaults, bit for bit (datasketch.h)
//  Oph         one-permutation hashing with optimal densification (oph.h): one
//              hash per element instead of k; a text's words hashed once each
enum class HashFamily : uint8_t { Native = 0, Datasketch = 1, Oph = 2 };
constexpr int kNumHashFamilies = 3;

// "native" / "datasketch" / "oph"; false for any other name.
bool parse_hash_family(std::string_view name, HashFamily *out) noexcept;
const char *hash_family_name(HashFamily family) noexcept;

// The element hash of a family, over an element's (or shingle's) bytes:
// XXH3-64 (hash_bytes) for Native, oph_unit_hash for Oph, sha1_hash32 for
// Datasketch.
uint64_t family_hash(HashFamily family, const void *data, size_t len) noexcept;

// Parameters of the k hash functions, derived deterministically from
// (seed, index) only -- not from k -- so the first j functions of a k-function
// family are the j-function family: a signature's prefix is a valid signature.
// (Datasketch draws (a_i, b_i) in order from one generator: the same holds.)
// Trivially copyable on purpose: the PostgreSQL glue caches it in palloc'd memory.
struct PermutationFamily {
    int num_perm;
    uint64_t seed;
    HashFamily kind;
    uint64_t a[kMaxNumPerm];
    uint64_t b[kMaxNumPerm];
};

// Datasketch seeds must be at most kMaxDatasketchSeed (only the low 32 bits are used).
void init_permutation_family(PermutationFamily *family, int num_perm, uint64_t seed,
                             HashFamily kind = HashFamily::Native) noexcept;

// sig[0..k) = kEmptyValue
void signature_init(uint32_t *sig, int num_perm) noexcept;

// Folds n element hashes (from family_hash with the family's kind) into sig: sig[i] = min(sig[i], h_i(x)).
void signature_update(const PermutationFamily &family, const uint64_t *hashes, size_t n,
                      uint32_t *sig) noexcept;

// Shingles doc and folds every shingle into sig (which must be initialised).
// Polls interrupt regularly; on Interrupted sig is incomplete (a partial
// fold of the same shingles: calling again completes it). TooLarge: the
// document exceeds the normalizer's 32-bit offsets. OutOfMemory, Failure:
// see status.h.
Status signature_of_text(const PermutationFamily &family, std::string_view doc,
                         const ShingleSpec &spec, uint32_t *sig, InterruptFlag interrupt) noexcept;

// The same for a text already split into units (text search lexemes), k
// units a shingle. Allocates nothing: Ok or Interrupted.
Status signature_of_units(const PermutationFamily &family, const UnitText &units, int k,
                          uint32_t *sig, InterruptFlag interrupt) noexcept;

// Element-wise minimum: the signature of the union of the two sets.
void signature_merge(uint32_t *into, const uint32_t *other, int num_perm) noexcept;

// The native family's update kernels by instruction set (signature_impl.h).
// Every kernel computes the same bits; the choice is speed only. By default
// signature_update takes the widest this CPU runs, or the one the
// environment variable MINHASH_SIMD names ("portable", "avx2", "avx512") when
// the process starts; simd_use changes it for the whole process (the
// PostgreSQL setting minhash.simd), so one host can measure each kernel.
enum class SimdLevel : uint8_t { Portable = 0, Avx2 = 1, Avx512 = 2 };

// The widest level this CPU runs.
SimdLevel simd_best() noexcept;
// Uses `level`, or the widest one below it this CPU runs; returns the level in use.
SimdLevel simd_use(SimdLevel level) noexcept;
// The level signature_update uses now.
SimdLevel simd_in_use() noexcept;
// What the process started with: MINHASH_SIMD if set and valid, else simd_best().
SimdLevel simd_default() noexcept;
bool parse_simd_level(std::string_view name, SimdLevel *out) noexcept;
const char *simd_level_name(SimdLevel level) noexcept;

}  // namespace minhash
