// LSH parameter choice and band hashing.
#include "core/lsh_params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include <xxhash.h>

#include "core/hash.h"

using namespace minhash;

namespace {

// An independent check of the areas: the midpoint rule on a uniform grid of
// 200000 cells, with P(s) written directly from its definition.
double midpoint(double lo, double hi, int b, int r, bool miss) {
    constexpr int kCells = 200000;
    const double h = (hi - lo) / kCells;
    double sum = 0.0;
    for (int i = 0; i < kCells; ++i) {
        const double s = lo + (i + 0.5) * h;
        const double p = 1.0 - std::pow(1.0 - std::pow(s, r), b);
        sum += miss ? 1.0 - p : p;
    }
    return sum * h;
}

}  // namespace

// Known answers with equal weights (as published by datasketch's optimiser).
TEST(LshParams, KnownAnswers) {
    struct Case {
        double t;
        int bands, rows;
    };
    for (const Case c : {Case{0.5, 25, 5}, Case{0.8, 9, 13}, Case{0.9, 5, 25}}) {
        const LshParams p = choose_lsh_params(c.t, 128);
        EXPECT_EQ(p.bands, c.bands) << "t=" << c.t;
        EXPECT_EQ(p.rows, c.rows) << "t=" << c.t;
    }
}

TEST(LshParams, ReportedAreasMatchAnIndependentIntegration) {
    for (double t : {0.3, 0.5, 0.8, 0.9}) {
        for (int k : {16, 128, 256}) {
            const LshParams p = choose_lsh_params(t, k);
            EXPECT_LE(p.bands * p.rows, k);
            EXPECT_NEAR(p.false_positive_area, midpoint(0, t, p.bands, p.rows, false), 1e-8)
                << "t=" << t << " k=" << k;
            EXPECT_NEAR(p.false_negative_area, midpoint(t, 1, p.bands, p.rows, true), 1e-8)
                << "t=" << t << " k=" << k;
        }
    }
    const LshParams q = lsh_params_for(0.7, 20, 6);
    EXPECT_EQ(q.bands, 20);
    EXPECT_EQ(q.rows, 6);
    EXPECT_NEAR(q.false_positive_area, midpoint(0, 0.7, 20, 6, false), 1e-8);
    EXPECT_NEAR(q.false_negative_area, midpoint(0.7, 1, 20, 6, true), 1e-8);
}

TEST(LshParams, ChoiceIsTheMinimumOverAllPairs) {
    const double t = 0.6;
    const int k = 64;
    const double wfp = 0.3, wfn = 0.7;
    const LshParams best = choose_lsh_params(t, k, wfp, wfn);
    const double best_cost = wfp * best.false_positive_area + wfn * best.false_negative_area;
    for (int b = 1; b <= k; ++b)
        for (int r = 1; b * r <= k; ++r) {
            const LshParams p = lsh_params_for(t, b, r);
            EXPECT_GE(wfp * p.false_positive_area + wfn * p.false_negative_area, best_cost - 1e-12);
        }
}

TEST(LshParams, WeightsShiftTheChoice) {
    // Only false positives count: as few candidates as possible, one band of all k rows.
    const LshParams fp = choose_lsh_params(0.5, 128, 1.0, 0.0);
    EXPECT_EQ(fp.bands, 1);
    EXPECT_EQ(fp.rows, 128);
    // Only false negatives count: every pair a candidate, k bands of one row.
    const LshParams fn = choose_lsh_params(0.5, 128, 0.0, 1.0);
    EXPECT_EQ(fn.bands, 128);
    EXPECT_EQ(fn.rows, 1);
}

TEST(LshParams, EdgeCases) {
    const LshParams one = choose_lsh_params(0.5, 1);
    EXPECT_EQ(one.bands, 1);
    EXPECT_EQ(one.rows, 1);
    EXPECT_NEAR(one.false_positive_area, 0.125, 1e-12);  // ∫₀^½ s ds
    EXPECT_NEAR(one.false_negative_area, 0.125, 1e-12);  // ∫½¹ (1 − s) ds
    const LshParams zero = lsh_params_for(0.0, 4, 4);
    EXPECT_EQ(zero.false_positive_area, 0.0);
    const LshParams full = lsh_params_for(1.0, 4, 4);
    EXPECT_EQ(full.false_negative_area, 0.0);
    // The largest k completes and respects b·r ≤ k.
    const LshParams big = choose_lsh_params(0.5, 1024);
    EXPECT_LE(big.bands * big.rows, 1024);
    // NaN is the caller's to reject, but must not hang or crash.
    const LshParams nan = choose_lsh_params(std::nan(""), 16);
    EXPECT_LE(nan.bands * nan.rows, 16);
}

TEST(LshParams, CandidateProbability) {
    EXPECT_DOUBLE_EQ(lsh_candidate_probability(0.0, 5, 5), 0.0);
    EXPECT_DOUBLE_EQ(lsh_candidate_probability(1.0, 5, 5), 1.0);
    EXPECT_NEAR(lsh_candidate_probability(0.5, 25, 5), 1.0 - std::pow(1.0 - 1.0 / 32, 25), 1e-12);
    // Rising through the threshold region.
    EXPECT_LT(lsh_candidate_probability(0.4, 25, 5), lsh_candidate_probability(0.6, 25, 5));
}

TEST(BandHash, DependsOnBandIndexAndValues) {
    const std::vector<uint32_t> v = {1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_NE(band_hash(v.data(), 4, 0), band_hash(v.data(), 4, 1));
    // Same values in different bands differ; same band and values agree.
    EXPECT_NE(band_hash(v.data(), 4, 0), band_hash(v.data() + 4, 4, 0));
    EXPECT_EQ(band_hash(v.data(), 4, 3), band_hash(std::vector<uint32_t>{1, 2, 3, 4}.data(), 4, 3));
    std::vector<uint32_t> w = v;
    w[2] ^= 1;
    EXPECT_NE(band_hash(v.data(), 4, 0), band_hash(w.data(), 4, 0));
    EXPECT_NE(band_hash(v.data(), 4, 0), band_hash(v.data(), 3, 0));
    // Defined as XXH3-64 of the little-endian values seeded with the band index.
    unsigned char bytes[16];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
            bytes[4 * i + j] = static_cast<unsigned char>(v[i] >> (8 * j));
    EXPECT_EQ(band_hash(v.data(), 4, 2), XXH3_64bits_withSeed(bytes, 16, 2));
}
