// Matches and candidates of a probe from build statistics, against populations
// whose similarities are known.
#include "core/lsh_estimate.h"
#include "core/lsh_prefix.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace minhash;

namespace {

constexpr int kBands = 30;
constexpr int kRows = 4;

// The statistics a build of `n` rows records when every row sees the others
// at these similarities (the moments exact, as if averaged over many rows),
// with prefixes of `bits` bits beyond the band number at every depth.
BandMoments moments_of(const std::vector<double> &others, double n, int bits) {
    BandMoments bm;
    bm.bands = kBands;
    bm.rows_at_build = n;
    const double entries = n * kBands;
    for (int m = 1; m <= kRows; ++m) {
        double mu = 0.0;
        for (double j : others)
            mu += std::pow(j, m);
        const double chance = n * std::ldexp(1.0, -bits);
        // S_m / E - 1 = mu_m + chance
        set_band_moment(&bm, m, entries * (1.0 + mu + chance), entries, bits);
    }
    return bm;
}

double true_candidates(const std::vector<double> &others, int m) {
    double c = 0.0;
    for (double j : others)
        c += prefix_hit_probability(j, m, kBands);
    return c;
}

// The estimate is an upper bound for near-duplicates and a fair count
// elsewhere: within a factor 2 above and 0.6 below the truth, give or take
// half a row.
void expect_close(double est, double truth, int m) {
    EXPECT_GE(est, 0.6 * truth - 0.5) << "m = " << m << ", truth " << truth;
    EXPECT_LE(est, 2.0 * truth + 0.5) << "m = " << m << ", truth " << truth;
}

}  // namespace

// Nine near-duplicates: each shares most bands with the row, so counting the
// bands (what the statistics sum) would say 30 times too many; the estimate
// counts rows.
TEST(LshEstimate, NearDuplicatesCountOnce) {
    std::vector<double> others;
    for (int i = 0; i < 9; ++i)
        others.push_back(0.82 + 0.02 * i);
    const BandMoments bm = moments_of(others, 100000, 32);
    for (int m = 1; m <= kRows; ++m) {
        const double est = expected_candidates(bm, m);
        expect_close(est, true_candidates(others, m), m);
        EXPECT_LT(est, kBands * bm.moment[m] / 10) << "m = " << m;
    }
    // and the matches at 0.8: the 9, within the estimator's bound
    EXPECT_GE(expected_matches(bm, 0.8), 9 * 0.95);
    EXPECT_LE(expected_matches(bm, 0.8), 9 * 1.5);
}

// Exact duplicates: found through every band, verified once each.
TEST(LshEstimate, ExactDuplicates) {
    const std::vector<double> others(5, 1.0);
    const BandMoments bm = moments_of(others, 50000, 32);
    for (int m = 1; m <= kRows; ++m)
        expect_close(expected_candidates(bm, m), 5.0, m);
    EXPECT_NEAR(expected_matches(bm, 1.0), 5.0, 1e-9);
}

// Many rows of low similarity (character shingles of unrelated text): each
// shares a band rarely, so the bands' sum is nearly the count; shallow
// prefixes find many of them.
TEST(LshEstimate, LowSimilarityCrowd) {
    std::vector<double> others(2000, 0.05);
    const BandMoments bm = moments_of(others, 1000000, 32);
    for (int m = 1; m <= kRows; ++m)
        expect_close(expected_candidates(bm, m), true_candidates(others, m), m);
    // and hardly any of them match at 0.3
    EXPECT_LT(expected_matches(bm, 0.3), 1.0);
}

// A mixture, as a corpus of clusters has: a few near-duplicates and a spread
// of weaker relatives.
TEST(LshEstimate, Mixture) {
    std::vector<double> others = {0.95, 0.9, 0.7, 0.6, 0.5, 0.45, 0.4, 0.35, 0.3, 0.25, 0.2};
    for (int i = 0; i < 300; ++i)
        others.push_back(0.02);
    const BandMoments bm = moments_of(others, 200000, 32);
    for (int m = 1; m <= kRows; ++m)
        expect_close(expected_candidates(bm, m), true_candidates(others, m), m);
}

// Large clusters (a fifth of the rows in groups of 100 at 0.6 to 1, as
// manual pages sharing boilerplate), the rest unrelated: the bands' sum is
// 14-24 times the rows found.
TEST(LshEstimate, LargeClusters) {
    std::vector<double> cluster;
    for (int i = 0; i < 100; ++i)
        cluster.push_back(0.6 + 0.004 * i);
    BandMoments bm;
    bm.bands = kBands;
    bm.rows_at_build = 17600;
    const double entries = bm.rows_at_build * kBands;
    for (int m = 1; m <= kRows; ++m) {
        double mu = 0.0;
        for (double j : cluster)
            mu += 0.2 * std::pow(j, m);
        set_band_moment(&bm, m, entries * (1.0 + mu), entries, 32);
    }
    for (int m = 1; m <= kRows; ++m) {
        double truth = 0.0;
        for (double j : cluster)
            truth += 0.2 * prefix_hit_probability(j, m, kBands);
        expect_close(expected_candidates(bm, m), truth, m);
    }
}

// Unrelated rows only: the prefixes shared by chance, b * n / 2^bits, which a
// shallower prefix (fewer bits) multiplies.
TEST(LshEstimate, ChanceOnly) {
    const BandMoments bm = moments_of({}, 1000000, 19);
    const double chance = kBands * 1000000 * std::ldexp(1.0, -19);
    EXPECT_NEAR(expected_candidates(bm, 2), chance, 1e-6);
    EXPECT_NEAR(expected_matches(bm, 0.5), 0.0, 1e-12);
}

// Shallower probes never find fewer rows; unrecorded depths say so.
TEST(LshEstimate, MonotoneAndUnknown) {
    std::vector<double> others = {0.9, 0.8, 0.6, 0.4, 0.3};
    const BandMoments bm = moments_of(others, 10000, 32);
    for (int m = 2; m <= kRows; ++m)
        EXPECT_GE(expected_candidates(bm, m - 1), expected_candidates(bm, m) - 1e-9);
    EXPECT_LT(expected_candidates(bm, kRows + 1), 0.0);
    EXPECT_LT(expected_matches(BandMoments{}, 0.5), 0.0);
    // never more than the other rows of the table
    std::vector<double> many(50, 1.0);
    const BandMoments small = moments_of(many, 20, 32);
    EXPECT_LE(expected_candidates(small, 1), 19.0);
    EXPECT_LE(expected_matches(small, 0.5), 20.0);
}
