// Prefix-preserving band keys (LSH Forest) and the probe depth.
#include "core/lsh_prefix.h"
#include "core/hash.h"
#include "core/signature.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using namespace minhash;

TEST(LshPrefix, LayoutOfTheDefaultIndexes) {
    const PrefixLayout a = prefix_layout(30, 4);
    EXPECT_EQ(a.band_bits, 5);
    EXPECT_EQ(a.encoded, 4);
    EXPECT_EQ(a.width[0], 14);
    EXPECT_EQ(a.width[1], 5);
    EXPECT_EQ(a.width[2], 4);
    EXPECT_EQ(a.width[3], 4);
    EXPECT_EQ(a.prefix_bits[4], 32);

    const PrefixLayout b = prefix_layout(12, 10);
    EXPECT_EQ(b.band_bits, 4);
    EXPECT_EQ(b.encoded, 10);
    EXPECT_EQ(b.prefix_bits[1], 18);
    EXPECT_EQ(b.prefix_bits[2], 20);
    EXPECT_EQ(b.prefix_bits[10], 32);

    // more positions than bits: the first 17 get bits, the rest none
    const PrefixLayout c = prefix_layout(1, 128);
    EXPECT_EQ(c.band_bits, 0);
    EXPECT_EQ(c.encoded, 17);
    EXPECT_EQ(c.prefix_bits[c.encoded], 32);
    EXPECT_EQ(prefix_effective_depth(c, 100), 17);

    const PrefixLayout d = prefix_layout(1024, 1);
    EXPECT_EQ(d.band_bits, 10);
    EXPECT_EQ(d.width[0], 22);
}

// Agreeing on the first m values puts both keys in the same depth-m range,
// and the band number keeps bands apart.
TEST(LshPrefix, PrefixRangesHoldAgreeingBands) {
    std::mt19937 rng(42u);
    for (const auto &br : {std::pair{30, 4}, std::pair{12, 10}, std::pair{7, 3}, std::pair{1, 40}}) {
        const PrefixLayout l = prefix_layout(br.first, br.second);
        for (int trial = 0; trial < 2000; ++trial) {
            std::vector<uint32_t> x(br.second), y(br.second);
            for (auto &v : x) v = static_cast<uint32_t>(rng());
            const int m = 1 + static_cast<int>(rng() % br.second);
            for (int j = 0; j < br.second; ++j) y[j] = j < m ? x[j] : static_cast<uint32_t>(rng());
            const int band = static_cast<int>(rng() % br.first);
            const uint32_t kx = prefix_band_key(l, x.data(), band);
            const uint32_t ky = prefix_band_key(l, y.data(), band);
            uint32_t lo, hi;
            prefix_range(l, kx, m, &lo, &hi);
            ASSERT_LE(lo, kx);
            ASSERT_GE(hi, kx);
            ASSERT_LE(lo, ky);
            ASSERT_GE(hi, ky);
            if (l.band_bits > 0) {
                ASSERT_EQ(kx >> (32 - l.band_bits), static_cast<uint32_t>(band));
            }
            if (m == br.second) {
                ASSERT_EQ(kx, ky);
            }
        }
    }
}

// Unrelated bands fall in one depth-1 range about 2^-w1 of the time.
TEST(LshPrefix, DepthOneFalseMatchRate) {
    const PrefixLayout l = prefix_layout(30, 4);
    std::mt19937 rng(7);
    const int n = 200000;
    int hits = 0;
    auto next = [&rng]() { return static_cast<uint32_t>(rng()); };
    uint32_t q[4] = {next(), next(), next(), next()};
    uint32_t lo, hi;
    prefix_range(l, prefix_band_key(l, q, 3), 1, &lo, &hi);
    for (int i = 0; i < n; ++i) {
        uint32_t v[4] = {next(), next(), next(), next()};
        const uint32_t k = prefix_band_key(l, v, 3);
        hits += k >= lo && k <= hi;
    }
    const double expected = n / std::ldexp(1.0, l.width[0]);
    EXPECT_NEAR(hits, expected, 5 * std::sqrt(expected) + 1);
}

