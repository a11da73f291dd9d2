// Known-value tests for normalization and both shingle kinds.
#include "core/shingle.h"

#include <gtest/gtest.h>
#include <unicase.h>
#include <unistr.h>

#include <ctime>
#include <csignal>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/normalize_impl.h"

using minhash::distinct_shingles;
using minhash::normalize;
using minhash::ShingleSpec;
using minhash::ShingleUnit;
using minhash::Status;
using Strings = std::vector<std::string>;

namespace {

Strings words(const std::string &doc, int k) { return distinct_shingles(doc, ShingleSpec{ShingleUnit::Word, k}); }
Strings chars(const std::string &doc, int k) { return distinct_shingles(doc, ShingleSpec{ShingleUnit::Char, k}); }
Strings nospace(const std::string &doc, int k) {
    return distinct_shingles(doc, ShingleSpec{ShingleUnit::CharNoSpace, k});
}

// The units of a normalized text, as strings.
Strings units(const std::string &doc, ShingleUnit unit) {
    const auto norm = normalize(doc, unit);
    EXPECT_EQ(norm.starts.size(), norm.ends.size());
    Strings out;
    for (size_t i = 0; i < norm.starts.size(); ++i)
        out.push_back(norm.text.substr(norm.starts[i], norm.ends[i] - norm.starts[i]));
    return out;
}

}  // namespace

TEST(ShingleUnit, DefaultsAndNames) {
    EXPECT_EQ(minhash::default_shingle_size(ShingleUnit::Word), 5);
    EXPECT_EQ(minhash::default_shingle_size(ShingleUnit::Char), 9);
    EXPECT_EQ(minhash::default_shingle_size(ShingleUnit::CharNoSpace), 9);
    for (ShingleUnit u : {ShingleUnit::Word, ShingleUnit::Char, ShingleUnit::CharNoSpace}) {
        ShingleUnit parsed;
        ASSERT_TRUE(minhash::parse_shingle_unit(minhash::shingle_unit_name(u), &parsed));
        EXPECT_EQ(parsed, u);
    }
    ShingleUnit parsed;
    EXPECT_FALSE(minhash::parse_shingle_unit("Word", &parsed));
    EXPECT_FALSE(minhash::parse_shingle_unit("", &parsed));
    EXPECT_FALSE(minhash::parse_shingle_unit("chars", &parsed));
}

TEST(WordShingles, NonAsciiLettersAreCaseFoldedAndPunctuationSeparates) {
    const std::string doc = "Ça va? Über-Größe";
    EXPECT_EQ(normalize(doc, ShingleUnit::Word).text, "ça va über grösse");
    EXPECT_EQ(units(doc, ShingleUnit::Word), (Strings{"ça", "va", "über", "grösse"}));
    EXPECT_EQ(words(doc, 2), (Strings{"ça va", "va über", "über grösse"}));
    EXPECT_EQ(words(doc, 4), (Strings{"ça va über grösse"}));
}

// Full case folding: texts that differ only in case compare equal even where
// lowercasing one character at a time would keep them apart.
TEST(WordShingles, FullCaseFolding) {
    auto same = [](const std::string &a, const std::string &b) {
        EXPECT_EQ(normalize(a, ShingleUnit::Word).text, normalize(b, ShingleUnit::Word).text)
            << a << " / " << b;
        EXPECT_EQ(normalize(a, ShingleUnit::Char).text, normalize(b, ShingleUnit::Char).text)
            << a << " / " << b;
    };
    same("ΣΟΦΙΑΣ ΟΔΟΣ", "σοφιας οδος");  // final sigma ς folds to σ, as Σ does
    same("STRASSE", "Straße");            // ß folds to "ss"
    same("GROẞE", "große");               // so does the capital ẞ
    same("ﬁle ﬂow", "FILE FLOW");         // ligatures fold to their letters
    same("ſpeed", "SPEED");               // long s
    same("ᏣᎳᎩ", "ꮳꮃꭹ");                    // Cherokee small letters fold to the capitals
    EXPECT_EQ(normalize("ΣΟΦΙΑΣ", ShingleUnit::Word).text, "σοφιασ");
    EXPECT_EQ(normalize("İstanbul", ShingleUnit::Word).text, "i\u0307stanbul");  // no Turkish rules
    // No Unicode normalization: a precomposed letter and its decomposition differ.
    EXPECT_NE(normalize("é", ShingleUnit::Word).text, normalize("e\u0301", ShingleUnit::Word).text);
}

