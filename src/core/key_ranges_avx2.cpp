// The AVX2 form of rows_in_key_ranges (lsh_prefix.h), chosen at run time on
// CPUs that have AVX2; the same row ids as the portable loop (tested).
//
// An lsh scan filters every row of the pending list this way, so its cost
// grows with the list: 30 band keys a row, compared as key - lo <= width.
// The compiler's vectorisation of the portable loop spends as much on the
// 30-trip loop's remainder as on its body; here a row is ceil(bands / 8)
// vectors, the last one overlapping the one before it (comparing a band
// twice changes nothing in an OR), and the unsigned <= is min(d, w) == d.
#include "core/lsh_prefix.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace minhash {
namespace detail {

__attribute__((target("avx2"))) int rows_in_key_ranges_avx2(const uint32_t *rows, int nrows, int stride,
                                                            int bands, const uint32_t *lo,
                                                            const uint32_t *width, uint32_t *out) noexcept {
    __m256i lows[kKeyRangesAvx2MaxBands / 8];
    __m256i widths[kKeyRangesAvx2MaxBands / 8];
    int offset[kKeyRangesAvx2MaxBands / 8];
    const int nvec = (bands + 7) / 8;
    int n = 0;

    for (int v = 0; v < nvec; ++v) {
        offset[v] = v * 8 < bands - 8 ? v * 8 : bands - 8;
        lows[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(lo + offset[v]));
        widths[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(width + offset[v]));
    }
    for (int i = 0; i < nrows; ++i) {
        const uint32_t *row = rows + static_cast<size_t>(i) * stride;
        const uint32_t *keys = row + 1;
        __m256i in = _mm256_setzero_si256();

        for (int v = 0; v < nvec; ++v) {
            const __m256i d = _mm256_sub_epi32(
                _mm256_loadu_si256(reinterpret_cast<const __m256i *>(keys + offset[v])), lows[v]);
            in = _mm256_or_si256(in, _mm256_cmpeq_epi32(_mm256_min_epu32(d, widths[v]), d));
        }
        out[n] = row[0];
        n += _mm256_testz_si256(in, in) ? 0 : 1;
    }
    return n;
}

}  // namespace detail
}  // namespace minhash

#else  // not x86: never chosen (rows_in_key_ranges asks for AVX2 first)

namespace minhash {
namespace detail {

int rows_in_key_ranges_avx2(const uint32_t *rows, int nrows, int stride, int bands, const uint32_t *lo,
                            const uint32_t *width, uint32_t *out) noexcept {
    return rows_in_key_ranges_portable(rows, nrows, stride, bands, lo, width, out);
}

}  // namespace detail
}  // namespace minhash

#endif
