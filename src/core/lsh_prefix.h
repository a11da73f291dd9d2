// Prefix-preserving LSH band keys (LSH Forest, Bawa, Condie and Ganesan,
// WWW 2005) packed into 32 bits, and the choice of probe depth.
//
// A band's key is  [band number: ceil(log2 b) bits][seg 1][seg 2]...[seg r]
// where seg j holds the top w_j bits of a hash of the band's j-th value. So
// "the first m values agree" implies "the keys agree on their top
// band_bits + w_1 + ... + w_m bits", and every row whose band agrees with a
// query's on its first m values lies in one key range: a prefix match is a
// range scan of a B+-tree ordered by key. The first value gets about half the
// bits (depth 1 is the widest probe: its false matches, n / 2^w_1 per band,
// are what verification pays for); the rest are spread evenly. Positions
// left without bits (r larger than the bits available) are not encoded: a
// probe at such a depth is the probe at the deepest encoded depth, which only
// adds candidates (verification removes them).
#pragma once

#include <cstdint>

namespace minhash {

constexpr int kPrefixKeyBits = 32;
constexpr int kMaxPrefixDepth = 32;  // no more than 32 positions can get a bit

struct PrefixLayout {
    int bands;
    int rows;
    int band_bits;               // ceil(log2(bands))
    int encoded;                 // positions 1..encoded have at least one bit
    int width[kMaxPrefixDepth];  // w_1..w_encoded
    int prefix_bits[kMaxPrefixDepth + 1];  // prefix_bits[m] = band_bits + w_1 + ... + w_m
};

// bands >= 1, rows >= 1, bands <= 1024.
PrefixLayout prefix_layout(int bands, int rows) noexcept;

// The key of band `band` whose r values are `values` (little-endian hashing,
// so keys agree across architectures).
uint32_t prefix_band_key(const PrefixLayout &layout, const uint32_t *values, int band) noexcept;

// The keys of all bands of a signature: keys[b] = prefix_band_key(layout,
// sig + b * rows, b) for b in [0, bands). One pass over the signature, each
// value's hash placed straight at its bit offset: what a build or an insert
// computes per row.
void prefix_band_keys(const PrefixLayout &layout, const uint32_t *sig, uint32_t *keys) noexcept;

// The key of band `band` of a signature (the band is sig[band * rows, (band +
// 1) * rows)), as an lsh index stores it: with prefix_keys (on-disk version
// 2) prefix_band_key; else (version 1, minhash 1.0) the band's band_hash
// folded to 32 bits (fold64), which matches whole bands only. The one
// definition of a band key: the index, its check and the all-pairs walk.
uint32_t lsh_band_key(const PrefixLayout &layout, bool prefix_keys, const uint32_t *sig,
                      int band) noexcept;

// The depth actually encoded for a probe of the first m values (m >= 1).
inline int prefix_effective_depth(const PrefixLayout &layout, int m) noexcept {
    return m < layout.encoded ? m : layout.encoded;
}

// The range of keys whose first m values may agree with `key`'s.
void prefix_range(const PrefixLayout &layout, uint32_t key, int m, uint32_t *lo, uint32_t *hi) noexcept;

// Rows of `stride` words, each a row id followed by its `bands` band keys
// (a keyed pending page of an lsh index): the row ids of those with a key in
// its band's range, key - lo[b] <= width[b] (unsigned: the range [lo, lo +
// width]), written to out (room for nrows) in row order. Returns how many. Branch-free over
// the bands: a probe filters thousands of rows this way. With 8 to
// kKeyRangesAvx2MaxBands bands and the AVX2 kernel in use (simd_in_use), the
// AVX2 form; else the portable loop. Both return the same rows.
int rows_in_key_ranges(const uint32_t *rows, int nrows, int stride, int bands, const uint32_t *lo,
                       const uint32_t *width, uint32_t *out) noexcept;

constexpr int kKeyRangesAvx2MaxBands = 256;

namespace detail {
int rows_in_key_ranges_portable(const uint32_t *rows, int nrows, int stride, int bands, const uint32_t *lo,
                                const uint32_t *width, uint32_t *out) noexcept;
// key_ranges_avx2.cpp: 8 <= bands <= kKeyRangesAvx2MaxBands, on a CPU with AVX2
int rows_in_key_ranges_avx2(const uint32_t *rows, int nrows, int stride, int bands, const uint32_t *lo,
                            const uint32_t *width, uint32_t *out) noexcept;
}  // namespace detail

// Do band `band` of signatures a and b (whole signatures, bands of
// layout.rows values) have keys that a probe of depth m matches, i.e. keys
// equal on the bits prefix_range(key, m) keeps? That is what an lsh scan
// finds, what the all-pairs walk groups and what minhash_match merges: two
// rows are candidates at depth m when this holds for some band. It holds when
// the first min(m, encoded) values agree, and also when a value differs but
// the top bits its position keeps of the two hashes agree (a position with w
// bits: probability 2^-w). Equal to comparing prefix_band_key of both under
// that mask, but only differing values are hashed.
bool prefix_keys_agree(const PrefixLayout &layout, const uint32_t *a, const uint32_t *b, int band,
                       int m) noexcept;

// Probability that a pair of Jaccard similarity s agrees on the first m
// values of at least one of b bands: 1 - (1 - s^m)^b.
double prefix_hit_probability(double s, int m, int bands) noexcept;

// Probability that a pair of Jaccard similarity s is a candidate at depth m
// (prefix_keys_agree for at least one band): each compared position j agrees
// with probability s + (1 - s) 2^-w_j (equal values, or hashes agreeing on
// its w_j bits), so a band with p = prod_j (s + (1 - s) 2^-w_j), and
// 1 - (1 - p)^bands. At least prefix_hit_probability(s, min(m, encoded),
// bands): the recall an index really has, where that is the S-curve its
// depth is chosen by.
double prefix_key_hit_probability(const PrefixLayout &layout, double s, int m) noexcept;

// The similarity a probe at threshold t is asked to find with the target
// recall: t + 0.1, or halfway from t to 1 when that is nearer (at t = 0.9,
// 0.95), so that the target still chooses the depth at high thresholds,
// where t + 0.1 would be 1 and any depth would find it.
double probe_target_similarity(double t) noexcept;

// The deepest m in [1, rows] with prefix_hit_probability(min(1, t + margin),
// m, bands) >= recall: the depth a probe at threshold t needs so that pairs
// at t + margin and above are found with probability >= recall. 1 when even
// depth 1 falls short.
int probe_depth(double t, double margin, double recall, int bands, int rows) noexcept;

// The similarity above which a probe at depth m finds a row with probability
// >= recall: (1 - (1 - recall)^(1/b))^(1/m).
double depth_complete_similarity(int m, int bands, double recall) noexcept;

}  // namespace minhash