TEST(LshPrefix, ProbeDepthFollowsTheSCurve) {
    // 30 x 4 (threshold 0.5 with the index's default weights)
    EXPECT_EQ(probe_depth(0.5, 0.1, 0.98, 30, 4), 4);
    EXPECT_EQ(probe_depth(0.9, 0.1, 0.98, 30, 4), 4);
    EXPECT_EQ(probe_depth(0.4, 0.1, 0.98, 30, 4), 3);
    EXPECT_EQ(probe_depth(0.3, 0.1, 0.98, 30, 4), 2);
    EXPECT_EQ(probe_depth(0.2, 0.1, 0.98, 30, 4), 1);
    // 12 x 10 (threshold 0.8) asked for 0.5
    EXPECT_EQ(probe_depth(0.5, 0.1, 0.98, 12, 10), 2);
    EXPECT_EQ(probe_depth(0.8, 0.1, 0.98, 12, 10), 10);
    // the chosen depth reaches the target; one deeper does not
    for (double t = 0.2; t <= 0.9; t += 0.05) {
        const int m = probe_depth(t, 0.1, 0.98, 30, 4);
        if (m > 1) {
            EXPECT_GE(prefix_hit_probability(t + 0.1, m, 30), 0.98);
        }
        if (m < 4) {
            EXPECT_LT(prefix_hit_probability(t + 0.1, m + 1, 30), 0.98);
        }
    }
}

TEST(LshPrefix, CompleteSimilarityInvertsTheHitProbability) {
    for (int m = 1; m <= 10; ++m) {
        const double s = depth_complete_similarity(m, 30, 0.98);
        EXPECT_NEAR(prefix_hit_probability(s, m, 30), 0.98, 1e-9);
    }
}

// One band key for both on-disk versions: version 2 is the prefix key of the
// band's slice, version 1 minhash 1.0's band hash folded to 32 bits.
TEST(LshPrefix, BandKeyOfEachVersion) {
    const PrefixLayout l = prefix_layout(30, 4);
    std::vector<uint32_t> sig(128);
    std::mt19937 rng(7);
    for (auto &v : sig)
        v = rng();
    for (int band = 0; band < 30; ++band) {
        const uint32_t *slice = sig.data() + band * 4;
        EXPECT_EQ(lsh_band_key(l, true, sig.data(), band), prefix_band_key(l, slice, band));
        const uint64_t h = band_hash(slice, 4, band);
        EXPECT_EQ(lsh_band_key(l, false, sig.data(), band),
                  static_cast<uint32_t>((h >> 32) ^ (h & 0xFFFFFFFFu)));
    }
    // the fold is high half XOR low half
    EXPECT_EQ(fold64(0x0123456789ABCDEFull), 0x01234567u ^ 0x89ABCDEFu);
}

// The keys of a whole signature in one pass are the per-band keys, for
// layouts with and without band bits, with unencoded positions (1 x 128) and
// with 1024 bands of one value.
TEST(LshPrefix, AllBandKeysAreTheBandKeys) {
    std::mt19937 rng(11);
    for (const auto &br : {std::pair{30, 4}, std::pair{12, 10}, std::pair{1, 128}, std::pair{1, 1},
                           std::pair{7, 3}, std::pair{64, 2}, std::pair{1024, 1}, std::pair{2, 64}}) {
        const PrefixLayout l = prefix_layout(br.first, br.second);
        std::vector<uint32_t> sig(static_cast<size_t>(br.first) * br.second);
        std::vector<uint32_t> keys(br.first);
        for (int trial = 0; trial < 50; ++trial) {
            for (auto &v : sig)
                v = static_cast<uint32_t>(rng());
            prefix_band_keys(l, sig.data(), keys.data());
            for (int band = 0; band < br.first; ++band)
                ASSERT_EQ(keys[band], prefix_band_key(l, sig.data() + band * br.second, band))
                    << br.first << " x " << br.second << " band " << band;
        }
    }
}

