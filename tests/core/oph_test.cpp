// One-permutation hashing with optimal densification (src/core/oph.h).
#include "core/oph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/jaccard.h"
#include "core/signature.h"

namespace minhash {
namespace {

OphFamily oph(int k, uint64_t seed = kDefaultSeed) {
    OphFamily f;
    init_oph_family(&f, k, seed);
    return f;
}

std::vector<uint32_t> sketch_of_text(const OphFamily &f, const std::string &doc, ShingleSpec spec) {
    std::vector<uint32_t> s(f.num_bins);
    signature_init(s.data(), f.num_bins);
    EXPECT_EQ(oph_sketch_of_text(f, doc, spec, s.data(), nullptr), Status::Ok);
    return s;
}

// The streaming path rolls the polynomial; the definition combines each
// shingle's unit hashes afresh (normalize + for_each_shingle).
std::vector<uint32_t> sketch_by_definition(const OphFamily &f, const std::string &doc, ShingleSpec spec) {
    const std::vector<uint64_t> elems =
        oph_element_hashes(normalize(doc, spec.unit), clamp_shingle_size(spec));
    std::vector<uint32_t> s(f.num_bins);
    signature_init(s.data(), f.num_bins);
    oph_update(f, elems.data(), elems.size(), s.data());
    return s;
}

TEST(Oph, StreamingEqualsDefinition) {
    const std::string doc =
        "It was the best of times, it was the worst of times, it was the age of wisdom, it was "
        "the age of foolishness. Ça va? Über-Größe, ΣΟΦΙΑΣ σοφιας. 1859 1859 1859.";
    for (ShingleUnit u : {ShingleUnit::Word, ShingleUnit::Char, ShingleUnit::CharNoSpace})
        for (int k : {1, 2, 3, 5, 9, 40, 256})
            for (int bins : {1, 7, 64, 128}) {
                const auto f = oph(bins, 3);
                const ShingleSpec spec{u, k};
                EXPECT_EQ(sketch_of_text(f, doc, spec), sketch_by_definition(f, doc, spec))
                    << "unit " << int(u) << " k " << k << " bins " << bins;
            }
}

// Units of every length around the short-unit bound (16 bytes): the text
// path hashes them in the normalizer's buffer, 16 bytes at a time with the
// rest masked off; the definition copies each unit alone. At k = 1 with 1024
// bins nearly every word owns a bin, so one wrong unit hash shows.
TEST(Oph, UnitsOfEveryLengthHashAsDefined) {
    std::string doc;
    for (int len = 1; len <= 40; ++len)
        for (char c : {'a', 'q', 'z', '7'}) {
            for (int i = 0; i < len; ++i)
                doc += static_cast<char>(i % 2 ? c : 'a' + (len + i) % 26);
            doc += len % 3 ? " " : ". ";
        }
    doc += "\xC3\xA9t\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E";
    for (ShingleUnit u : {ShingleUnit::Word, ShingleUnit::Char})
        for (int k : {1, 2, 5}) {
            const auto f = oph(1024, 11);
            const ShingleSpec spec{u, k};
            EXPECT_EQ(sketch_of_text(f, doc, spec), sketch_by_definition(f, doc, spec))
                << "unit " << int(u) << " k " << k;
        }
}

// The definition in oph.h, computed here from its words; array elements
// (family_hash) are units too, so text at k = 1 is the set of its words.
TEST(Oph, UnitHashIsTheDocumentedFunction) {
    auto documented = [](const std::string &unit) {
        unsigned char b[16] = {};
        std::copy(unit.begin(), unit.end(), b);
        uint64_t lo = 0, hi = 0;
        for (int i = 7; i >= 0; --i) {
            lo = lo << 8 | b[i];
            hi = hi << 8 | b[i + 8];
        }
        const unsigned __int128 m =
            static_cast<unsigned __int128>(lo ^ 0x8F3A5C7E91D2B400ULL) *
            (hi ^ 0xC4E1B7A3569D2F00ULL ^ (static_cast<uint64_t>(unit.size()) << 56));
        return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
    };
    for (const std::string unit : {"", "a", "ab", "fox", "eightchr", "ninechars", "sixteen-bytes-16"}) {
        EXPECT_EQ(oph_unit_hash(unit.data(), unit.size()), documented(unit)) << unit;
        EXPECT_EQ(family_hash(HashFamily::Oph, unit.data(), unit.size()), documented(unit)) << unit;
    }
    const std::string long_unit = "seventeen-bytes-x";
    EXPECT_EQ(oph_unit_hash(long_unit.data(), long_unit.size()), hash_bytes(long_unit));
    // the fold without 128-bit integers (32-bit targets) gives the same bits
    std::mt19937_64 rng(31);
    for (int i = 0; i < 10000; ++i) {
        const uint64_t a = i < 4 ? ~uint64_t(0) >> (16 * i) : rng();
        const uint64_t b = i < 4 ? ~uint64_t(0) : rng();
        const unsigned __int128 m = static_cast<unsigned __int128>(a) * b;
        ASSERT_EQ(detail::fold_product_by_halves(a, b),
                  static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64))
            << a << " " << b;
    }
}

// Distinct short units get distinct hashes: every word of one to three
// letters and digits (47,988 of them), none colliding.
TEST(Oph, ShortUnitsDoNotCollide) {
    const std::string alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::vector<uint64_t> h;
    std::string w;
    for (char a : alphabet) {
        h.push_back(oph_unit_hash(&a, 1));
        for (char b : alphabet) {
            w = {a, b};
            h.push_back(oph_unit_hash(w.data(), 2));
            for (char c : alphabet) {
                w = {a, b, c};
                h.push_back(oph_unit_hash(w.data(), 3));
            }
        }
    }
    std::sort(h.begin(), h.end());
    EXPECT_EQ(std::adjacent_find(h.begin(), h.end()), h.end());
    EXPECT_EQ(h.size(), 36u + 36u * 36u + 36u * 36u * 36u);
}

// Units already split (text search lexemes) shingle as the normalizer's do.
TEST(Oph, UnitsEqualText) {
    const std::string doc = "one two three four five six seven eight nine ten two three four";
    const NormalizedText norm = normalize(doc, ShingleUnit::Word);
    const UnitText units{norm.text.data(), norm.starts.data(), norm.ends.data(), norm.starts.size()};
    for (int k : {1, 3, 5, 20})
        for (int bins : {1, 16, 128}) {
            const auto f = oph(bins, 9);
            std::vector<uint32_t> s(bins);
            signature_init(s.data(), bins);
            ASSERT_EQ(oph_sketch_of_units(f, units, k, s.data(), nullptr), Status::Ok);
            EXPECT_EQ(s, sketch_of_text(f, doc, ShingleSpec{ShingleUnit::Word, k})) << "k " << k;
        }
    // an interrupt stops the pass; calling again from scratch completes it
    volatile int flag = 1;
    const auto f = oph(64, 9);
    std::vector<uint32_t> s(64);
    signature_init(s.data(), 64);
    std::vector<uint32_t> big_starts, big_ends;
    std::string big;
    for (int i = 0; i < 5000; ++i) {
        big_starts.push_back(static_cast<uint32_t>(big.size()));
        big += "w" + std::to_string(i);
        big_ends.push_back(static_cast<uint32_t>(big.size()));
        big += ' ';
    }
    const UnitText many{big.data(), big_starts.data(), big_ends.data(), big_starts.size()};
    EXPECT_EQ(oph_sketch_of_units(f, many, 5, s.data(), &flag), Status::Interrupted);
}

TEST(Oph, UnionIsElementwiseMinimumOfSketches) {
    const auto f = oph(128);
    std::mt19937_64 rng(7);
    std::vector<uint64_t> a(300), b(500);
    for (auto &x : a) x = rng();
    for (auto &x : b) x = rng();
    std::vector<uint32_t> sa(128, kEmptyValue), sb(128, kEmptyValue), su(128, kEmptyValue);
    oph_update(f, a.data(), a.size(), sa.data());
    oph_update(f, b.data(), b.size(), sb.data());
    oph_update(f, a.data(), a.size(), su.data());
    oph_update(f, b.data(), b.size(), su.data());
    signature_merge(sa.data(), sb.data(), 128);
    EXPECT_EQ(sa, su);
}

TEST(Oph, DensifyFillsEmptyBinsFromFilledOnes) {
    const auto f = oph(128);
    std::vector<uint64_t> h = {11, 22, 33, 44, 55};  // at most 5 filled bins
    std::vector<uint32_t> sketch(128, kEmptyValue), sig(128);
    oph_update(f, h.data(), h.size(), sketch.data());
    oph_densify(f, sketch.data(), sig.data());
    std::vector<uint32_t> filled;
    for (int i = 0; i < 128; ++i)
        if (sketch[i] != kEmptyValue) {
            filled.push_back(sketch[i]);
            EXPECT_EQ(sig[i], sketch[i]);  // filled bins keep their minimum
        }
    ASSERT_FALSE(filled.empty());
    for (int i = 0; i < 128; ++i)
        EXPECT_NE(std::find(filled.begin(), filled.end(), sig[i]), filled.end()) << i;
    // In place gives the same.
    oph_densify(f, sketch.data(), sketch.data());
    EXPECT_EQ(sketch, sig);
    // The empty set stays empty; a full sketch is unchanged.
    std::vector<uint32_t> empty(128, kEmptyValue), out(128);
    oph_densify(f, empty.data(), out.data());
    EXPECT_EQ(out, empty);
}

// oph_densify reads a table of first arrivals when few bins are filled and
// probes otherwise; both must give the definition's bits, at every fill
// from one bin to all, for bin counts with and without a table (k > 256),
// in place and not, with families alternating (the table is rebuilt).
TEST(Oph, DensifyEqualsTheDefinitionAtEveryFill) {
    std::mt19937_64 rng(7);
    for (int k : {1, 2, 5, 64, 128, 255, 256, 257, 1024}) {
        const OphFamily fams[] = {oph(k, 1), oph(k, 0xFFFFFFFFFFFFFFFFULL), oph(k, 42)};
        std::vector<int> bins(k);
        for (int i = 0; i < k; ++i)
            bins[i] = i;
        for (int filled = 1; filled <= k; filled += filled < 48 ? 1 : 1 + filled / 4) {
            const OphFamily &f = fams[filled % 3];
            std::shuffle(bins.begin(), bins.end(), rng);
            std::vector<uint32_t> sketch(k, kEmptyValue);
            for (int b = 0; b < filled; ++b)
                sketch[bins[b]] = static_cast<uint32_t>(rng() % kEmptyValue);
            std::vector<uint32_t> want(k), got(k), in_place = sketch;
            detail::oph_densify_by_probing(f, sketch.data(), want.data());
            oph_densify(f, sketch.data(), got.data());
            oph_densify(f, in_place.data(), in_place.data());
            ASSERT_EQ(got, want) << "k " << k << ", " << filled << " filled";
            ASSERT_EQ(in_place, want) << "k " << k << ", " << filled << " filled";
        }
    }
}

// Two sets borrow from the same bin whenever it is filled in both: equal
// sketches give equal signatures, and a set's signature depends on its
// sketch only (not on the order elements came in).
TEST(Oph, DensifiedSignatureIsAFunctionOfTheSet) {
    const auto f = oph(64, 9);
    std::vector<uint64_t> h = {5, 6, 7, 8, 9, 10, 11};
    std::vector<uint32_t> s1(64, kEmptyValue), s2(64, kEmptyValue);
    oph_update(f, h.data(), h.size(), s1.data());
    std::reverse(h.begin(), h.end());
    oph_update(f, h.data(), h.size(), s2.data());
    oph_densify(f, s1.data(), s1.data());
    oph_densify(f, s2.data(), s2.data());
    EXPECT_EQ(s1, s2);
}

// The estimate is unbiased: two sets of 30 elements with Jaccard 1/2 (a
// union of 40, fewer than the 128 bins, so densification matters), many seeds.
TEST(Oph, EstimateIsUnbiasedWithDensification) {
    std::mt19937_64 rng(11);
    const int k = 128, trials = 400;
    double sum = 0, sum_err = 0;
    for (int t = 0; t < trials; ++t) {
        const auto f = oph(k, rng());
        std::vector<uint64_t> common(20), only_a(10), only_b(10);
        for (auto &x : common) x = rng();
        for (auto &x : only_a) x = rng();
        for (auto &x : only_b) x = rng();
        std::vector<uint32_t> a(k, kEmptyValue), b(k, kEmptyValue);
        oph_update(f, common.data(), common.size(), a.data());
        oph_update(f, only_a.data(), only_a.size(), a.data());
        oph_update(f, common.data(), common.size(), b.data());
        oph_update(f, only_b.data(), only_b.size(), b.data());
        oph_densify(f, a.data(), a.data());
        oph_densify(f, b.data(), b.data());
        const double est = jaccard_estimate(a.data(), b.data(), k);
        sum += est;
        sum_err += std::fabs(est - 20.0 / 40.0);
    }
    const double exact = 20.0 / 40.0;  // |common| / |A ∪ B| = 20 / 40
    EXPECT_NEAR(sum / trials, exact, 0.01);
    EXPECT_LT(sum_err / trials, 0.06);  // classic MinHash at k = 128: sqrt(2/pi)·sqrt(J(1-J)/k) ≈ 0.035
}

}  // namespace
}  // namespace minhash
