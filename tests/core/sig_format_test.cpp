#include "core/sig_format.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace minhash;

namespace {

SigTextError parse(const char *s, int64_t *seed, std::vector<uint32_t> *v, int max = 1024) {
    v->assign(max, 0);
    int n = 0;
    const SigTextError e = parse_signature_text(s, seed, v->data(), max, &n);
    v->resize(n);
    return e;
}

}  // namespace

TEST(SigFormat, TextAcceptsTheCanonicalFormAndWhiteSpace) {
    int64_t seed;
    std::vector<uint32_t> v;
    ASSERT_EQ(parse(" -9223372036854775808 :\t[ 0, 4294967295 ,7 ]\n", &seed, &v), SigTextError::Ok);
    EXPECT_EQ(seed, INT64_MIN);
    EXPECT_EQ(v, (std::vector<uint32_t>{0, 4294967295u, 7}));
    ASSERT_EQ(parse("+5:[1]", &seed, &v), SigTextError::Ok);
    EXPECT_EQ(seed, 5);
}

TEST(SigFormat, TextErrors) {
    int64_t seed;
    std::vector<uint32_t> v;
    EXPECT_EQ(parse("", &seed, &v), SigTextError::BadSeed);
    EXPECT_EQ(parse("9223372036854775808:[1]", &seed, &v), SigTextError::BadSeed);
    EXPECT_EQ(parse("1[1]", &seed, &v), SigTextError::NoColon);
    EXPECT_EQ(parse("1:", &seed, &v), SigTextError::NoBracket);
    EXPECT_EQ(parse("1:[]", &seed, &v), SigTextError::Empty);
    EXPECT_EQ(parse("1:[4294967296]", &seed, &v), SigTextError::BadValue);
    EXPECT_EQ(parse("1:[1,]", &seed, &v), SigTextError::BadValue);
    EXPECT_EQ(parse("1:[1 2]", &seed, &v), SigTextError::BadSeparator);
    EXPECT_EQ(parse("1:[1", &seed, &v), SigTextError::BadSeparator);
    EXPECT_EQ(parse("1:[1] x", &seed, &v), SigTextError::Trailing);
    EXPECT_EQ(parse("1:[1,2,3]", &seed, &v, 2), SigTextError::TooMany);
    // an embedded NUL is not the end of the text
    uint32_t one[1];
    int n = 0;
    EXPECT_EQ(parse_signature_text(std::string_view("1:[1]\0", 6), &seed, one, 1, &n),
              SigTextError::Trailing);
}

TEST(SigFormat, BinaryRoundTripAndTruncation) {
    const uint32_t values[3] = {1, 0xdeadbeef, 7};
    std::vector<uint8_t> buf(signature_binary_size(3));
    encode_signature_binary(1, 0, 3, 0x0102030405060708ull, values, buf.data());
    SigBinaryHeader h;
    ASSERT_TRUE(decode_signature_header(buf.data(), buf.size(), &h));
    EXPECT_EQ(h.version, 1);
    EXPECT_EQ(h.flags, 0);
    EXPECT_EQ(h.num_perm, 3);
    EXPECT_EQ(h.seed, 0x0102030405060708ull);
    uint32_t out[3];
    ASSERT_TRUE(decode_signature_values(buf.data(), buf.size(), 3, out));
    EXPECT_EQ(std::memcmp(out, values, sizeof(values)), 0);
    EXPECT_FALSE(decode_signature_values(buf.data(), buf.size() - 1, 3, out));
    EXPECT_FALSE(decode_signature_header(buf.data(), kSigBinaryHeader - 1, &h));
}

// The optional family prefix of the text form (the native family has none).
TEST(SigFormat, FamilyPrefix) {
    minhash::HashFamily f;
    size_t rest = 99;
    EXPECT_TRUE(minhash::parse_family_prefix("1:[2]", &f, &rest));
    EXPECT_EQ(f, minhash::HashFamily::Native);
    EXPECT_EQ(rest, 0u);
    EXPECT_TRUE(minhash::parse_family_prefix(" datasketch : 7:[1]", &f, &rest));
    EXPECT_EQ(f, minhash::HashFamily::Datasketch);
    EXPECT_EQ(std::string_view(" datasketch : 7:[1]").substr(rest), " 7:[1]");
    EXPECT_TRUE(minhash::parse_family_prefix("native:7:[1]", &f, &rest));
    EXPECT_EQ(f, minhash::HashFamily::Native);
    EXPECT_EQ(rest, 7u);
    EXPECT_FALSE(minhash::parse_family_prefix("murmur:7:[1]", &f, &rest));
    // a name without ':' is not a prefix: the seed parser reports it
    EXPECT_TRUE(minhash::parse_family_prefix("datasketch 7:[1]", &f, &rest));
    EXPECT_EQ(rest, 0u);
    EXPECT_TRUE(minhash::parse_family_prefix("", &f, &rest));
    EXPECT_EQ(rest, 0u);
}

namespace {

std::string format(HashFamily family, uint64_t seed, const std::vector<uint32_t> &v,
                   ValueWidth width = ValueWidth::Bits32) {
    std::string out(signature_text_capacity(static_cast<int>(v.size())), '\0');
    out.resize(
        format_signature_text(family, width, seed, v.data(), static_cast<int>(v.size()), &out[0]));
    return out;
}

}  // namespace