// The on-disk keys of version 2 (minhash 1.1), pinned: values printed by
// prefix_band_key as of the LSH Forest change, for sig[i] = 0x9E3779B9 * (i + 1).
TEST(LshPrefix, BandKeysArePinned) {
    std::vector<uint32_t> sig(128);
    for (int i = 0; i < 128; ++i)
        sig[i] = 0x9E3779B9u * static_cast<uint32_t>(i + 1);
    struct Pin { int bands, rows; uint32_t first, middle, last; };
    const Pin pins[] = {{30, 4, 0x03D5A67Du, 0x7C73B011u, 0xEF2778C3u},
                        {12, 10, 0x07AB476Du, 0x69AA2E3Fu, 0xB429A8B0u},
                        {1, 128, 0x7AB52E8Du, 0x7AB52E8Du, 0x7AB52E8Du},
                        {64, 2, 0x01EAC6D6u, 0x835E980Eu, 0xFDC8AABFu}};
    for (const Pin &p : pins) {
        const PrefixLayout l = prefix_layout(p.bands, p.rows);
        std::vector<uint32_t> keys(p.bands);
        prefix_band_keys(l, sig.data(), keys.data());
        const int mid = p.bands / 2;
        EXPECT_EQ(prefix_band_key(l, sig.data(), 0), p.first);
        EXPECT_EQ(prefix_band_key(l, sig.data() + mid * p.rows, mid), p.middle);
        EXPECT_EQ(prefix_band_key(l, sig.data() + (p.bands - 1) * p.rows, p.bands - 1), p.last);
        EXPECT_EQ(keys[0], p.first);
        EXPECT_EQ(keys[mid], p.middle);
        EXPECT_EQ(keys[p.bands - 1], p.last);
    }
}

// rows_in_key_ranges keeps exactly the rows with a key in its band's range,
// inclusive at both ends, with ranges that wrap nothing (width = hi - lo).
TEST(LshPrefix, RowsInKeyRanges) {
    const int bands = 5, stride = 1 + bands;
    const uint32_t lo[bands] = {10, 0, 0xFFFFFF00u, 500, 7};
    const uint32_t hi[bands] = {20, 0, 0xFFFFFFFFu, 500, 7};
    uint32_t width[bands];
    for (int b = 0; b < bands; ++b)
        width[b] = hi[b] - lo[b];
    std::vector<uint32_t> rows;
    auto add = [&](uint32_t id, std::vector<uint32_t> keys) {
        rows.push_back(id);
        rows.insert(rows.end(), keys.begin(), keys.end());
    };
    add(1, {9, 1, 5, 499, 8});                 // every key just outside
    add(2, {10, 1, 5, 499, 8});                // band 0 at lo
    add(3, {21, 1, 5, 499, 8});                // band 0 just past hi
    add(4, {9, 0, 5, 499, 8});                 // band 1: the one-key range
    add(5, {9, 1, 0xFFFFFFFFu, 499, 8});       // band 2 at the top of the key space
    add(6, {9, 1, 0xFFFFFEFFu, 501, 6});       // all just outside again
    add(7, {20, 0, 0xFFFFFF00u, 500, 7});      // every band inside
    std::vector<uint32_t> out(7);
    const int n = rows_in_key_ranges(rows.data(), 7, stride, bands, lo, width, out.data());
    out.resize(n);
    EXPECT_EQ(out, (std::vector<uint32_t>{2, 4, 5, 7}));
    EXPECT_EQ(rows_in_key_ranges(rows.data(), 0, stride, bands, lo, width, out.data()), 0);
}


