// The AVX2 signature kernel, selected at run time (signature.cpp) on CPUs
// that have AVX2; bit-identical to signature_update_portable (tested).
//
// h_i(x) = ((a·x + b) mod 2^64) >> 32 splits into 32-bit pieces:
//   h_i(x) = hi32(lo(a)·x + b) + lo32(hi(a)·x)   (mod 2^32)
// because adding c·2^32 to a 64-bit value adds c to its high half. For eight
// functions and one key x broadcast to every lane:
//   vpmuludq ×2  lo(a)·x for 4 + 4 functions, exact 64-bit products
//   vpaddq ×2    + b, still exact mod 2^64
//   vshufps      the eight high halves into one vector of 32-bit lanes
//   vpmulld      hi(a)·x mod 2^32 for all eight at once
//   vpaddd, vpminud  h_i(x), folded into the running minimum
// Eight instructions (three multiplies) per key and eight functions, all in
// registers: a pass over the signature takes a block of up to 16 keys, so
// a_i, b_i and sig[i] are loaded, and sig[i] stored, once per block.
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

// The high 32 bits of the 64-bit lanes of p (functions i..i+3) and q
// (i+4..i+7), in the order (i, i+1, i+4, i+5, i+2, i+3, i+6, i+7).
__attribute__((target("avx2"))) inline __m256i high_halves(__m256i p, __m256i q) {
    return _mm256_castps_si256(
        _mm256_shuffle_ps(_mm256_castsi256_ps(p), _mm256_castsi256_ps(q), 0xDD));
}

// Functions [i, i+8) over the keys x[0..NB). Lanes hold the functions
// in the order L = (i, i+1, i+4, i+5, i+2, i+3, i+6, i+7): vshufps picks
// the high halves of two 4x64-bit vectors in that order, one shuffle (no
// shift, no blend: port 5, while the multiplies and the minimum take ports
// 0 and 1). One vpermq per block restores the natural order.
template <size_t NB>
__attribute__((target("avx2"))) inline void update8(const uint64_t *a, const uint64_t *b,
                                                    const uint32_t *x, uint32_t *sig) {
    const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a));
    const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a + 4));
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b + 4));
    const __m256i a_hi = high_halves(a0, a1);  // hi(a), order L
    __m256i m = _mm256_set1_epi32(-1);
    for (size_t j = 0; j < NB; ++j) {
        const __m256i xv = _mm256_set1_epi32(static_cast<int>(x[j]));
        // lo(a)·x + b, exact in 64 bits; its high halves in order L ...
        const __m256i p0 = _mm256_add_epi64(_mm256_mul_epu32(a0, xv), b0);
        const __m256i p1 = _mm256_add_epi64(_mm256_mul_epu32(a1, xv), b1);
        // ... plus hi(a)·x mod 2^32 is h_i(x).
        m = _mm256_min_epu32(m, _mm256_add_epi32(high_halves(p0, p1), _mm256_mullo_epi32(a_hi, xv)));
    }
    const __m256i h = _mm256_permute4x64_epi64(m, 0xD8);  // 64-bit pairs 0, 2, 1, 3
    __m256i *s = reinterpret_cast<__m256i *>(sig);
    _mm256_storeu_si256(s, _mm256_min_epu32(_mm256_loadu_si256(s), h));
}

}  // namespace

// One pass over the signature for NB keys (a short last block is padded
// with copies of its first key, which cannot change a minimum).
template <size_t NB>
__attribute__((target("avx2"))) void update_block(const PermutationFamily &family, int k,
                                                  const uint64_t *hashes, size_t m, uint32_t *sig) {
    uint32_t x[NB];
    for (size_t j = 0; j < NB; ++j)
        x[j] = fold64(hashes[j < m ? j : 0]);
    const int k8 = k & ~7;
    for (int i = 0; i < k8; i += 8)
        update8<NB>(family.a + i, family.b + i, x, sig + i);
    for (int i = k8; i < k; ++i) {
        uint32_t v = sig[i];
        for (size_t j = 0; j < NB; ++j)
            v = std::min(v, permute(family.a[i], family.b[i], x[j]));
        sig[i] = v;
    }
}

__attribute__((target("avx2"))) void signature_update_avx2(const PermutationFamily &family,
                                                           const uint64_t *hashes, size_t n,
                                                           uint32_t *sig) noexcept {
    const int k = std::clamp(family.num_perm, kMinNumPerm, kMaxNumPerm);
    for_each_key_block(hashes, n, [&](auto nb, const uint64_t *keys, size_t m) {
        update_block<decltype(nb)::value>(family, k, keys, m, sig);
    });
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
