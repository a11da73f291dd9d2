// The fast word normalizer (ASCII 64 bytes at a time, normalize_impl.h)
// against the general one, code point by code point: the same text and the
// same units for every class of input, placed at every offset of the
// 64-byte blocks (the fast path only runs with 80 bytes to go, so every
// sample sits in a long context), under every set of ignore flags (with
// punctuation ignored the fast path is a block function of its own), and
// the signatures of the shingling paths against the definition (the general
// normalizer's units, windowed, hashed).
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/oph.h"
#include "core/shingle.h"
#include "core/signature.h"

namespace minhash {
namespace {

// One sample of each kind of input the normalizer distinguishes.
const std::vector<std::string> &samples() {
    static const std::vector<std::string> s = {
        // ASCII: letters, digits, mixed case, punctuation, every separator class
        "The Quick BROWN fox, 42 jumps; x1y2z3 ... over (the) lazy-dog!",
        "a", "Z9", "__--__", "\t\r\n\v\f ", std::string("nul\0byte", 8), "\x01\x1f\x7f",
        "http://example.com/Path?Q=1&r=Two#Frag", "e-mail@Example.ORG",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaB",
        "ABCDEFGHIJKLMNOP", "abcdefghijklmnopq", "0123456789012345678901234567890123",
        // Latin-1 and other Latin letters inside and between ASCII words
        "caf\xc3\xa9 na\xc3\xafve \xc3\x9c" "ber stougr\xc3\xa9m v\xc3\xa9gy l\xc3\xb6ji",
        "\xc3\x80\xc3\x89\xc3\x8e\xc3\x95\xc3\x9c", "\xc2\xa9 2024 \xc2\xb7 \xc2\xb7",
        // combining marks: continuing a word, starting the text, after a separator
        "e\xcc\x81t\xc3\xa9 cafe\xcc\x81s", "\xcc\x81" "abc", " \xcc\x81\xcc\x82 x",
        "word\xcc\x81\xcc\x82\xcc\x83" "tail",
        // case folding that changes the length or the letters
        "Stra\xc3\x9f" "e STRASSE \xe1\xba\x9e", "\xef\xac\x81ve \xef\xac\x82ow",
        "\xc4\xb0stanbul \xc4\xb1", "\xce\xa3\xce\x9f\xce\xa6\xce\x99\xce\x91\xce\xa3 \xcf\x83\xce\xbf\xcf\x86\xce\xb9\xce\xb1\xcf\x82",
        "\xc7\xb0 \xce\x90 \xe1\xbe\x88", "\xea\xad\xb0\xea\xad\xb1", "\xd0\x9f\xd1\x80\xd0\x98\xd0\x92\xd0\x95\xd0\xa2",
        // CJK, Hangul, Arabic digits, Devanagari
        "\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xa8\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
        "\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4", "\xd9\xa1\xd9\xa2\xd9\xa3",
        "\xe0\xa4\xb9\xe0\xa4\xbf\xe0\xa4\xa8\xe0\xa5\x8d\xe0\xa4\xa6\xe0\xa5\x80",
        // emoji: a symbol, a skin tone modifier, a ZWJ sequence, a flag
        "ok\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd" "fine", "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb",
        "\xf0\x9f\x87\xab\xf0\x9f\x87\xb7", "x\xf0\x9d\x90\x80y",
        // Unicode whitespace and punctuation
        "a\xc2\xa0" "b\xe2\x80\x83" "c\xe3\x80\x80" "d\xe2\x80\xa8" "e", "\xe2\x80\x94\xe2\x80\x9cquoted\xe2\x80\x9d",
        "\xef\xbb\xbf" "bom", "zero\xe2\x80\x8bwidth",
        // invalid UTF-8 (a server in UTF-8 never stores it; the core tolerates it)
        "\x80", "ab\xc3", "\xe2\x82", "x\xc0\xaf" "y", "\xed\xa0\x80", "\xf8\x88\x80\x80\x80",
        "\xff\xfe", "mid\xe2\x28\xa1" "dle", "\xf4\x90\x80\x80",
        // punctuation inside and between words (dropped when ignored: the
        // words join), runs of it, and punctuation next to marks and
        // non-ASCII punctuation
        "don't", "e-mail", "U.S.A.", "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z",
        "end.Start", "'tis", "rock'n'roll'", "...", "--x--", "a , b", "(x)[y]{z}",
        "#$%&*+/<=>@\\^_`|~", "x'\xcc\x81y", "\xc2\xbfQu\xc3\xa9?", "\xe2\x80\x9cquote\xe2\x80\x9d'd",
        "\xe2\x93\x92 2024", "100\xe2\x82\xac", "a\xe2\x80\x94" "b", "a-\xcc\x81", "-\xcc\x81" "b",
        // accents: precomposed, decomposed, several marks, Hangul, a
        // decomposition into symbol and mark, letters that fold to marks
        "Cr\xc3\xa8me br\xc3\xbbl\xc3\xa9" "e", "\xe1\xbe\xaf\xe1\xb9\xa9", "A\xcc\x8a\xe2\x84\xab",
        "\xe2\x89\xa0x", "\xf0\x9d\x85\xa0", "\xc4\xb0\xc7\xb0\xce\x90",
        "\xd9\x84\xd9\x92\xd8\xb9\xd9\x8e", "\xd7\xa9\xd7\x81\xd6\xb8",
    };
    return s;
}

// ASCII text around the samples: tokens, separators and both at once.
const std::vector<std::string> &contexts() {
    static const std::vector<std::string> c = {
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
        "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud",
        "x", " ", "..,,;;  --", "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "it's a well-known e-mail: don't re-send it (again)... ok? no!",
        "a.b", "x-",
    };
    return c;
}

// Every set of ignore flags.
const uint8_t kFlagSets[] = {0, kIgnoreAccents, kIgnorePunctuation, kIgnoreAll};

std::string repeat_to(const std::string &s, size_t n) {
    std::string out;
    while (out.size() < n)
        out += s;
    out.resize(n);
    return out;
}

void expect_same(const std::string &doc, const std::string &what) {
    for (uint8_t ignore : kFlagSets) {
        const NormalizedText fast = normalize(doc, ShingleUnit::Word, NormalizePath::Fast, ignore);
        const NormalizedText general =
            normalize(doc, ShingleUnit::Word, NormalizePath::General, ignore);
        ASSERT_EQ(fast.text, general.text) << what << " ignore " << int(ignore);
        ASSERT_EQ(fast.starts, general.starts) << what << " ignore " << int(ignore);
        ASSERT_EQ(fast.ends, general.ends) << what << " ignore " << int(ignore);
    }
}

// Every sample at every offset of two 64-byte blocks, in every context, and
// at the very end of a long text (where the fast path hands over).
TEST(NormalizePaths, EveryInputClassAtEveryOffset) {
    for (const std::string &ctx : contexts())
        for (size_t si = 0; si < samples().size(); ++si) {
            const std::string &sample = samples()[si];
            for (size_t off = 0; off <= 140; ++off) {
                const std::string doc = repeat_to(ctx, off) + sample + repeat_to(ctx, 200);
                expect_same(doc, "sample " + std::to_string(si) + " offset " + std::to_string(off));
                if (::testing::Test::HasFatalFailure())
                    return;
            }
            for (size_t tail : {0, 1, 15, 16, 63, 64, 79, 80, 81})
                expect_same(repeat_to(ctx, 300) + sample + repeat_to(ctx, tail),
                            "sample " + std::to_string(si) + " tail " + std::to_string(tail));
        }
}

// Tokens longer than a block, ending at a block edge, and texts that are
// all token or all separator.
TEST(NormalizePaths, LongTokensAndBlockEdges) {
    for (size_t len : {15, 16, 17, 63, 64, 65, 79, 80, 81, 127, 128, 129, 200, 1000})
        for (size_t off = 0; off < 70; off += 3) {
            expect_same(std::string(off, ' ') + std::string(len, 'Q') + " end " + std::string(100, '.'),
                        "token " + std::to_string(len) + " at " + std::to_string(off));
            expect_same(std::string(off, 'w') + std::string(len, '!') + std::string(100, 'W'),
                        "separators " + std::to_string(len) + " at " + std::to_string(off));
        }
    expect_same(std::string(5000, 'A'), "all token");
    expect_same(std::string(5000, ' '), "all separator");
    expect_same(std::string(5000, '\xc3'), "all malformed");
    expect_same(std::string(5000, '.'), "all punctuation");
    // punctuation runs of every length inside a token, across block edges
    for (size_t len : {1, 15, 16, 17, 63, 64, 65, 130})
        for (size_t off = 0; off < 70; off += 3)
            expect_same(std::string(off, 'w') + std::string(len, '\'') + std::string(100, 'W') +
                            " " + std::string(len, '-') + "x",
                        "punctuation " + std::to_string(len) + " at " + std::to_string(off));
}

// Random texts over an alphabet that mixes every class, many lengths.
TEST(NormalizePaths, RandomMixtures) {
    const std::vector<std::string> alphabet = {
        "a", "Z", "7", " ", ".", "\n", "\t", "\xc3\xa9", "\xc3\x9f", "\xcc\x81", "\xce\xa3",
        "\xe6\x9d\xb1", "\xf0\x9f\x91\x8d", "\x80", "\xc3", "\xef\xac\x81", "\xc2\xa0", "\xc4\xb0",
        "Hello", "WORLD", "the", "1234567890123456789", "'", "-", "\xe2\x80\x94", "\xed\x95\x9c",
        "\xc2\xbf", "\xe2\x82\xac"};
    std::mt19937_64 rng(26);
    for (int round = 0; round < 3000; ++round) {
        // Mostly ASCII, as real text is, so the fast path runs long stretches.
        std::string doc;
        const size_t n = rng() % 400;
        while (doc.size() < n) {
            const size_t pick = rng() % 100;
            doc += pick < 70 ? alphabet[pick % 3 + (pick % 7 == 0 ? 3 : 0) + (pick % 11 == 0 ? 22 : 0)]
                             : alphabet[rng() % alphabet.size()];
        }
        expect_same(doc, "round " + std::to_string(round));
        if (::testing::Test::HasFatalFailure())
            return;
    }
}

// The shingling paths use the fast normalizer: their signatures equal the
// definition computed from the general normalizer's units.
TEST(NormalizePaths, SignaturesFollowTheGeneralPath) {
    auto fam = std::make_unique<PermutationFamily>();
    init_permutation_family(fam.get(), 64, 5);
    OphFamily oph;
    init_oph_family(&oph, 64, 5);
    for (const std::string &ctx : contexts())
        for (const std::string &sample : samples())
            for (uint8_t ignore : kFlagSets) {
            const std::string doc = repeat_to(ctx, 90) + sample + repeat_to(ctx, 150) + sample +
                                    repeat_to(ctx, 120);
            const NormalizedText norm =
                normalize(doc, ShingleUnit::Word, NormalizePath::General, ignore);
            const auto spec = [&](int k) { return ShingleSpec{ShingleUnit::Word, k, ignore}; };
            for (int k : {1, 3, 5}) {
                std::vector<uint64_t> hashes;
                for_each_shingle(norm, k, [&](std::string_view s) { hashes.push_back(hash_bytes(s)); });
                std::vector<uint32_t> want(64), got(64);
                signature_init(want.data(), 64);
                signature_update(*fam, hashes.data(), hashes.size(), want.data());
                signature_init(got.data(), 64);
                ASSERT_EQ(signature_of_text(*fam, doc, spec(k), got.data(), nullptr), Status::Ok);
                EXPECT_EQ(want, got) << "k=" << k << " ignore " << int(ignore);

                // OPH: each unit hashed once, windows combined (oph.h's definition)
                const std::vector<uint64_t> elems = oph_element_hashes(norm, k);
                signature_init(want.data(), 64);
                oph_update(oph, elems.data(), elems.size(), want.data());
                signature_init(got.data(), 64);
                ASSERT_EQ(oph_sketch_of_text(oph, doc, spec(k), got.data(), nullptr), Status::Ok);
                EXPECT_EQ(want, got) << "oph k=" << k << " ignore " << int(ignore);
            }
        }
}

}  // namespace
}  // namespace minhash
