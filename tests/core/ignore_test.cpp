// ignore => 'accents' / 'punctuation' (ShingleSpec::ignore): known values,
// the definition (a document is shingled as if the ignored characters had
// been taken out first) checked against libunistring's own NFD on every code
// point and on random texts, and the ASCII tables and SSE2 masks the fast
// paths use checked against libunistring's general categories.
#include <gtest/gtest.h>
#include <unictype.h>
#include <uninorm.h>
#include <unistr.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/normalize_impl.h"
#include "core/shingle.h"

namespace minhash {
namespace {

using Strings = std::vector<std::string>;

const uint8_t kAccents = kIgnoreAccents;
const uint8_t kPunct = kIgnorePunctuation;

std::string text(const std::string &doc, uint8_t ignore, ShingleUnit unit = ShingleUnit::Word) {
    return normalize(doc, unit, NormalizePath::Fast, ignore).text;
}

Strings shingles(const std::string &doc, int k, uint8_t ignore,
                 ShingleUnit unit = ShingleUnit::Word) {
    return distinct_shingles(doc, ShingleSpec{unit, k, ignore});
}

bool is_punctuation_or_symbol(ucs4_t uc) {
    return uc_is_general_category(uc, UC_CATEGORY_P) || uc_is_general_category(uc, UC_CATEGORY_S);
}

// The definition, written independently of the normalizer: each code point
// replaced by its NFD (libunistring's u32_normalize, one code point at a
// time), then nonspacing marks (accents) and punctuation and symbols
// (punctuation) removed. A malformed byte becomes U+0001, a control
// character, which separates as the malformed byte does (keeping the byte
// could let it combine with what follows once a character between them is
// removed).
std::string rewrite(const std::string &doc, uint8_t ignore) {
    std::string out;
    const auto *s = reinterpret_cast<const uint8_t *>(doc.data());
    size_t i = 0;
    while (i < doc.size()) {
        ucs4_t uc;
        const int len = u8_mbtoucr(&uc, s + i, doc.size() - i);
        if (len <= 0) {
            out += '\x01';
            ++i;
            continue;
        }
        i += static_cast<size_t>(len);
        uint32_t buf[32];
        size_t n = 32;
        const uint32_t *d = &uc;
        if (ignore & kAccents) {
            uint32_t *r = u32_normalize(UNINORM_NFD, &uc, 1, buf, &n);
            EXPECT_EQ(r, buf);
            d = buf;
        } else {
            n = 1;
        }
        for (size_t j = 0; j < n; ++j) {
            if ((ignore & kAccents) && uc_is_general_category(d[j], UC_CATEGORY_Mn))
                continue;
            if ((ignore & kPunct) && is_punctuation_or_symbol(d[j]))
                continue;
            uint8_t bytes[4];
            const int m = u8_uctomb(bytes, d[j], 4);
            out.append(reinterpret_cast<char *>(bytes), static_cast<size_t>(m));
        }
    }
    return out;
}

void expect_definition(const std::string &doc, uint8_t ignore, const std::string &what) {
    const std::string plain = rewrite(doc, ignore);
    for (ShingleUnit unit : {ShingleUnit::Word, ShingleUnit::Char, ShingleUnit::CharNoSpace}) {
        const NormalizedText got = normalize(doc, unit, NormalizePath::General, ignore);
        const NormalizedText want = normalize(plain, unit, NormalizePath::General, 0);
        ASSERT_EQ(got.text, want.text) << what << " unit " << int(unit) << " ignore " << int(ignore);
        ASSERT_EQ(got.starts, want.starts) << what;
        ASSERT_EQ(got.ends, want.ends) << what;
    }
}

TEST(Ignore, ParseNames) {
    uint8_t f = 99;
    std::string_view bad;
    EXPECT_TRUE(parse_ignore("", &f, &bad));
    EXPECT_EQ(f, 0);
    EXPECT_TRUE(parse_ignore("  ", &f, &bad));
    EXPECT_EQ(f, 0);
    EXPECT_TRUE(parse_ignore("accents", &f, &bad));
    EXPECT_EQ(f, kAccents);
    EXPECT_TRUE(parse_ignore("punctuation", &f, &bad));
    EXPECT_EQ(f, kPunct);
    EXPECT_TRUE(parse_ignore(" punctuation ,accents\t", &f, &bad));
    EXPECT_EQ(f, kIgnoreAll);
    EXPECT_TRUE(parse_ignore("accents,accents", &f, &bad));
    EXPECT_EQ(f, kAccents);
    EXPECT_FALSE(parse_ignore("Accents", &f, &bad));
    EXPECT_EQ(bad, "Accents");
    EXPECT_FALSE(parse_ignore("accents, unaccent", &f, &bad));
    EXPECT_EQ(bad, "unaccent");
    EXPECT_FALSE(parse_ignore("accents,", &f, &bad));
    EXPECT_EQ(bad, "");
    EXPECT_FALSE(parse_ignore("accents punctuation", &f, &bad));
    EXPECT_EQ(bad, "accents punctuation");
    EXPECT_STREQ(ignore_name(kAccents), "accents");
    EXPECT_STREQ(ignore_name(kPunct), "punctuation");
    EXPECT_EQ(ignore_name(kIgnoreAll), nullptr);
}

TEST(Ignore, AccentsAreDropped) {
    // precomposed, decomposed and plain are one text
    EXPECT_EQ(text("Crème brûlée à la Café", kAccents), "creme brulee a la cafe");
    EXPECT_EQ(text("cafe\u0301", kAccents), "cafe");
    EXPECT_EQ(text("e\u0301t\u00e9 \u00c5 \u212b A\u030a", kAccents), "ete a a a");
    // several levels of decomposition (ᾯ: Ω + ̔ + ͂ + ͅ), letters that fold
    // to a letter and a mark (İ, ǰ, ΐ)
    EXPECT_EQ(text("\u1faf \u1e69", kAccents), "ω s");
    EXPECT_EQ(text("İstanbul ǰ ΐ", kAccents), "istanbul j ι");
    EXPECT_EQ(text("İstanbul", 0), "i\u0307stanbul");
    // Arabic harakat, Hebrew points (nonspacing marks) go; spacing vowel
    // signs (Mc) stay, the virama (Mn) goes
    EXPECT_EQ(text("الْعَرَبِيَّة", kAccents), "العربية");
    EXPECT_EQ(text("שָׁלוֹם", kAccents), "שלום");
    EXPECT_EQ(text("हिन्दी", kAccents), "हिनदी");
    // Hangul syllables are their jamo (the canonical decomposition)
    EXPECT_EQ(text("한국", kAccents), "\u1112\u1161\u11ab\u1100\u116e\u11a8");
    // a mark with nothing before it is gone, not a separator
    EXPECT_EQ(text("\u0301start x\u0301y", kAccents), "start xy");
    // punctuation is not an accent
    EXPECT_EQ(text("don't", kAccents), "don t");
    // ASCII is untouched
    EXPECT_EQ(text("The Quick brown fox", kAccents), "the quick brown fox");
}

TEST(Ignore, PunctuationIsDroppedNotASeparator) {
    EXPECT_EQ(text("don't e-mail U.S.A. rock'n'roll", kPunct), "dont email usa rocknroll");
    EXPECT_EQ(text("don't e-mail", 0), "don t e mail");
    EXPECT_EQ(text("end.Start a , b (x)", kPunct), "endstart a b x");
    // Unicode punctuation and symbols too (categories P and S)
    EXPECT_EQ(text("¿Qué? «quoted» a—b", kPunct), "qué quoted ab");
    EXPECT_EQ(text("100€ ok👍fine ⓒ 2024 ≠", kPunct), "100 okfine 2024");
    // white space and control characters still separate
    EXPECT_EQ(text("a\tb\x01" "c\u00a0d", kPunct), "a b c d");
    // punctuation alone is nothing
    EXPECT_EQ(shingles("... -- !!", 5, kPunct), Strings{});
    // a mark after dropped punctuation continues the word
    EXPECT_EQ(text("e'\u0301", kPunct), "e\u0301");
    // character units: punctuation gone, spaces as before
    EXPECT_EQ(text("Hi, there!", kPunct, ShingleUnit::Char), "hi there");
    EXPECT_EQ(text("a , b", kPunct, ShingleUnit::Char), "a b");
    EXPECT_EQ(text("Hi, there!", kPunct, ShingleUnit::CharNoSpace), "hithere");
    EXPECT_EQ(text("Hi, there!", 0, ShingleUnit::Char), "hi, there!");
}

TEST(Ignore, BothTogether) {
    EXPECT_EQ(text("L'été—déjà «fini»!", kIgnoreAll), "letedeja fini");
    EXPECT_EQ(shingles("Crème-brûlée, s'il vous plaît", 2, kIgnoreAll),
              (Strings{"cremebrulee sil", "sil vous", "vous plait"}));
    // ≠ decomposes to = and a mark: both dropped, as ≠ is with punctuation alone
    EXPECT_EQ(text("a≠b", kIgnoreAll), "ab");
    EXPECT_EQ(text("a≠b", kPunct), "ab");
    EXPECT_EQ(text("a≠b", kAccents, ShingleUnit::Char), "a=b");
}

// The example: an accented text and the same text without accents.
// Word shingles of the two share little; ignoring accents they are equal.
TEST(Ignore, AccentedAndPlainTextsAreTheSameSet) {
    const std::string accented =
        "Le comité a approuvé le règlement intérieur à l'unanimité après un débat très animé";
    const std::string plain =
        "Le comite a approuve le reglement interieur a l'unanimite apres un debat tres anime";
    EXPECT_NE(shingles(accented, 5, 0), shingles(plain, 5, 0));
    EXPECT_EQ(shingles(accented, 5, kAccents), shingles(plain, 5, kAccents));
    EXPECT_EQ(shingles(accented, 5, kAccents), shingles(plain, 5, 0));
}

// Every code point under every set of flags and both unit kinds: the pieces
// are those of libunistring's NFD with the ignored code points removed,
// classified and folded as the code points alone are; the text grows no more
// than the normalizer's capacity allows; and with accents ignored no
// nonspacing mark is left and nothing left decomposes further.
TEST(Ignore, EveryCodePointFollowsTheDefinition) {
    size_t decomposed = 0, dropped = 0;
    for (ucs4_t uc = 0x80; uc < 0x110000; ++uc) {
        if (uc >= 0xD800 && uc < 0xE000)
            continue;
        uint8_t in[4];
        const int in_len = u8_uctomb(in, uc, 4);
        for (uint8_t ignore : {kAccents, kPunct, kIgnoreAll}) {
            const std::string want_text = rewrite(std::string(reinterpret_cast<char *>(in), in_len),
                                                  ignore);
            for (bool word_mode : {true, false}) {
                detail::NonAsciiPieces got;
                detail::classify_non_ascii_ignoring(in, static_cast<size_t>(in_len), word_mode,
                                                    ignore, &got);
                ASSERT_EQ(got.in_len, in_len);
                // the reference: each kept code point on its own
                size_t p = 0, bytes = 0;
                const auto *w = reinterpret_cast<const uint8_t *>(want_text.data());
                for (size_t i = 0; i < want_text.size(); ++p) {
                    ucs4_t c;
                    const int len = u8_mbtoucr(&c, w + i, want_text.size() - i);
                    ASSERT_GT(len, 0);
                    detail::NonAscii one;
                    detail::classify_non_ascii(w + i, static_cast<size_t>(len), word_mode, &one);
                    ASSERT_LT(p, got.count) << "U+" << std::hex << uc;
                    ASSERT_EQ(got.piece[p].cls, one.cls) << "U+" << std::hex << uc;
                    ASSERT_EQ(std::string(got.piece[p].out, got.piece[p].out_len),
                              std::string(one.out, one.out_len))
                        << "U+" << std::hex << uc;
                    bytes += got.piece[p].out_len;
                    i += static_cast<size_t>(len);
                }
                ASSERT_EQ(got.count, p) << "U+" << std::hex << uc;
                ASSERT_LE(bytes, detail::kMaxExpansion * static_cast<size_t>(in_len));
                if (ignore & kAccents) {
                    for (int q = 0; q < got.count; ++q) {
                        const auto *o = reinterpret_cast<const uint8_t *>(got.piece[q].out);
                        for (int b = 0; b < got.piece[q].out_len;) {
                            ucs4_t c;
                            const int len = u8_mbtoucr(&c, o + b, got.piece[q].out_len - b);
                            ASSERT_GT(len, 0);
                            ASSERT_FALSE(uc_is_general_category(c, UC_CATEGORY_Mn))
                                << "U+" << std::hex << uc;
                            ucs4_t d[UC_DECOMPOSITION_MAX_LENGTH];
                            ASSERT_LT(uc_canonical_decomposition(c, d), 0) << "U+" << std::hex << uc;
                            b += len;
                        }
                    }
                }
            }
            if (ignore == kAccents) {
                uint32_t buf[32];
                size_t n = 32;
                u32_normalize(UNINORM_NFD, &uc, 1, buf, &n);
                decomposed += n > 1 || buf[0] != uc;
            }
            dropped += ignore == kPunct && want_text.empty();
        }
    }
    // Unicode 14: 13,233 code points have a canonical decomposition (11,172
    // Hangul syllables); P and S hold about 8,000 code points
    EXPECT_GT(decomposed, 13000u);
    EXPECT_LT(decomposed, 14000u);
    EXPECT_GT(dropped, 7000u);
}

// Texts mixing every class, at random: the normalizer under ignore flags
// equals the plain normalizer on the rewritten text, for every unit.
TEST(Ignore, RandomTextsFollowTheDefinition) {
    const std::vector<std::string> alphabet = {
        "a", "Z", "7", " ", ".", ",", "'", "-", "\n", "\t", "\x01", "é", "e\u0301", "\u0301",
        "ß", "Σ", "東", "👍", "\x80", "\xc3", "ﬁ", "\u00a0", "İ", "한", "≠", "€", "«", "—",
        "\u1faf", "ि", "्", "Å", "ǰ", "Hello", "WORLD"};
    std::mt19937_64 rng(25);
    for (int round = 0; round < 2000; ++round) {
        std::string doc;
        const size_t n = rng() % 60;
        for (size_t i = 0; i < n; ++i)
            doc += alphabet[rng() % alphabet.size()];
        for (uint8_t ignore : {kAccents, kPunct, kIgnoreAll}) {
            expect_definition(doc, ignore, "round " + std::to_string(round));
            if (::testing::Test::HasFatalFailure())
                return;
        }
    }
}

// The ASCII tables against libunistring, and the SSE2 punctuation mask of the
// word fast path against the table, for every byte. On ASCII, punctuation
// and symbols (P and S) are exactly Python's string.punctuation, the
// characters datatrove's simplify_content deleted.
TEST(Ignore, AsciiClassesAreLibunistrings) {
    const std::string python_punctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    for (int c = 0; c < 128; ++c) {
        const auto byte = static_cast<unsigned char>(c);
        const bool punct = is_punctuation_or_symbol(static_cast<ucs4_t>(c));
        EXPECT_EQ(punct, python_punctuation.find(static_cast<char>(c)) != std::string::npos) << c;
        for (bool word_mode : {true, false}) {
            detail::NonAscii one;
            detail::classify_non_ascii(&byte, 1, word_mode, &one);
            const uint8_t *table = word_mode ? detail::kAscii.word_class[0] : detail::kAscii.char_class[0];
            const uint8_t *ignoring = word_mode ? detail::kAscii.word_class[1] : detail::kAscii.char_class[1];
            EXPECT_EQ(table[c], one.cls) << c;
            EXPECT_EQ(ignoring[c], punct ? uint8_t{detail::kIgnored} : one.cls) << c;
        }
    }
#if defined(__SSE2__)
    unsigned char block[detail::kAsciiBlock + 16];
    for (int base = 0; base < 256; base += 64) {
        for (int j = 0; j < int(detail::kAsciiBlock); ++j)
            block[j] = static_cast<unsigned char>(base + j);
        uint64_t token, high, punct;
        detail::classify_ascii_block_punct(block, &token, &high, &punct);
        for (int j = 0; j < int(detail::kAsciiBlock); ++j) {
            const int c = base + j;
            EXPECT_EQ((high >> j) & 1, c >= 128 ? 1u : 0u) << c;
            if (c >= 128)
                continue;
            EXPECT_EQ((token >> j) & 1, detail::kAscii.word_class[0][c] == detail::kToken) << c;
            EXPECT_EQ((punct >> j) & 1, detail::kAscii.word_class[1][c] == detail::kIgnored) << c;
        }
    }
#endif
}

// No flags: exactly the normalization the extension always had (signatures
// and indexes built before the option existed stay valid).
TEST(Ignore, NoFlagsIsTheDefault) {
    const std::string doc = "L'été—déjà «fini»! don't e-mail Crème İ ß 한국 " + std::string(100, 'x');
    for (ShingleUnit unit : {ShingleUnit::Word, ShingleUnit::Char, ShingleUnit::CharNoSpace}) {
        const NormalizedText a = normalize(doc, unit);
        const NormalizedText b = normalize(doc, unit, NormalizePath::Fast, 0);
        EXPECT_EQ(a.text, b.text);
        EXPECT_EQ(a.starts, b.starts);
        EXPECT_NE(a.text, normalize(doc, unit, NormalizePath::Fast, kIgnoreAll).text);
    }
    EXPECT_EQ(text("L'été déjà", 0), "l été déjà");
}

}  // namespace
}  // namespace minhash
