// The AVX-512 signature kernel (F + DQ), selected at run time
// (signature.cpp) on CPUs that have it; bit-identical to
// signature_update_portable (tests/core/kernels_test.cpp).
//
// AVX-512DQ multiplies 64-bit lanes (vpmullq: the low 64 bits of a 64×64
// product) and AVX-512F compares them unsigned (vpminuq), so
// h_i(x) = ((a·x + b) mod 2^64) >> 32 needs no 32-bit split as in the AVX2
// kernel: per key and eight functions one vpmullq, one vpaddq and one
// vpminuq, against nine instructions there. The minimum is taken over the
// whole 64-bit values and shifted once per block: if p < q then
// p >> 32 <= q >> 32, so (min p) >> 32 = min (p >> 32), exactly.
#include <algorithm>

#include "core/hash.h"
#include "core/signature_impl.h"

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics start from an undefined vector and trip
// -Wmaybe-uninitialized (GCC bug 105593, fixed in 13): silence it here only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace minhash {
namespace detail {

bool cpu_has_avx512() noexcept {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

namespace {

#define MH_AVX512 __attribute__((target("avx512f,avx512dq")))

// The low 32 bits of each 64-bit lane (vpmovqd). The masked form: GCC 12
// warns about the unmasked intrinsic's undefined pass-through operand.
MH_AVX512 inline __m256i narrow(__m512i v) { return _mm512_maskz_cvtepi64_epi32(0xFF, v); }

// Functions [i, i+16) over the keys x[0..NB): two independent chains of
// eight 64-bit lanes, so the multiplier's latency overlaps.
template <size_t NB>
MH_AVX512 inline void update16(const uint64_t *a, const uint64_t *b, const uint64_t *x,
                               uint32_t *sig) {
    const __m512i a0 = _mm512_loadu_si512(a);
    const __m512i a1 = _mm512_loadu_si512(a + 8);
    const __m512i b0 = _mm512_loadu_si512(b);
    const __m512i b1 = _mm512_loadu_si512(b + 8);
    __m512i m0 = _mm512_set1_epi64(-1);
    __m512i m1 = m0;
    for (size_t j = 0; j < NB; ++j) {
        const __m512i xv = _mm512_set1_epi64(static_cast<long long>(x[j]));
        m0 = _mm512_min_epu64(m0, _mm512_add_epi64(_mm512_mullo_epi64(a0, xv), b0));
        m1 = _mm512_min_epu64(m1, _mm512_add_epi64(_mm512_mullo_epi64(a1, xv), b1));
    }
    const __m256i h0 = narrow(_mm512_srli_epi64(m0, 32));
    const __m256i h1 = narrow(_mm512_srli_epi64(m1, 32));
    const __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1);
    _mm512_storeu_si512(sig, _mm512_min_epu32(_mm512_loadu_si512(sig), h));
}

template <size_t NB>
MH_AVX512 inline void update8(const uint64_t *a, const uint64_t *b, const uint64_t *x,
                              uint32_t *sig) {
    const __m512i a0 = _mm512_loadu_si512(a);
    const __m512i b0 = _mm512_loadu_si512(b);
    __m512i m0 = _mm512_set1_epi64(-1);
    for (size_t j = 0; j < NB; ++j) {
        const __m512i xv = _mm512_set1_epi64(static_cast<long long>(x[j]));
        m0 = _mm512_min_epu64(m0, _mm512_add_epi64(_mm512_mullo_epi64(a0, xv), b0));
    }
    const __m256i h = narrow(_mm512_srli_epi64(m0, 32));
    __m256i *s = reinterpret_cast<__m256i *>(sig);
    _mm256_storeu_si256(s, _mm256_min_epu32(_mm256_loadu_si256(s), h));
}

// One pass over the signature for NB keys (a short last block is padded
// with copies of its first key, which cannot change a minimum).
template <size_t NB>
MH_AVX512 void update_block(const PermutationFamily &family, int k, const uint64_t *hashes,
                            size_t m, uint32_t *sig) {
    uint64_t x[NB];
    for (size_t j = 0; j < NB; ++j)
        x[j] = fold64(hashes[j < m ? j : 0]);
    const int k16 = k & ~15;
    int i = 0;
    for (; i < k16; i += 16)
        update16<NB>(family.a + i, family.b + i, x, sig + i);
    if (k - i >= 8) {
        update8<NB>(family.a + i, family.b + i, x, sig + i);
        i += 8;
    }
    for (; i < k; ++i) {
        uint32_t v = sig[i];
        for (size_t j = 0; j < NB; ++j)
            v = std::min(v, permute(family.a[i], family.b[i], static_cast<uint32_t>(x[j])));
        sig[i] = v;
    }
}

}  // namespace

MH_AVX512 void signature_update_avx512(const PermutationFamily &family, const uint64_t *hashes,
                                       size_t n, uint32_t *sig) noexcept {
    const int k = std::clamp(family.num_perm, kMinNumPerm, kMaxNumPerm);
    for_each_key_block(hashes, n, [&](auto nb, const uint64_t *keys, size_t m) {
        update_block<decltype(nb)::value>(family, k, keys, m, sig);
    });
}

}  // namespace detail
}  // namespace minhash

#else  // not x86-64: the portable kernel stands in

namespace minhash {
namespace detail {

bool cpu_has_avx512() noexcept { return false; }

void signature_update_avx512(const PermutationFamily &family, const uint64_t *hashes, size_t n,
                             uint32_t *sig) noexcept {
    signature_update_portable(family, hashes, n, sig);
}

}  // namespace detail
}  // namespace minhash

#endif