// prefix_keys_agree is the comparison of the two band keys under the mask of
// a depth-m range, at every depth (past the encoded positions too), for
// layouts whose later positions keep a few bits or one (7 x 18: positions 2
// to 15 keep one bit each, 16 to 18 none). Values drawn from a small alphabet
// so that positions agree often, and from the full range so that they differ
// and their hashes decide.
TEST(LshPrefix, KeysAgreeIsTheMaskedKeyComparison) {
    std::mt19937 rng(23);
    int agreed = 0, disagreed = 0;
    for (const auto &br : {std::pair{30, 4}, std::pair{7, 18}, std::pair{12, 10}, std::pair{1, 128},
                           std::pair{64, 2}, std::pair{1, 1}}) {
        const PrefixLayout l = prefix_layout(br.first, br.second);
        const size_t k = static_cast<size_t>(br.first) * br.second;
        std::vector<uint32_t> a(k), b(k);
        for (int trial = 0; trial < 300; ++trial) {
            const uint32_t alphabet = trial % 3 == 0 ? 0xFFFFFFFFu : 2u + trial % 5;
            for (size_t i = 0; i < k; ++i) {
                a[i] = static_cast<uint32_t>(rng()) % alphabet;
                b[i] = rng() % 4 == 0 ? a[i] : static_cast<uint32_t>(rng()) % alphabet;
            }
            for (int band = 0; band < br.first; ++band) {
                const uint32_t ka = prefix_band_key(l, a.data() + band * br.second, band);
                const uint32_t kb = prefix_band_key(l, b.data() + band * br.second, band);
                for (int m = 1; m <= br.second + 1; ++m) {
                    uint32_t lo, hi;
                    prefix_range(l, ka, m, &lo, &hi);
                    const bool in_range = kb >= lo && kb <= hi;
                    ASSERT_EQ(prefix_keys_agree(l, a.data(), b.data(), band, m), in_range)
                        << br.first << " x " << br.second << " band " << band << " depth " << m;
                    (in_range ? agreed : disagreed)++;
                }
            }
        }
    }
    // both answers were exercised
    EXPECT_GT(agreed, 1000);
    EXPECT_GT(disagreed, 1000);
}

// The candidate probability with hash agreement: simulated pairs whose
// values agree with probability s (the MinHash model), candidates when some
// band's keys agree at depth m, against the formula; for the default index's
// layout (few bits after the first value) and for 7 x 18 (one bit).
TEST(LshPrefix, KeyHitProbabilityMatchesSimulation) {
    std::mt19937 rng(31);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    struct Case { int bands, rows, m; double s; };
    const Case cases[] = {{30, 4, 4, 0.5}, {30, 4, 4, 0.3}, {30, 4, 2, 0.2}, {7, 18, 18, 0.9},
                          {7, 18, 18, 0.7}, {7, 18, 6, 0.8}, {12, 10, 10, 0.75}};
    for (const Case &c : cases) {
        const PrefixLayout l = prefix_layout(c.bands, c.rows);
        const size_t k = static_cast<size_t>(c.bands) * c.rows;
        std::vector<uint32_t> a(k), b(k);
        const int n = 20000;
        int hits = 0;
        for (int i = 0; i < n; ++i) {
            for (size_t j = 0; j < k; ++j) {
                a[j] = static_cast<uint32_t>(rng());
                b[j] = u(rng) < c.s ? a[j] : static_cast<uint32_t>(rng());
            }
            bool hit = false;
            for (int band = 0; band < c.bands && !hit; ++band)
                hit = prefix_keys_agree(l, a.data(), b.data(), band, c.m);
            hits += hit;
        }
        const double p = prefix_key_hit_probability(l, c.s, c.m);
        const double sd = std::sqrt(p * (1 - p) / n);
        EXPECT_NEAR(static_cast<double>(hits) / n, p, 5 * sd + 1e-3)
            << c.bands << " x " << c.rows << " depth " << c.m << " s " << c.s;
        // never below the S-curve of equal values, which it exceeds by the hash agreements
        EXPECT_GE(p, prefix_hit_probability(c.s, prefix_effective_depth(l, c.m), c.bands) - 1e-12);
    }
    const PrefixLayout l = prefix_layout(30, 4);
    EXPECT_EQ(prefix_key_hit_probability(l, 1.0, 4), 1.0);
    EXPECT_NEAR(prefix_key_hit_probability(l, 0.0, 4), 1 - std::pow(1 - std::ldexp(1.0, -27), 30), 1e-12);
}

