// Compact signatures (src/core/bbit.h): narrowing keeps the low bits, the
// packed forms round-trip and compare position by position, and the b-bit
// estimator (Li and König) is the paper's formula and unbiased where the
// plain share of equal positions is not.
#include "core/bbit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "core/jaccard.h"
#include "core/oph.h"
#include "core/signature.h"

namespace minhash {
namespace {

TEST(Bbit, WidthsAndBits) {
    for (int bits : {8, 16, 32}) {
        ValueWidth w;
        ASSERT_TRUE(width_of_bits(bits, &w));
        EXPECT_EQ(width_bits(w), bits);
        EXPECT_EQ(value_bytes(w) * 8, static_cast<size_t>(bits));
    }
    ValueWidth w = ValueWidth::Bits16;
    for (int bits : {0, 1, 4, 12, 24, 64, -8})
        EXPECT_FALSE(width_of_bits(bits, &w)) << bits;
    EXPECT_EQ(w, ValueWidth::Bits16);
    // stored codes
    EXPECT_EQ(static_cast<int>(ValueWidth::Bits32), 0);
    EXPECT_EQ(static_cast<int>(ValueWidth::Bits16), 1);
    EXPECT_EQ(static_cast<int>(ValueWidth::Bits8), 2);
}

TEST(Bbit, NarrowKeepsLowBitsAndWidenRestoresThem) {
    const std::vector<uint32_t> v = {0, 1, 255, 256, 65535, 65536, 0x12345678, 0xFFFFFFFF};
    const int k = static_cast<int>(v.size());
    for (ValueWidth w : {ValueWidth::Bits32, ValueWidth::Bits16, ValueWidth::Bits8}) {
        std::vector<unsigned char> packed(value_bytes(w) * k + 1, 0xAB);
        narrow_values(v.data(), k, w, packed.data());
        EXPECT_EQ(packed.back(), 0xAB) << "wrote past k values";
        std::vector<uint32_t> back(k);
        widen_values(packed.data(), k, w, back.data());
        const uint32_t mask = w == ValueWidth::Bits32 ? 0xFFFFFFFFu : (1u << width_bits(w)) - 1;
        for (int i = 0; i < k; ++i)
            EXPECT_EQ(back[i], v[i] & mask) << "bits " << width_bits(w) << " i " << i;
    }
    // 16 → 8 equals 32 → 8
    std::vector<unsigned char> p16(2 * k), p8a(k), p8b(k);
    narrow_values(v.data(), k, ValueWidth::Bits16, p16.data());
    renarrow_values(p16.data(), k, ValueWidth::Bits16, ValueWidth::Bits8, p8a.data());
    narrow_values(v.data(), k, ValueWidth::Bits8, p8b.data());
    EXPECT_EQ(p8a, p8b);
}

TEST(Bbit, MatchingPackedCountsEqualPositions) {
    std::mt19937 rng(1);
    for (ValueWidth w : {ValueWidth::Bits32, ValueWidth::Bits16, ValueWidth::Bits8})
        for (int k : {1, 7, 128, 1024}) {
            std::vector<uint32_t> a(k), b(k);
            int want = 0;
            for (int i = 0; i < k; ++i) {
                a[i] = rng();
                b[i] = (rng() % 3 == 0) ? a[i] : a[i] ^ (1u << (rng() % 8));  // low bits differ
                want += a[i] == b[i];
            }
            std::vector<unsigned char> pa(value_bytes(w) * k), pb(value_bytes(w) * k);
            narrow_values(a.data(), k, w, pa.data());
            narrow_values(b.data(), k, w, pb.data());
            EXPECT_EQ(matching_packed(pa.data(), pb.data(), k, w), want);
            if (w == ValueWidth::Bits32) {
                EXPECT_EQ(matching_values(a.data(), b.data(), k), want);
            }
        }
}

// Li and König's A(r, b) and its limit; C1 = C2 = A when r1 = r2.
TEST(Bbit, ChanceCollisionFormula) {
    for (int b : {1, 2, 8, 16}) {
        EXPECT_DOUBLE_EQ(bbit_chance(0.0, b), std::ldexp(1.0, -b));
        // small r: close to the limit
        EXPECT_NEAR(bbit_chance(1e-12, b), std::ldexp(1.0, -b), 1e-9);
        // a direct evaluation of r (1 - r)^(2^b - 1) / (1 - (1 - r)^(2^b))
        for (double r : {1e-6, 1e-4, 0.01, 0.3}) {
            const double n = std::ldexp(1.0, b);
            const double direct = r * std::pow(1 - r, n - 1) / (1 - std::pow(1 - r, n));
            EXPECT_NEAR(bbit_chance(r, b), direct, 1e-12 + 1e-9 * direct) << "b " << b << " r " << r;
            // dense sets collide less often by chance than 2^-b
            EXPECT_LT(bbit_chance(r, b), std::ldexp(1.0, -b));
        }
    }
    // the estimate undoes P = C1 + (1 - C2) R exactly
    for (int b : {8, 16})
        for (double r1 : {0.0, 1e-5, 0.02})
            for (double r2 : {0.0, 1e-3}) {
                const double a1 = bbit_chance(r1, b), a2 = bbit_chance(r2, b);
                double c1 = a1, c2 = a2;
                if (r1 + r2 > 0) {
                    c1 = (a1 * r2 + a2 * r1) / (r1 + r2);
                    c2 = (a1 * r1 + a2 * r2) / (r1 + r2);
                }
                for (int m : {0, 10, 64, 100, 128}) {
                    const double p = m / 128.0;
                    EXPECT_NEAR(bbit_estimate(m, 128, b, r1, r2), (p - c1) / (1 - c2), 1e-12);
                }
            }
    // 32 bits: the plain share, exactly as jaccard_estimate
    EXPECT_EQ(bbit_jaccard(37, 128, 32), 37.0 / 128);
    EXPECT_EQ(bbit_jaccard(0, 128, 8), 0.0);  // clamped, not negative
    EXPECT_EQ(bbit_jaccard(128, 128, 8), 1.0);
    EXPECT_LT(bbit_jaccard(64, 128, 8), 0.5);
}

// bbit_min_matches is the first count whose estimate reaches t: the index
// compares counts with it, so it must agree with bbit_jaccard everywhere,
// including thresholds that fall exactly on an estimate.
TEST(Bbit, MinMatchesAgreesWithTheEstimate) {
    for (int k : {1, 7, 64, 128, 1024})
        for (int b : {32, 16, 8}) {
            std::vector<double> ts = {0.0, 0.1, 0.3, 0.5, 0.8, 1.0, 1.5, -0.5};
            for (int m : {0, 1, k / 2, k - 1, k})
                ts.push_back(bbit_jaccard(m, k, b));  // exactly on an estimate
            for (double t : ts) {
                const int need = bbit_min_matches(k, b, t);
                ASSERT_GE(need, 0);
                ASSERT_LE(need, k + 1);
                if (need <= k) {
                    EXPECT_GE(bbit_jaccard(need, k, b), t) << k << " " << b << " " << t;
                }
                if (need >= 1) {
                    EXPECT_LT(bbit_jaccard(need - 1, k, b), t) << k << " " << b << " " << t;
                }
            }
        }
    EXPECT_EQ(bbit_min_matches(128, 32, 0.5), 64);
    EXPECT_EQ(bbit_min_matches(128, 32, 0.0), 0);
    EXPECT_EQ(bbit_min_matches(128, 16, 1.5), 129);  // no count reaches it
    // chance collisions at 8 bits: 64 equal values estimate below 0.5
    EXPECT_EQ(bbit_min_matches(128, 8, 0.5), 65);
}

// Simulation: pairs of sets with known Jaccard similarity, signed by the
// native family; the corrected estimate's mean is J at 8 and 16 bits, the
// plain share's is biased upwards by about (1 - J) 2^-b.
TEST(Bbit, CorrectedEstimateIsUnbiased) {
    auto fam = std::make_unique<PermutationFamily>();
    init_permutation_family(fam.get(), 128, 11);
    std::mt19937_64 rng(12);
    const int trials = 400;
    for (double j : {0.0, 0.2, 0.5, 0.9}) {
        double sum_plain8 = 0, sum_corr8 = 0, sum_corr16 = 0;
        for (int t = 0; t < trials; ++t) {
            // |A ∩ B| = s, |A \ B| = |B \ A| = d: J = s / (s + 2d)
            const int total = 300;
            const int s = static_cast<int>(std::lround(j * total));
            const int d = (total - s) / 2;
            std::vector<uint64_t> a, b;
            for (int i = 0; i < s; ++i) {
                const uint64_t x = rng();
                a.push_back(x);
                b.push_back(x);
            }
            for (int i = 0; i < d; ++i) {
                a.push_back(rng());
                b.push_back(rng());
            }
            std::vector<uint32_t> sa(128), sb(128);
            signature_init(sa.data(), 128);
            signature_init(sb.data(), 128);
            signature_update(*fam, a.data(), a.size(), sa.data());
            signature_update(*fam, b.data(), b.size(), sb.data());
            std::vector<unsigned char> a8(128), b8(128), a16(256), b16(256);
            narrow_values(sa.data(), 128, ValueWidth::Bits8, a8.data());
            narrow_values(sb.data(), 128, ValueWidth::Bits8, b8.data());
            narrow_values(sa.data(), 128, ValueWidth::Bits16, a16.data());
            narrow_values(sb.data(), 128, ValueWidth::Bits16, b16.data());
            const int m8 = matching_packed(a8.data(), b8.data(), 128, ValueWidth::Bits8);
            const int m16 = matching_packed(a16.data(), b16.data(), 128, ValueWidth::Bits16);
            sum_plain8 += m8 / 128.0;
            sum_corr8 += bbit_estimate(m8, 128, 8);
            sum_corr16 += bbit_estimate(m16, 128, 16);
        }
        const double exact = static_cast<double>(std::lround(j * 300)) /
                             (std::lround(j * 300) + 2 * ((300 - std::lround(j * 300)) / 2));
        // standard error of the mean: sqrt(J(1-J)/128/trials) <= 0.0023
        EXPECT_NEAR(sum_corr8 / trials, exact, 0.008) << "J " << exact;
        EXPECT_NEAR(sum_corr16 / trials, exact, 0.008) << "J " << exact;
        if (exact < 0.5) {  // the uncorrected share overshoots by (1 - J)/256
            EXPECT_GT(sum_plain8 / trials - sum_corr8 / trials, 0.5 * (1 - exact) / 256);
        }
    }
}

// The oph family: its cardinality estimate, linear counting while bins are
// empty, minima once all are filled.
TEST(Bbit, OphCardinalityEstimate) {
    OphFamily fam;
    init_oph_family(&fam, 128, 3);
    std::mt19937_64 rng(5);
    for (int n : {1, 10, 50, 200, 1000, 20000}) {
        double sum = 0;
        const int trials = 50;
        for (int t = 0; t < trials; ++t) {
            std::vector<uint64_t> h(n);
            for (auto &x : h)
                x = rng();
            std::vector<uint32_t> sk(128);
            signature_init(sk.data(), 128);
            oph_update(fam, h.data(), h.size(), sk.data());
            sum += oph_cardinality_estimate(sk.data(), 128);
        }
        EXPECT_NEAR(sum / trials, n, 0.15 * n + 1) << "n " << n;
    }
    std::vector<uint32_t> empty(128, kEmptyValue);
    EXPECT_EQ(oph_cardinality_estimate(empty.data(), 128), 0.0);
}

}  // namespace
}  // namespace minhash