// The text form the type's output (and the Python package) writes: 1.0's for
// the native family, a "family:" prefix for the others, the seed signed.
TEST(SigFormat, TextFormat) {
    EXPECT_EQ(format(HashFamily::Native, 1, {12, 34, 56}), "1:[12,34,56]");
    EXPECT_EQ(format(HashFamily::Datasketch, 42, {0, 4294967295u}), "datasketch:42:[0,4294967295]");
    EXPECT_EQ(format(HashFamily::Native, static_cast<uint64_t>(-7), {1}), "-7:[1]");
    EXPECT_EQ(format(HashFamily::Native, uint64_t{1} << 63, {0}), "-9223372036854775808:[0]");
    // a compact signature's width tag, after the family
    EXPECT_EQ(format(HashFamily::Native, 1, {65535, 7}, ValueWidth::Bits16), "bits16:1:[65535,7]");
    EXPECT_EQ(format(HashFamily::Oph, 3, {255}, ValueWidth::Bits8), "oph:bits8:3:[255]");
}

// The longest text fits the capacity, and what is written parses back.
TEST(SigFormat, TextFormatCapacityAndRoundTrip) {
    for (int f = 0; f < kNumHashFamilies; f++)
        EXPECT_LT(strlen(hash_family_name(static_cast<HashFamily>(f))), 16u);
    std::vector<uint32_t> v(kMaxNumPerm, 4294967295u);
    for (int i = 0; i < kMaxNumPerm; i += 3)
        v[i] = static_cast<uint32_t>(i) * 2654435761u;
    for (int f = 0; f < kNumHashFamilies; f++) {
        const HashFamily family = static_cast<HashFamily>(f);
        const std::string text = format(family, uint64_t{1} << 63, v);
        EXPECT_LE(text.size(), signature_text_capacity(kMaxNumPerm));
        HashFamily parsed_family;
        size_t rest;
        ASSERT_TRUE(parse_family_prefix(text, &parsed_family, &rest));
        EXPECT_EQ(parsed_family, family);
        int64_t seed;
        std::vector<uint32_t> back;
        ASSERT_EQ(parse(text.c_str() + rest, &seed, &back), SigTextError::Ok);
        EXPECT_EQ(seed, INT64_MIN);
        EXPECT_EQ(back, v);
    }
}

// Compact signatures: the width tag of the text form, and values of 2 or 1
// bytes in the binary form.
TEST(SigFormat, WidthTag) {
    minhash::ValueWidth w;
    size_t rest = 99;
    EXPECT_TRUE(minhash::parse_width_prefix("1:[2]", &w, &rest));
    EXPECT_EQ(w, minhash::ValueWidth::Bits32);
    EXPECT_EQ(rest, 0u);
    EXPECT_TRUE(minhash::parse_width_prefix(" bits16 : 7:[1]", &w, &rest));
    EXPECT_EQ(w, minhash::ValueWidth::Bits16);
    EXPECT_EQ(std::string_view(" bits16 : 7:[1]").substr(rest), " 7:[1]");
    EXPECT_TRUE(minhash::parse_width_prefix("bits8:7:[1]", &w, &rest));
    EXPECT_EQ(w, minhash::ValueWidth::Bits8);
    EXPECT_TRUE(minhash::parse_width_prefix("bits32:7:[1]", &w, &rest));
    EXPECT_EQ(w, minhash::ValueWidth::Bits32);
    EXPECT_EQ(rest, 7u);
    EXPECT_FALSE(minhash::parse_width_prefix("bits12:7:[1]", &w, &rest));
    EXPECT_TRUE(minhash::parse_width_prefix("bits:7:[1]", &w, &rest));  // not a tag
    EXPECT_EQ(rest, 0u);
    // a width tag is not a family name
    minhash::HashFamily f;
    EXPECT_TRUE(minhash::parse_family_prefix("bits16:7:[1]", &f, &rest));
    EXPECT_EQ(rest, 0u);
    EXPECT_TRUE(minhash::parse_family_prefix("oph:bits8:7:[1]", &f, &rest));
    EXPECT_EQ(f, minhash::HashFamily::Oph);
    EXPECT_EQ(rest, 4u);
}

TEST(SigFormat, CompactBinaryRoundTrip) {
    const uint32_t values[3] = {1, 0xbeef, 7};
    for (minhash::ValueWidth w : {minhash::ValueWidth::Bits16, minhash::ValueWidth::Bits8}) {
        std::vector<uint8_t> buf(signature_binary_size(3, w));
        EXPECT_EQ(buf.size(), kSigBinaryHeader + 3 * minhash::value_bytes(w));
        encode_signature_binary(1, 0x10, 3, 5, values, buf.data(), w);
        uint32_t out[3];
        ASSERT_TRUE(decode_signature_values(buf.data(), buf.size(), 3, out, w));
        const uint32_t mask = (1u << minhash::width_bits(w)) - 1;
        for (int i = 0; i < 3; ++i)
            EXPECT_EQ(out[i], values[i] & mask);
        EXPECT_FALSE(decode_signature_values(buf.data(), buf.size() - 1, 3, out, w));
    }
    // big-endian: 0xbeef is sent as be ef
    std::vector<uint8_t> buf(signature_binary_size(3, minhash::ValueWidth::Bits16));
    encode_signature_binary(1, 0x10, 3, 5, values, buf.data(), minhash::ValueWidth::Bits16);
    EXPECT_EQ(buf[kSigBinaryHeader + 2], 0xbe);
    EXPECT_EQ(buf[kSigBinaryHeader + 3], 0xef);
}