TEST(LshPrefix, ProbeTargetSimilarity) {
    EXPECT_DOUBLE_EQ(probe_target_similarity(0.5), 0.6);
    EXPECT_DOUBLE_EQ(probe_target_similarity(0.8), 0.9);
    EXPECT_DOUBLE_EQ(probe_target_similarity(0.9), 0.95);
    EXPECT_DOUBLE_EQ(probe_target_similarity(1.0), 1.0);
    EXPECT_DOUBLE_EQ(probe_target_similarity(0.0), 0.1);
}

// The AVX2 filter keeps the same rows as the portable loop, for every band
// count it takes (the overlapping last vector included) and for ranges that
// hit exactly at lo, at lo + width, just outside, and at the ends of the key
// space. Rows are random keys with keys planted on those edges.
TEST(LshPrefix, RowsInKeyRangesAvx2MatchesPortable) {
    if (simd_best() == SimdLevel::Portable)
        GTEST_SKIP() << "this CPU has no AVX2";
    std::mt19937 rng(20261127);
    for (int bands : {8, 9, 15, 16, 17, 23, 30, 31, 32, 64, 100, kKeyRangesAvx2MaxBands}) {
        const int stride = 1 + bands, nrows = 257;
        std::vector<uint32_t> lo(bands), width(bands), rows(static_cast<size_t>(nrows) * stride);
        for (int b = 0; b < bands; ++b) {
            lo[b] = b == 2 ? 0xFFFFFF00u : static_cast<uint32_t>(rng());
            if (b == 2)
                width[b] = 0xFFFFFFFFu - lo[b];  // to the top of the key space
            else
                width[b] = b % 2 == 0 ? 0 : static_cast<uint32_t>(rng() >> 16);
        }
        for (int i = 0; i < nrows; ++i) {
            uint32_t *row = &rows[static_cast<size_t>(i) * stride];
            row[0] = static_cast<uint32_t>(i);
            for (int b = 0; b < bands; ++b)
                row[1 + b] = rng();
            // most rows keep random keys (almost all outside); some get an edge in one band
            const int b = static_cast<int>(rng() % bands);
            switch (i % 8) {
            case 1: row[1 + b] = lo[b]; break;
            case 2: row[1 + b] = lo[b] + width[b]; break;
            case 3: row[1 + b] = lo[b] + width[b] + 1; break;
            case 4: row[1 + b] = lo[b] - 1; break;
            default: break;
            }
        }
        std::vector<uint32_t> want(nrows), got(nrows);
        const int nwant = detail::rows_in_key_ranges_portable(rows.data(), nrows, stride, bands, lo.data(),
                                                              width.data(), want.data());
        const int ngot = detail::rows_in_key_ranges_avx2(rows.data(), nrows, stride, bands, lo.data(),
                                                         width.data(), got.data());
        want.resize(nwant);
        got.resize(ngot);
        EXPECT_EQ(got, want) << bands << " bands";
        EXPECT_GT(nwant, nrows / 8) << bands << " bands: the planted edges must be kept";
        EXPECT_LT(nwant, nrows) << bands << " bands: some rows must be filtered out";
    }
}

// rows_in_key_ranges takes the AVX2 form only while the AVX2 kernel is in
// use: minhash.simd = portable (simd_use) gives the portable loop, whose
// answer is the same.
TEST(LshPrefix, RowsInKeyRangesFollowsSimdChoice) {
    const SimdLevel before = simd_in_use();
    const int bands = 30, stride = 31;
    std::vector<uint32_t> lo(bands, 100), width(bands, 5), rows;
    for (uint32_t i = 0; i < 40; ++i) {
        rows.push_back(i);
        for (int b = 0; b < bands; ++b)
            rows.push_back(b == static_cast<int>(i % bands) ? 95 + i : 7);
    }
    std::vector<uint32_t> a(40), p(40);
    const int na = rows_in_key_ranges(rows.data(), 40, stride, bands, lo.data(), width.data(), a.data());
    simd_use(SimdLevel::Portable);
    const int np = rows_in_key_ranges(rows.data(), 40, stride, bands, lo.data(), width.data(), p.data());
    simd_use(before);
    a.resize(na);
    p.resize(np);
    EXPECT_EQ(a, p);
    EXPECT_EQ(a, (std::vector<uint32_t>{5, 6, 7, 8, 9, 10}));
}
