// Exact and estimated Jaccard similarity, and the set size behind a signature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace minhash {

// One element of a set given as a list: its bytes (not owned) and a 64-bit
// hash of them. Elements are equal when their bytes are; the hash must be a
// function of the bytes (hash_bytes, say) and serves to order them, so most
// comparisons are one integer compare and bytes are compared only between
// elements of equal hash.
struct HashedElement {
    uint64_t hash;
    const char *data;
    size_t len;
};

// |A ∩ B| / |A ∪ B| over the distinct elements of the lists a[0..na) and
// b[0..nb) (repeats allowed); two empty sets are identical (1.0). Exact: the
// hash never decides equality. Reorders a and b in place and uses scratch,
// room for max(na, nb) elements; allocates nothing. Polls interrupt between
// bounded steps: on Status::Interrupted, a and b still hold their elements
// (in another order), so the caller may simply call again.
Status jaccard_exact(HashedElement *a, size_t na, HashedElement *b, size_t nb,
                     HashedElement *scratch, InterruptFlag interrupt, double *result) noexcept;

// The same for sets of strings (tests, tools).
double jaccard_exact(const std::vector<std::string> &a, const std::vector<std::string> &b);
// Sets of 64-bit values, e.g. hashes.
double jaccard_exact_hashes(std::vector<uint64_t> a, std::vector<uint64_t> b);

// Share of positions where the two signatures agree: an unbiased estimate of
// the Jaccard similarity, standard error sqrt(J(1-J)/k).
double jaccard_estimate(const uint32_t *a, const uint32_t *b, int num_perm) noexcept;

// Number of equal positions (the estimate's numerator), for the index's verifier.
int matching_values(const uint32_t *a, const uint32_t *b, int num_perm) noexcept;

// Estimated number of distinct elements: each minimum of n uniform hashes in
// [0, 2^32) has mean 2^32/(n+1), so n ≈ k / Σ(v_i / 2^32) − 1. 0 for the empty set.
double cardinality_estimate(const uint32_t *sig, int num_perm) noexcept;

}  // namespace minhash
