#include "core/sig_format.h"

#include <gtest/gtest.h>

#include <cstring>
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
