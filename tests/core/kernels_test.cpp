// The signature kernels beyond AVX2 against the portable one: every kernel
// must compute the same bits (signature_impl.h), for every k (including
// tails shorter than a vector) and every block shape (n not a multiple of
// the block).
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/signature.h"
#include "core/signature_impl.h"

namespace minhash {
namespace {

TEST(SignatureKernels, Avx512AgreesWithPortableBitForBit) {
    if (!detail::cpu_has_avx512())
        GTEST_SKIP() << "no AVX-512 on this CPU";
    std::mt19937_64 rng(4242);
    auto fam = std::make_unique<PermutationFamily>();
    for (int k : {1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 100, 128, 1000, 1024}) {
        init_permutation_family(fam.get(), k, rng());
        for (size_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 18, 20, 31, 200}) {
            std::vector<uint64_t> h(n);
            for (auto &v : h)
                v = rng();
            // Start from a non-empty signature so the final minimum with sig[] counts.
            std::vector<uint32_t> a(k), b(k);
            for (int i = 0; i < k; ++i)
                a[i] = b[i] = static_cast<uint32_t>(rng());
            detail::signature_update_portable(*fam, h.data(), n, a.data());
            detail::signature_update_avx512(*fam, h.data(), n, b.data());
            ASSERT_EQ(a, b) << "k=" << k << " n=" << n;
        }
    }
}

// Keys at the edges of the 32-bit range and hashes whose fold is 0 or ~0.
TEST(SignatureKernels, Avx512EdgeKeys) {
    if (!detail::cpu_has_avx512())
        GTEST_SKIP() << "no AVX-512 on this CPU";
    auto fam = std::make_unique<PermutationFamily>();
    init_permutation_family(fam.get(), 128, 99);
    const std::vector<uint64_t> h = {0, ~0ULL, 0xFFFFFFFFULL, 0xFFFFFFFF00000000ULL, 1, 1ULL << 63};
    std::vector<uint32_t> a(128, kEmptyValue), b(128, kEmptyValue);
    detail::signature_update_portable(*fam, h.data(), h.size(), a.data());
    detail::signature_update_avx512(*fam, h.data(), h.size(), b.data());
    EXPECT_EQ(a, b);
}

// simd_use switches the kernel signature_update calls (minhash.simd), never
// to one the CPU lacks, and every level signs a document to the same bits.
TEST(SignatureKernels, ForcedLevelsSignAlike) {
    const SimdLevel start = simd_in_use();
    auto fam = std::make_unique<PermutationFamily>();
    init_permutation_family(fam.get(), 128, 7);
    const std::string doc = "The quick brown fox jumps over the lazy dog, again and again; "
                            "Straße, ΣΟΦΙΑΣ and 東京 too.";
    const ShingleSpec spec{ShingleUnit::Word, 3};
    std::vector<uint32_t> want(128), got(128);
    EXPECT_EQ(simd_use(SimdLevel::Portable), SimdLevel::Portable);
    EXPECT_EQ(simd_in_use(), SimdLevel::Portable);
    signature_init(want.data(), 128);
    ASSERT_EQ(signature_of_text(*fam, doc, spec, want.data(), nullptr), Status::Ok);
    for (SimdLevel level : {SimdLevel::Avx2, SimdLevel::Avx512}) {
        const SimdLevel used = simd_use(level);
        EXPECT_LE(static_cast<int>(used), static_cast<int>(level));
        EXPECT_LE(static_cast<int>(used), static_cast<int>(simd_best()));
        if (level <= simd_best()) {
            EXPECT_EQ(used, level);
        }
        EXPECT_EQ(simd_in_use(), used);
        signature_init(got.data(), 128);
        ASSERT_EQ(signature_of_text(*fam, doc, spec, got.data(), nullptr), Status::Ok);
        EXPECT_EQ(want, got) << simd_level_name(used);
    }
    simd_use(start);
}

TEST(SignatureKernels, LevelNames) {
    for (SimdLevel level : {SimdLevel::Portable, SimdLevel::Avx2, SimdLevel::Avx512}) {
        SimdLevel parsed;
        ASSERT_TRUE(parse_simd_level(simd_level_name(level), &parsed));
        EXPECT_EQ(parsed, level);
    }
    SimdLevel parsed = SimdLevel::Avx2;
    EXPECT_FALSE(parse_simd_level("sse2", &parsed));
    EXPECT_FALSE(parse_simd_level("", &parsed));
    EXPECT_EQ(parsed, SimdLevel::Avx2);
}

}  // namespace
}  // namespace minhash