TEST(WordShingles, OtherScripts) {
    EXPECT_EQ(units("ПРИВЕТ, Мир! Ελληνικά ΣΟΦΙΑ", ShingleUnit::Word),
              (Strings{"привет", "мир", "ελληνικά", "σοφια"}));
    // CJK ideographs are letters; a run without spaces is one token.
    EXPECT_EQ(units("中文 文本。日本", ShingleUnit::Word), (Strings{"中文", "文本", "日本"}));
    // Arabic-Indic digits are decimal digits.
    EXPECT_EQ(units("رقم ٣٤ x", ShingleUnit::Word), (Strings{"رقم", "٣٤", "x"}));
}

TEST(WordShingles, DigitsAndPunctuation) {
    EXPECT_EQ(units("Version 2.0 has 3 bugs; C3PO's 42nd!", ShingleUnit::Word),
              (Strings{"version", "2", "0", "has", "3", "bugs", "c3po", "s", "42nd"}));
    EXPECT_EQ(units("hello,world!!!foo___bar", ShingleUnit::Word),
              (Strings{"hello", "world", "foo", "bar"}));
    EXPECT_EQ(words("a-b-c-d-e-f", 5), (Strings{"a b c d e", "b c d e f"}));
}

TEST(WordShingles, WhitespaceRunsCollapse) {
    EXPECT_EQ(normalize("  \t one\n\n  two\r\nthree  ", ShingleUnit::Word).text, "one two three");
    // U+00A0 NO-BREAK SPACE and U+3000 IDEOGRAPHIC SPACE separate too.
    EXPECT_EQ(normalize("one\u00a0two\u3000three", ShingleUnit::Word).text, "one two three");
}

TEST(WordShingles, CombiningMarksStayInTheirWord) {
    // "e" + U+0301 COMBINING ACUTE ACCENT continues the token ...
    EXPECT_EQ(units("Cafe\u0301 ole", ShingleUnit::Word), (Strings{"cafe\u0301", "ole"}));
    // ... but a mark with no letter before it is not a word on its own.
    EXPECT_EQ(units("\u0301 x", ShingleUnit::Word), (Strings{"x"}));
}

TEST(WordShingles, DefaultSizeWindowsAndRepeats) {
    EXPECT_EQ(words("The quick brown fox jumps over the lazy dog", 5),
              (Strings{"the quick brown fox jumps", "quick brown fox jumps over",
                       "brown fox jumps over the", "fox jumps over the lazy",
                       "jumps over the lazy dog"}));
    // Distinct, in order of first appearance.
    EXPECT_EQ(words("a b a b a b A B", 2), (Strings{"a b", "b a"}));
    EXPECT_EQ(words("x y z", 1), (Strings{"x", "y", "z"}));
}

TEST(WordShingles, ShortTextIsOneShingleAndEmptyIsNone) {
    EXPECT_EQ(words("Hello, World", 5), (Strings{"hello world"}));
    EXPECT_EQ(words("one two three four five", 5), (Strings{"one two three four five"}));
    EXPECT_EQ(words("solo", 5), (Strings{"solo"}));
    EXPECT_TRUE(words("", 5).empty());
    EXPECT_TRUE(words("  ,;!? -- ", 5).empty());
}

TEST(CharShingles, WhitespaceCollapsedAndTrimmed) {
    EXPECT_EQ(normalize("  A  b\t\nC  ", ShingleUnit::Char).text, "a b c");
    EXPECT_EQ(units(" Ab  c ", ShingleUnit::Char), (Strings{"a", "b", " ", "c"}));
    EXPECT_EQ(chars("abcd", 3), (Strings{"abc", "bcd"}));
    EXPECT_EQ(chars("Ab cd", 3), (Strings{"ab ", "b c", " cd"}));
    // Punctuation is kept in character shingles.
    EXPECT_EQ(chars("a,b", 2), (Strings{"a,", ",b"}));
}

TEST(CharShingles, CodePointsNotBytes) {
    EXPECT_EQ(chars("GRÖẞE", 2), (Strings{"gr", "rö", "ös", "ss", "se"}));
    EXPECT_EQ(units("ça", ShingleUnit::Char), (Strings{"ç", "a"}));
    EXPECT_EQ(chars("日本語", 2), (Strings{"日本", "本語"}));
}

