// Exact Jaccard similarity over distinct elements.
#include "core/jaccard.h"

#include <gtest/gtest.h>

using minhash::jaccard_exact;
using minhash::jaccard_exact_hashes;

TEST(JaccardExact, KnownCases) {
    EXPECT_DOUBLE_EQ(jaccard_exact({"a", "b", "c"}, {"b", "c", "d"}), 0.5);
    EXPECT_DOUBLE_EQ(jaccard_exact({"a", "b"}, {"a", "b"}), 1.0);
    EXPECT_DOUBLE_EQ(jaccard_exact({"a"}, {"b"}), 0.0);
    EXPECT_DOUBLE_EQ(jaccard_exact({"x", "y", "z", "w"}, {"x"}), 0.25);
}

TEST(JaccardExact, DuplicatesCountOnce) {
    EXPECT_DOUBLE_EQ(jaccard_exact({"a", "a", "b", "b", "b"}, {"b", "c", "c"}), 1.0 / 3);
    EXPECT_DOUBLE_EQ(jaccard_exact_hashes({1, 1, 2}, {2, 2, 1}), 1.0);
}

TEST(JaccardExact, EmptySets) {
    EXPECT_DOUBLE_EQ(jaccard_exact({}, {}), 1.0);
    EXPECT_DOUBLE_EQ(jaccard_exact({"a"}, {}), 0.0);
    EXPECT_DOUBLE_EQ(jaccard_exact_hashes({}, {}), 1.0);
    EXPECT_DOUBLE_EQ(jaccard_exact_hashes({}, {7}), 0.0);
}

TEST(JaccardExact, CaseAndBytesMatter) {
    // Elements compare as byte strings: normalization is the shingler's job.
    EXPECT_DOUBLE_EQ(jaccard_exact({"A"}, {"a"}), 0.0);
    EXPECT_DOUBLE_EQ(jaccard_exact({std::string("a\0b", 3)}, {std::string("a\0c", 3)}), 0.0);
}

TEST(JaccardExact, HashesOrderIndependent) {
    EXPECT_DOUBLE_EQ(jaccard_exact_hashes({5, 4, 3, 2, 1}, {1, 3, 5, 7, 9}), 3.0 / 7);
    EXPECT_DOUBLE_EQ(jaccard_exact_hashes({~0ULL, 0}, {0}), 0.5);
}
