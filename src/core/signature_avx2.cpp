// The AVX2 signature kernel, selected at run time (signature.cpp) on CPUs
// that have AVX2; bit-identical to signature_update_portable (tested).
//
// Each 64-bit lane holds one function i with a_i, b_i. For a key x
// broadcast to every 32-bit lane:
//   vpmuludq(a, x)      = lo(a)·x                    (64-bit, exact)
//   + b                 (vpaddq)                      → t, 64-bit
//   vpmulld(a, x)       high 32-bit half of the lane = lo32(hi(a)·x)
//   t + that (vpaddd)   high half = (lo(a)·x + b + (hi(a)·x << 32)) >> 32 mod 2^32
// which is h_i(x) in the high half of the lane; the low half is junk that
// vpminud (per 32-bit lane) keeps separate. So five instructions evaluate and
// accumulate four functions for one key; a pass takes a block of keys, and
// sig is read and written once per block.
#include <algorithm>

#include "core/signature_impl.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace minhash {
namespace detail {

bool cpu_has_avx2() noexcept {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}

namespace {

constexpr size_t kBlock = 8;

// Functions [i, i+8) over the keys x[0..kBlock).
__attribute__((target("avx2"))) inline void update8(const uint64_t *a, const uint64_t *b,
                                                    const uint32_t *x, uint32_t *sig) {
    const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a));
    const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a + 4));
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b + 4));
    __m256i m0 = _mm256_set1_epi32(-1);
    __m256i m1 = m0;
    for (size_t j = 0; j < kBlock; ++j) {
        const __m256i xv = _mm256_set1_epi32(static_cast<int>(x[j]));
        const __m256i t0 = _mm256_add_epi32(_mm256_add_epi64(_mm256_mul_epu32(a0, xv), b0),
                                            _mm256_mullo_epi32(a0, xv));
        const __m256i t1 = _mm256_add_epi32(_mm256_add_epi64(_mm256_mul_epu32(a1, xv), b1),
                                            _mm256_mullo_epi32(a1, xv));
        m0 = _mm256_min_epu32(m0, t0);
        m1 = _mm256_min_epu32(m1, t1);
    }
    // High halves of m0 (functions i..i+3) and m1 (i+4..i+7) into 8 lanes.
    const __m256i mixed = _mm256_blend_epi32(_mm256_srli_epi64(m0, 32), m1, 0xAA);
    const __m256i order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m256i h = _mm256_permutevar8x32_epi32(mixed, order);
    __m256i *s = reinterpret_cast<__m256i *>(sig);
    _mm256_storeu_si256(s, _mm256_min_epu32(_mm256_loadu_si256(s), h));
}

}  // namespace

__attribute__((target("avx2"))) void signature_update_avx2(const PermutationFamily &family,
                                                           const uint64_t *hashes, size_t n,
                                                           uint32_t *sig) noexcept {
    const int k = std::clamp(family.num_perm, kMinNumPerm, kMaxNumPerm);
    const int k8 = k & ~7;
    for (size_t done = 0; done < n; done += kBlock) {
        uint32_t x[kBlock];
        const size_t m = std::min(kBlock, n - done);
        for (size_t j = 0; j < kBlock; ++j)
            x[j] = fold_hash(hashes[done + (j < m ? j : 0)]);
        for (int i = 0; i < k8; i += 8)
            update8(family.a + i, family.b + i, x, sig + i);
        for (int i = k8; i < k; ++i) {
            uint32_t v = sig[i];
            for (size_t j = 0; j < kBlock; ++j)
                v = std::min(v, permute(family.a[i], family.b[i], x[j]));
            sig[i] = v;
        }
    }
}

}  // namespace detail
}  // namespace minhash

#else  // not x86: the portable kernel is the only one

namespace minhash {
namespace detail {

bool cpu_has_avx2() noexcept { return false; }

void signature_update_avx2(const PermutationFamily &family, const uint64_t *hashes, size_t n,
                           uint32_t *sig) noexcept {
    signature_update_portable(family, hashes, n, sig);
}

}  // namespace detail
}  // namespace minhash

#endif
