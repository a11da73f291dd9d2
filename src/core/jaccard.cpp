// Exact and estimated Jaccard similarity, and the cardinality estimate.
#include "core/jaccard.h"

#include <algorithm>

#include "core/signature.h"

namespace minhash {

namespace {

// Sorts and deduplicates both, then counts the intersection by merging.
template <class T>
double jaccard_sorted(std::vector<T> &a, std::vector<T> &b) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    if (a.empty() && b.empty())
        return 1.0;
    size_t common = 0;
    auto i = a.begin();
    auto j = b.begin();
    while (i != a.end() && j != b.end()) {
        if (*i < *j) {
            ++i;
        } else if (*j < *i) {
            ++j;
        } else {
            ++common;
            ++i;
            ++j;
        }
    }
    const size_t uni = a.size() + b.size() - common;
    return static_cast<double>(common) / static_cast<double>(uni);
}

}  // namespace

double jaccard_exact(std::vector<std::string> a, std::vector<std::string> b) {
    return jaccard_sorted(a, b);
}

double jaccard_exact_hashes(std::vector<uint64_t> a, std::vector<uint64_t> b) {
    return jaccard_sorted(a, b);
}

int matching_values(const uint32_t *a, const uint32_t *b, int num_perm) noexcept {
    int same = 0;
    for (int i = 0; i < num_perm; ++i)
        same += a[i] == b[i];
    return same;
}

double jaccard_estimate(const uint32_t *a, const uint32_t *b, int num_perm) noexcept {
    if (num_perm <= 0)
        return 0.0;
    return static_cast<double>(matching_values(a, b, num_perm)) / num_perm;
}

// Each value is the minimum of n (nearly) independent uniform 32-bit hashes,
// so v/2^32 has mean 1/(n+1): n ≈ k / Σ(v_i / 2^32) − 1. The +0.5 centres
// each integer value in its cell of [0, 2^32).
double cardinality_estimate(const uint32_t *sig, int num_perm) noexcept {
    if (num_perm <= 0)
        return 0.0;
    bool empty = true;
    double sum = 0.0;
    for (int i = 0; i < num_perm; ++i) {
        empty = empty && sig[i] == kEmptyValue;
        sum += (static_cast<double>(sig[i]) + 0.5) / 4294967296.0;
    }
    if (empty)
        return 0.0;
    return std::max(0.0, num_perm / sum - 1.0);
}

}  // namespace minhash
