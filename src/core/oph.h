// One-permutation hashing (OPH) with optimal densification: a MinHash
// family whose cost per element is O(1) instead of O(k).
//
// Classic MinHash (signature.h) applies k hash functions to every element
// and keeps k minima: O(k) per element. OPH (Li, Owen and Zhang, "One
// Permutation Hashing", NIPS 2012) hashes each element once; the hash picks
// one of k bins and the element competes for that bin's minimum only. A set
// with fewer elements than bins leaves some bins empty, and empty bins carry
// no information; densification fills each empty bin with the value of a
// non-empty one. Shrivastava's optimal densification ("Optimal Densification
// for Fast and Accurate Minwise Hashing", ICML 2017) probes, for empty bin i,
// the bins h(i, 1), h(i, 2), ... of a fixed random sequence until one is
// non-empty and copies its value. The sequence depends only on (seed, i,
// attempt), not on the set, so two sets borrow from the same bin whenever
// it is non-empty in both, and the fraction of equal positions stays an
// unbiased estimate of the Jaccard similarity with a variance close to
// classic MinHash's (bench/hash_families.cpp measures it).
//
// Element hashes. For text, each unit (word, or code point) is hashed once
// (oph_unit_hash) and a shingle's hash combines its k unit hashes with a rolling
// polynomial, so a k-shingle costs O(1) however long it is; classic native
// signatures hash every shingle's bytes instead (k times the text). The
// combination is a different function of the shingle than XXH3 of its
// bytes: OPH is a family of its own, never comparable with the others.
//
// Union: the undensified sketch of A ∪ B is the element-wise minimum of the
// sketches of A and B, exactly; densified signatures do not merge that way
// (a borrowed value is not a bin minimum). So code that merges (aggregates)
// keeps sketches and densifies once at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/shingle.h"
#include "core/status.h"

namespace minhash {

// Trivially copyable (a cache in palloc'd memory can hold it).
struct OphFamily {
    int num_bins;   // k, kMinNumPerm..kMaxNumPerm
    uint64_t seed;
    uint64_t key;   // mixed into every element hash, derived from seed
};

void init_oph_family(OphFamily *family, int num_bins, uint64_t seed) noexcept;

// The hash of one unit's (or array element's) bytes. Up to 16 bytes: the
// bytes zero-padded to 16 and read as two little-endian 64-bit words lo, hi;
// with a = lo ^ 0x8F3A5C7E91D2B400 and b = hi ^ 0xC4E1B7A3569D2F00 ^
// (len << 56), the XOR of the two halves of the 128-bit product a·b. Longer
// units: XXH3-64, seed 0.
uint64_t oph_unit_hash(const void *data, size_t len) noexcept;

// The element hash of a shingle made of m ≥ 1 units with hashes u[0..m):
// Σ u[j]·P^(m-1-j) mod 2^64 (P a fixed odd constant). Streaming callers
// roll it in O(1) per shingle; this is the definition they must match.
uint64_t oph_combine(const uint64_t *unit_hashes, size_t m) noexcept;

// The element hashes of a normalized text's k-shingles by the definition,
// in order: oph_combine of each window of k unit hashes (oph_unit_hash), or
// of all of them when the text has 1..k-1 units. oph_sketch_of_text folds
// in the same hashes, computed as it streams; this is the slow reference
// the tests and the fuzzer compare it with.
std::vector<uint64_t> oph_element_hashes(const NormalizedText &norm, int k);

// Folds n element hashes into an undensified sketch of k bins (each
// initialised to kEmptyValue by signature_init): per element one mix, one
// bin, one minimum.
void oph_update(const OphFamily &family, const uint64_t *hashes, size_t n,
                uint32_t *sketch) noexcept;

// sig = the densified sketch. sig may alias sketch (then the sketch is
// lost). An all-empty sketch (the empty set) stays all kEmptyValue.
void oph_densify(const OphFamily &family, const uint32_t *sketch, uint32_t *sig) noexcept;

namespace detail {
// oph_densify by the definition alone (every empty bin probes its sequence),
// for the tests: oph_densify reads a table of the sequences' first arrivals
// instead when few bins are filled, and must give the same bits.
void oph_densify_by_probing(const OphFamily &family, const uint32_t *sketch, uint32_t *sig) noexcept;
}  // namespace detail

// Shingles doc (as shingle.h defines shingles) and folds every shingle's
// element hash (oph_combine of its unit hashes) into the undensified
// sketch, which must be initialised. Polls interrupt between blocks.
// Returns Ok, Interrupted (sketch incomplete), TooLarge (document too
// large for 32-bit offsets) or OutOfMemory.
Status oph_sketch_of_text(const OphFamily &family, std::string_view doc, const ShingleSpec &spec,
                          uint32_t *sketch, InterruptFlag interrupt) noexcept;

// The same for a text already split into units (text search lexemes), k
// units a shingle. Allocates nothing: Ok or Interrupted.
Status oph_sketch_of_units(const OphFamily &family, const UnitText &units, int k,
                           uint32_t *sketch, InterruptFlag interrupt) noexcept;

// Estimated number of distinct elements behind an undensified sketch of k
// bins: while bins are empty, linear counting (k ln(k / empty), the
// expected number of elements that leave that many bins empty); once all
// are filled, each bin's minimum stands for about n/k elements, so
// n ≈ k (k / Σ(v_i / 2^32) − 1), as cardinality_estimate does per value.
// 0 for the empty set.
double oph_cardinality_estimate(const uint32_t *sketch, int num_bins) noexcept;

namespace detail {
// The XOR of the two 64-bit halves of the 128-bit product a·b, from 32-bit
// pieces: oph_unit_hash's fold where the compiler has no 128-bit integers
// (exposed for the tests, which compare it with the 128-bit product).
uint64_t fold_product_by_halves(uint64_t a, uint64_t b) noexcept;
}  // namespace detail

}  // namespace minhash
