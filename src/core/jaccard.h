// Exact and estimated Jaccard similarity, and the set size behind a signature.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace minhash {

// |A ∩ B| / |A ∪ B| over distinct elements; two empty sets are identical (1.0).
double jaccard_exact(std::vector<std::string> a, std::vector<std::string> b);
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
