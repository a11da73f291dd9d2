// Prefix-preserving band keys and probe depths: see lsh_prefix.h.
#include "core/lsh_prefix.h"
#include "core/hash.h"
#include "core/signature.h"

#include <cmath>

// XXH3 inlined (xxhash.h's own single-header mode): a band key hashes each of
// its r values separately, 4 bytes at a time, where a call into the shared
// library would cost more than the hash.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace minhash {

PrefixLayout prefix_layout(int bands, int rows) noexcept {
    PrefixLayout l{};
    int bb = 0;
    while ((1 << bb) < bands)
        ++bb;
    l.bands = bands;
    l.rows = rows;
    l.band_bits = bb;
    int avail = kPrefixKeyBits - bb;
    // first value: half the bits (at least 1), but leave a bit for each later
    // position while that is possible
    int rest_positions = rows - 1;
    int first = (avail + 1) / 2;
    if (rows == 1)
        first = avail;
    else if (avail - first < rest_positions && avail - rest_positions >= first)
        first = avail - rest_positions;
    int enc = 1;
    l.width[0] = first;
    int left = avail - first;
    int positions = rest_positions < left ? rest_positions : left;  // later positions that get bits
    if (positions > kMaxPrefixDepth - 1)
        positions = kMaxPrefixDepth - 1;
    for (int j = 0; j < positions; ++j) {
        // spread `left` bits over `positions` positions, earlier ones first
        l.width[1 + j] = left / positions + (j < left % positions ? 1 : 0);
        ++enc;
    }
    l.encoded = enc;
    l.prefix_bits[0] = bb;
    for (int m = 1; m <= enc; ++m)
        l.prefix_bits[m] = l.prefix_bits[m - 1] + l.width[m - 1];
    return l;
}

static inline uint64_t value_hash(uint32_t v, int band, int pos) noexcept {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return XXH3_64bits_withSeed(&v, sizeof v, (static_cast<uint64_t>(band) << 16) | static_cast<uint64_t>(pos));
}

uint32_t prefix_band_key(const PrefixLayout &l, const uint32_t *values, int band) noexcept {
    uint64_t key = static_cast<uint64_t>(band);
    for (int j = 0; j < l.encoded; ++j) {
        const int w = l.width[j];
        key = (key << w) | (value_hash(values[j], band, j) >> (64 - w));
    }
    // bits below the encoded ones (when fewer than 32 are used) stay zero
    return static_cast<uint32_t>(key << (kPrefixKeyBits - l.prefix_bits[l.encoded]));
}

void prefix_band_keys(const PrefixLayout &l, const uint32_t *sig, uint32_t *keys) noexcept {
    // value j's top width[j] bits land at bit 32 - prefix_bits[j + 1] of the
    // key, the band number at 32 - band_bits: the bits prefix_band_key shifts
    // in one position at a time (in 64 bits, so that shifts of 32 are defined)
    int drop[kMaxPrefixDepth];
    int place[kMaxPrefixDepth];
    const int enc = l.encoded;
    for (int j = 0; j < enc; ++j) {
        drop[j] = 64 - l.width[j];
        place[j] = kPrefixKeyBits - l.prefix_bits[j + 1];
    }
    const int band_place = kPrefixKeyBits - l.band_bits;
    const uint32_t *values = sig;
    for (int b = 0; b < l.bands; ++b, values += l.rows) {
        uint64_t key = static_cast<uint64_t>(b) << band_place;
        for (int j = 0; j < enc; ++j)
            key |= (value_hash(values[j], b, j) >> drop[j]) << place[j];
        keys[b] = static_cast<uint32_t>(key);
    }
}

uint32_t lsh_band_key(const PrefixLayout &l, bool prefix_keys, const uint32_t *sig,
                      int band) noexcept {
    const uint32_t *values = sig + static_cast<size_t>(band) * static_cast<size_t>(l.rows);
    return prefix_keys ? prefix_band_key(l, values, band) : fold64(band_hash(values, l.rows, band));
}

void prefix_range(const PrefixLayout &l, uint32_t key, int m, uint32_t *lo, uint32_t *hi) noexcept {
    const int bits = l.prefix_bits[prefix_effective_depth(l, m < 1 ? 1 : m)];
    const uint32_t low_mask = bits >= kPrefixKeyBits ? 0u : (0xFFFFFFFFu >> bits);
    *lo = key & ~low_mask;
    *hi = key | low_mask;
}

bool prefix_keys_agree(const PrefixLayout &l, const uint32_t *a, const uint32_t *b, int band,
                       int m) noexcept {
    const int eff = prefix_effective_depth(l, m < 1 ? 1 : m);
    const size_t off = static_cast<size_t>(band) * static_cast<size_t>(l.rows);
    for (int j = 0; j < eff; ++j) {
        const uint32_t x = a[off + j];
        const uint32_t y = b[off + j];
        if (x != y && ((value_hash(x, band, j) ^ value_hash(y, band, j)) >> (64 - l.width[j])) != 0)
            return false;
    }
    return true;
}

double prefix_key_hit_probability(const PrefixLayout &l, double s, int m) noexcept {
    if (s <= 0.0)
        s = 0.0;
    if (s >= 1.0)
        return 1.0;
    const int eff = prefix_effective_depth(l, m < 1 ? 1 : m);
    double p = 1.0;
    for (int j = 0; j < eff; ++j)
        p *= s + (1.0 - s) * std::ldexp(1.0, -l.width[j]);
    return 1.0 - std::pow(1.0 - p, l.bands);
}

double probe_target_similarity(double t) noexcept {
    const double half = (1.0 - t) / 2;
    return t + (half < 0.1 ? half : 0.1);
}

double prefix_hit_probability(double s, int m, int bands) noexcept {
    if (s <= 0.0)
        return 0.0;
    if (s >= 1.0)
        return 1.0;
    return 1.0 - std::pow(1.0 - std::pow(s, m), bands);
}

int probe_depth(double t, double margin, double recall, int bands, int rows) noexcept {
    double s = t + margin;
    if (s > 1.0)
        s = 1.0;
    for (int m = rows; m > 1; --m)
        if (prefix_hit_probability(s, m, bands) >= recall)
            return m;
    return 1;
}

double depth_complete_similarity(int m, int bands, double recall) noexcept {
    if (recall <= 0.0)
        return 0.0;
    return std::pow(1.0 - std::pow(1.0 - recall, 1.0 / bands), 1.0 / m);
}

int rows_in_key_ranges(const uint32_t *rows, int nrows, int stride, int bands, const uint32_t *lo,
                       const uint32_t *width, uint32_t *out) noexcept {
    if (bands >= 8 && bands <= kKeyRangesAvx2MaxBands && simd_in_use() != SimdLevel::Portable)
        return detail::rows_in_key_ranges_avx2(rows, nrows, stride, bands, lo, width, out);
    return detail::rows_in_key_ranges_portable(rows, nrows, stride, bands, lo, width, out);
}

namespace detail {

int rows_in_key_ranges_portable(const uint32_t *rows, int nrows, int stride, int bands, const uint32_t *lo,
                                const uint32_t *width, uint32_t *out) noexcept {
    int n = 0;
    for (int i = 0; i < nrows; ++i) {
        const uint32_t *row = rows + static_cast<size_t>(i) * stride;
        const uint32_t *keys = row + 1;
        uint32_t hit = 0;
        for (int b = 0; b < bands; ++b)
            hit |= static_cast<uint32_t>(keys[b] - lo[b] <= width[b]);
        out[n] = row[0];
        n += static_cast<int>(hit);
    }
    return n;
}

}  // namespace detail

}  // namespace minhash