// A character whose folding is several code points contributes that many units.
TEST(CharShingles, FoldedCodePointsAreUnits) {
    EXPECT_EQ(units("aß", ShingleUnit::Char), (Strings{"a", "s", "s"}));
    EXPECT_EQ(units("ΐ", ShingleUnit::CharNoSpace), (Strings{"ι", "\u0308", "\u0301"}));
    EXPECT_EQ(chars("Maße", 3), chars("MASSE", 3));
    EXPECT_EQ(nospace("ﬃ x", 2), (Strings{"ff", "fi", "ix"}));
}

TEST(CharShingles, NoSpaceVariantDropsWhitespace) {
    EXPECT_EQ(normalize(" a b\n c ", ShingleUnit::CharNoSpace).text, "abc");
    EXPECT_EQ(nospace("ab cd", 3), (Strings{"abc", "bcd"}));
    EXPECT_EQ(nospace("to be or", 4), (Strings{"tobe", "obeo", "beor"}));
}

TEST(CharShingles, ShortTextIsOneShingleAndEmptyIsNone) {
    EXPECT_EQ(chars("Short  text", 20), (Strings{"short text"}));
    EXPECT_EQ(nospace("Short  text", 20), (Strings{"shorttext"}));
    EXPECT_EQ(chars("abcdefghi", 9), (Strings{"abcdefghi"}));
    EXPECT_TRUE(chars("", 9).empty());
    EXPECT_TRUE(chars(" \t\n ", 9).empty());
    EXPECT_TRUE(nospace(" \t\n ", 9).empty());
}

TEST(Normalize, MalformedUtf8ActsAsSeparator) {
    EXPECT_EQ(units("ab\xff" "cd", ShingleUnit::Word), (Strings{"ab", "cd"}));
    // A truncated sequence at the end, a lone continuation byte, an overlong
    // encoding of '/', an encoded surrogate: all separators, nothing lost around them.
    EXPECT_EQ(units("x\x80y\xc0\xafz\xed\xa0\x80w\xc3", ShingleUnit::Word),
              (Strings{"x", "y", "z", "w"}));
    EXPECT_EQ(normalize("a\xff" "b", ShingleUnit::Char).text, "a b");
    EXPECT_EQ(normalize("a\xff\xfe b", ShingleUnit::CharNoSpace).text, "ab");
    EXPECT_TRUE(words("\xff\xfe\xfd", 5).empty());
}

TEST(Normalize, ControlCharactersSeparate) {
    EXPECT_EQ(normalize(std::string("a\0b\x01" "c\x7f", 6), ShingleUnit::Char).text, "a b c");
    EXPECT_EQ(normalize("a\u0085b", ShingleUnit::Char).text, "a b");  // NEL, a C1 control
}

TEST(Normalize, UnitOffsetsCoverTheText) {
    const auto norm = normalize("Größe und  Maß", ShingleUnit::Word);
    EXPECT_EQ(norm.text, "grösse und mass");
    EXPECT_EQ(norm.starts, (std::vector<uint32_t>{0, 8, 12}));
    EXPECT_EQ(norm.ends, (std::vector<uint32_t>{7, 11, 16}));
}

TEST(Normalize, CaseFoldingMayChangeTheByteLength) {
    // U+023A (2 bytes) folds to U+2C65 (3 bytes); U+212A KELVIN SIGN (3) to 'k' (1).
    EXPECT_EQ(normalize("\u023a\u023a \u212a", ShingleUnit::Word).text, "\u2c65\u2c65 k");
    std::string doc;
    for (int i = 0; i < 1000; ++i)
        doc += "\u023a";
    EXPECT_EQ(normalize(doc, ShingleUnit::Char).text.size(), 3000u);
    // The largest growth: U+0390 (2 bytes) folds to three code points, 6 bytes.
    std::string worst;
    for (int i = 0; i < 1000; ++i)
        worst += "\u0390";
    EXPECT_EQ(normalize(worst, ShingleUnit::CharNoSpace).text.size(), 6000u);
    EXPECT_EQ(normalize(worst, ShingleUnit::Word).text.size(), 6000u);
}

