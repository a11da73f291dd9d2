// The datasketch family against datasketch itself: tests/vectors/datasketch.tsv
// holds datasketch.MinHash(num_perm=k, seed=s).hashvalues for several k, seeds
// and shingle lists (non-ASCII and the empty string included), and the
// permutations (a, b) of a few seeds (tests/vectors/gen_datasketch.py).
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/datasketch.h"
#include "core/signature.h"

using namespace minhash;

namespace {

// The JSON arrays the generator writes: unsigned integers, or strings whose
// only escapes are \" \\ and \uXXXX below U+0080 (ensure_ascii=False).
std::vector<uint64_t> parse_ints(const std::string &s) {
    std::vector<uint64_t> out;
    size_t i = 0;
    while (i < s.size()) {
        if (isdigit(static_cast<unsigned char>(s[i]))) {
            size_t end;
            out.push_back(std::stoull(s.substr(i), &end));
            i += end;
        } else {
            ++i;
        }
    }
    return out;
}

std::vector<std::string> parse_strings(const std::string &s) {
    std::vector<std::string> out;
    size_t i = 0;
    while ((i = s.find('"', i)) != std::string::npos) {
        std::string cur;
        for (++i; s[i] != '"'; ++i) {
            if (s[i] == '\\') {
                ++i;
                if (s[i] == 'u') {
                    cur += static_cast<char>(std::stoi(s.substr(i + 1, 4), nullptr, 16));
                    i += 4;
                    continue;
                }
            }
            cur += s[i];
        }
        out.push_back(cur);
        ++i;
    }
    return out;
}

std::vector<std::vector<std::string>> rows(const char *kind) {
    std::ifstream in(MINHASH_VECTORS_DIR "/datasketch.tsv");
    std::vector<std::vector<std::string>> out;
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        std::string field;
        while (std::getline(ss, field, '\t'))
            f.push_back(field);
        if (!f.empty() && f[0] == kind)
            out.push_back(f);
    }
    return out;
}

struct Family {
    PermutationFamily f;
};

}  // namespace

TEST(Datasketch, Sha1Hash32) {
    // SHA-1("abc") = a9993e36...: first four bytes little-endian
    EXPECT_EQ(sha1_hash32("abc", 3), 0x363e99a9u);
}

// The C++ standard specifies mt19937 (and its 10000th output from the
// default seed, 4123659995): the same generator, seeded the same way.
TEST(Datasketch, Mt19937IsTheStandardGenerator) {
    for (uint32_t seed : {5489u, 0u, 1u, 42u, 4294967295u}) {
        Mt19937 ours(seed);
        std::mt19937 ref(seed);
        for (int i = 0; i < 2000; ++i)
            ASSERT_EQ(ours.next32(), ref()) << "seed " << seed << " draw " << i;
    }
    Mt19937 def(5489u);
    uint32_t v = 0;
    for (int i = 0; i < 10000; ++i)
        v = def.next32();
    EXPECT_EQ(v, 4123659995u);
}

TEST(Datasketch, MersenneReduction) {
    const uint64_t p = kMersenne61;
    for (uint64_t x : {uint64_t(0), p - 1, p, p + 1, 2 * p, UINT64_MAX, UINT64_MAX - 5,
                       uint64_t(0x123456789abcdef0)})
        EXPECT_EQ(mod_mersenne61(x), x % p) << x;
}

TEST(Datasketch, Permutations) {
    const auto perms = rows("perm");
    ASSERT_EQ(perms.size(), 4u);
    for (const auto &r : perms) {
        auto fam = std::make_unique<Family>();
        const uint64_t seed = std::stoull(r[1]);
        init_permutation_family(&fam->f, 4, seed, HashFamily::Datasketch);
        const auto a = parse_ints(r[2]), b = parse_ints(r[3]);
        ASSERT_EQ(a.size(), 4u);
        for (int i = 0; i < 4; ++i) {
            EXPECT_EQ(fam->f.a[i], a[i]) << "seed " << seed << " a[" << i << "]";
            EXPECT_EQ(fam->f.b[i], b[i]) << "seed " << seed << " b[" << i << "]";
        }
    }
}

TEST(Datasketch, SignaturesEqualDatasketch) {
    const auto sigs = rows("sig");
    ASSERT_EQ(sigs.size(), 80u);
    for (const auto &r : sigs) {
        const int k = std::stoi(r[1]);
        const uint64_t seed = std::stoull(r[2]);
        const auto shingles = parse_strings(r[4]);
        const auto expect = parse_ints(r[5]);
        ASSERT_EQ(expect.size(), static_cast<size_t>(k));
        auto fam = std::make_unique<Family>();
        init_permutation_family(&fam->f, k, seed, HashFamily::Datasketch);
        std::vector<uint64_t> h;
        for (const auto &s : shingles)
            h.push_back(family_hash(HashFamily::Datasketch, s.data(), s.size()));
        std::vector<uint32_t> sig(k);
        signature_init(sig.data(), k);
        signature_update(fam->f, h.data(), h.size(), sig.data());
        for (int i = 0; i < k; ++i)
            ASSERT_EQ(sig[i], expect[i]) << r[3] << " k " << k << " seed " << seed << " i " << i;
    }
}

// Word shingles of a document are hashed as their UTF-8 bytes, so the
// signature of a text equals datasketch's over the shingles the core shows.
TEST(Datasketch, TextSignatureIsOverItsShingles) {
    const std::string doc = "Straße und STRASSE: naïve café, the quick brown fox";
    auto fam = std::make_unique<Family>();
    init_permutation_family(&fam->f, 64, 7, HashFamily::Datasketch);
    ShingleSpec spec;
    spec.k = 2;
    std::vector<uint32_t> a(64), b(64);
    signature_init(a.data(), 64);
    signature_init(b.data(), 64);
    ASSERT_EQ(signature_of_text(fam->f, doc, spec, a.data(), nullptr), Status::Ok);
    std::vector<uint64_t> h;
    for (const auto &s : distinct_shingles(doc, spec))
        h.push_back(family_hash(HashFamily::Datasketch, s.data(), s.size()));
    signature_update(fam->f, h.data(), h.size(), b.data());
    EXPECT_EQ(a, b);
}

TEST(Datasketch, FamilyNames) {
    HashFamily f;
    EXPECT_TRUE(parse_hash_family("datasketch", &f));
    EXPECT_EQ(f, HashFamily::Datasketch);
    EXPECT_TRUE(parse_hash_family("native", &f));
    EXPECT_EQ(f, HashFamily::Native);
    EXPECT_FALSE(parse_hash_family("murmur3", &f));
    EXPECT_STREQ(hash_family_name(HashFamily::Datasketch), "datasketch");
}