// Every code point, against libunistring's u8_casefold: the per-character
// folding (lowercasing outside the exceptions the table marks) is exactly
// full case folding, and never grows more than the normalizer's capacity allows.
TEST(Normalize, FoldingOfEveryCodePointIsFullCaseFolding) {
    size_t folded_differently = 0;
    for (ucs4_t uc = 0x80; uc < 0x110000; ++uc) {
        if (uc >= 0xD800 && uc < 0xE000)
            continue;
        uint8_t in[4];
        const int in_len = u8_uctomb(in, uc, 4);
        ASSERT_GT(in_len, 0);
        minhash::detail::NonAscii cp;
        minhash::detail::classify_non_ascii(in, static_cast<size_t>(in_len), false, &cp);
        ASSERT_EQ(cp.in_len, in_len);
        if (cp.cls == minhash::detail::kSeparator)
            continue;
        uint8_t expected[32];
        size_t expected_len = sizeof expected;
        ASSERT_EQ(u8_casefold(in, static_cast<size_t>(in_len), nullptr, nullptr, expected,
                              &expected_len),
                  expected);
        ASSERT_EQ(std::string(cp.out, cp.out_len),
                  std::string(reinterpret_cast<char *>(expected), expected_len))
            << "U+" << std::hex << uc;
        ASSERT_LE(cp.out_len, minhash::detail::kMaxExpansion * static_cast<size_t>(in_len));
        // Word mode folds letters the same way.
        minhash::detail::NonAscii word;
        minhash::detail::classify_non_ascii(in, static_cast<size_t>(in_len), true, &word);
        if (word.cls != minhash::detail::kSeparator) {
            ASSERT_EQ(std::string(word.out, word.out_len), std::string(cp.out, cp.out_len));
        }
        uint8_t lower[4];
        const int lower_len = u8_uctomb(lower, uc_tolower(uc), 4);
        folded_differently += std::string(cp.out, cp.out_len) !=
                              std::string(reinterpret_cast<char *>(lower), lower_len);
    }
    // ß, ς, ſ, ligatures, Cherokee, ...: a few hundred (298 in Unicode 14).
    EXPECT_GT(folded_differently, 200u);
    EXPECT_LT(folded_differently, 400u);
}

TEST(ShingleSize, OutOfRangeFallsBackSafely) {
    EXPECT_EQ(minhash::clamp_shingle_size({ShingleUnit::Word, 0}), 5);
    EXPECT_EQ(minhash::clamp_shingle_size({ShingleUnit::Char, -3}), 9);
    EXPECT_EQ(minhash::clamp_shingle_size({ShingleUnit::Char, 1000}), minhash::kMaxShingleSize);
    EXPECT_EQ(minhash::clamp_shingle_size({ShingleUnit::Word, 7}), 7);
    EXPECT_EQ(words("a b c d e f", 0), words("a b c d e f", 5));
}

// ---- distinct_shingles with a budget and an interrupt flag ----

namespace {

// The reference: every window of the recorded units, deduplicated.
Strings reference_distinct(const std::string &doc, ShingleSpec spec) {
    const auto norm = normalize(doc, spec.unit);
    Strings out;
    std::set<std::string> seen;
    minhash::for_each_shingle(norm, minhash::clamp_shingle_size(spec), [&](std::string_view s) {
        if (seen.insert(std::string(s)).second)
            out.emplace_back(s);
    });
    return out;
}

Strings as_strings(const minhash::DistinctShingles &set) {
    Strings out;
    for (size_t i = 0; i < set.size(); ++i)
        out.emplace_back(set[i]);
    return out;
}

constexpr size_t kUnlimited = ~size_t(0);

}  // namespace

TEST(DistinctShingles, StreamingEqualsEveryWindowDeduplicated) {
    // Enough distinct shingles to grow the hash table many times, repeats,
    // non-ASCII units, and k from 1 to the maximum (short-text case included).
    std::mt19937 rng(11);
    std::string doc;
    const char *vocab[] = {"alpha", "Beta", "γάμμα", "δέλτα", "x", "größe", "日本", "ÉTÉ"};
    for (int i = 0; i < 6000; ++i) {
        doc += (rng() % 5 ? std::string(vocab[rng() % 8]) : "w" + std::to_string(rng() % 4000));
        doc += (rng() % 7 ? " " : ", ");
    }
    for (ShingleUnit u : {ShingleUnit::Word, ShingleUnit::Char, ShingleUnit::CharNoSpace}) {
        for (int k : {1, 2, 5, 9, 256}) {
            const ShingleSpec spec{u, k};
            minhash::DistinctShingles set;
            ASSERT_EQ(distinct_shingles(doc, spec, nullptr, kUnlimited, &set), Status::Ok);
            const Strings expected = reference_distinct(doc, spec);
            EXPECT_EQ(as_strings(set), expected) << minhash::shingle_unit_name(u) << " k=" << k;
            size_t bytes = 0;
            for (const auto &s : expected)
                bytes += s.size();
            EXPECT_EQ(set.total_bytes(), bytes);
        }
    }
    // Short texts and empty ones, through the same path.
    EXPECT_EQ(words("Hello, World", 5), (Strings{"hello world"}));
    EXPECT_TRUE(words(" ;; ", 5).empty());
}

TEST(DistinctShingles, BudgetChargesEachDistinctShingleOnce) {
    const ShingleSpec spec{ShingleUnit::Word, 1};
    const size_t per = 1 + minhash::kDistinctShingleOverhead;  // one-letter words
    minhash::DistinctShingles set;
    // Three distinct shingles, repeated: repeats cost nothing.
    const std::string doc = "a b c a b c a a a";
    EXPECT_EQ(distinct_shingles(doc, spec, nullptr, 3 * per, &set), Status::Ok);
    EXPECT_EQ(as_strings(set), (Strings{"a", "b", "c"}));
    EXPECT_EQ(distinct_shingles(doc, spec, nullptr, 3 * per - 1, &set), Status::TooLarge);
    EXPECT_EQ(set.size(), 0u);  // nothing is returned on failure
    EXPECT_EQ(distinct_shingles(doc, spec, nullptr, 0, &set), Status::TooLarge);
    // The empty set fits any budget.
    EXPECT_EQ(distinct_shingles(" , ", spec, nullptr, 0, &set), Status::Ok);
    EXPECT_EQ(set.size(), 0u);
}

// CPU time of this thread: unlike wall time, other processes on a loaded
// machine do not inflate it.
static double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

TEST(DistinctShingles, TooLargeStopsEarly) {
    // Hundreds of thousands of distinct character shingles against a 64 kB
    // budget: the answer comes as soon as the budget is spent, not after the
    // document. Compared, in one run, with the same document without a budget.
    std::string doc(size_t(4) << 20, ' ');
    uint64_t x = 1;
    for (size_t i = 0; i < doc.size(); i += 1 + x % 13) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        doc[i] = static_cast<char>('a' + (x >> 59));
    }
    double t0 = thread_cpu_seconds();
    minhash::DistinctShingles whole;
    ASSERT_EQ(distinct_shingles(doc, {ShingleUnit::Char, 9}, nullptr, SIZE_MAX, &whole),
              Status::Ok);
    const double whole_seconds = thread_cpu_seconds() - t0;
    ASSERT_GT(whole.size(), size_t(100000));

    t0 = thread_cpu_seconds();
    minhash::DistinctShingles set;
    EXPECT_EQ(distinct_shingles(doc, {ShingleUnit::Char, 9}, nullptr, size_t(64) << 10, &set),
              Status::TooLarge);
    const double budget_seconds = thread_cpu_seconds() - t0;
    EXPECT_EQ(set.size(), 0u);
    // 64 kB / (9 + 32) bytes is about 1,600 shingles, under 2% of the set:
    // stopping there costs a small fraction of the whole document's work.
    EXPECT_LT(budget_seconds, whole_seconds / 5)
        << "budget run " << budget_seconds << " s, whole document " << whole_seconds << " s";
}

TEST(DistinctShingles, InterruptFlagStopsTheWork) {
    std::string doc;
    for (int i = 0; i < 20000; ++i)
        doc += "word" + std::to_string(i) + ' ';
    volatile std::sig_atomic_t pending = 1;
    minhash::DistinctShingles set;
    for (ShingleUnit u : {ShingleUnit::Word, ShingleUnit::Char, ShingleUnit::CharNoSpace}) {
        pending = 1;
        EXPECT_EQ(distinct_shingles(doc, {u, 3}, &pending, kUnlimited, &set), Status::Interrupted);
        EXPECT_EQ(set.size(), 0u);
        pending = 0;
        EXPECT_EQ(distinct_shingles(doc, {u, 3}, &pending, kUnlimited, &set), Status::Ok);
        EXPECT_EQ(as_strings(set), reference_distinct(doc, {u, 3}));
    }
}

TEST(DistinctShingles, InterruptIsPolledBetweenLongTokens) {
    // Two units of 8 MB each: polling per input bytes (not only per unit count) sees the flag.
    const std::string doc(8 << 20, 'x');
    volatile std::sig_atomic_t pending = 1;
    minhash::DistinctShingles set;
    EXPECT_EQ(distinct_shingles(doc + " " + doc, {ShingleUnit::Word, 1}, &pending, kUnlimited, &set),
              Status::Interrupted);
}
