// The search from a guessed position: the same answer as std::lower_bound /
// upper_bound from any guess, on runs with repeated keys.
#include "core/sorted_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using namespace minhash;

namespace {

// Every key near the run's keys and at its ends, from every guess (and
// guesses outside the range, which are clamped).
void check_all(const std::vector<uint32_t>& v) {
    const int n = int(v.size());
    std::vector<uint32_t> keys = {0, UINT32_MAX};
    for (uint32_t k : v) {
        keys.push_back(k);
        if (k > 0) keys.push_back(k - 1);
        if (k < UINT32_MAX) keys.push_back(k + 1);
    }
    for (uint32_t key : keys) {
        const int lower = int(std::lower_bound(v.begin(), v.end(), key) - v.begin());
        const int upper = int(std::upper_bound(v.begin(), v.end(), key) - v.begin());
        for (int g = -2; g <= n + 1; g++) {
            ASSERT_EQ(search_from_guess(0, n, g, [&](int i) { return v[i] < key; }), lower)
                << "n " << n << " key " << key << " guess " << g;
            ASSERT_EQ(search_from_guess(0, n, g, [&](int i) { return v[i] <= key; }), upper)
                << "n " << n << " key " << key << " guess " << g;
        }
    }
}

}  // namespace

TEST(SortedSearch, EmptyAndSingle) {
    EXPECT_EQ(search_from_guess(0, 0, 0, [](int) { return true; }), 0);
    EXPECT_EQ(search_from_guess(3, 3, 7, [](int) { return true; }), 3);
    check_all({5});
    check_all({0});
    check_all({UINT32_MAX});
}

TEST(SortedSearch, AgreesWithTheStandardSearches) {
    std::mt19937 rng(20261124);
    for (int trial = 0; trial < 300; trial++) {
        const int n = 1 + int(rng() % 70);
        // few distinct values in some runs (long runs of equal keys), the full range in others
        const uint32_t range = trial % 3 == 0 ? 8 : (trial % 3 == 1 ? 1000 : UINT32_MAX);
        std::vector<uint32_t> v(n);
        for (auto& x : v) x = range == UINT32_MAX ? uint32_t(rng()) : uint32_t(rng() % range);
        std::sort(v.begin(), v.end());
        check_all(v);
    }
}

TEST(SortedSearch, RangeNotStartingAtZero) {
    // search_from_guess over [begin, end) looks at no index outside it
    const std::vector<uint32_t> v = {100, 1, 2, 2, 2, 9, 40, 0};
    for (uint32_t key = 0; key < 50; key++) {
        const int want = int(std::lower_bound(v.begin() + 1, v.end() - 1, key) - v.begin());
        for (int g = 0; g < 9; g++) {
            EXPECT_EQ(search_from_guess(1, 7, g, [&](int i) {
                          EXPECT_TRUE(i >= 1 && i < 7) << i;
                          return v[i] < key;
                      }),
                      want);
        }
    }
}

TEST(SortedSearch, UniformGuess) {
    EXPECT_EQ(uniform_guess(50, 0, 99, 100), 50);
    EXPECT_EQ(uniform_guess(0, 10, 20, 5), 0);
    EXPECT_EQ(uniform_guess(25, 10, 20, 5), 4);
    EXPECT_EQ(uniform_guess(7, 0, UINT32_MAX, 1), 0);
    EXPECT_EQ(uniform_guess(UINT32_MAX, 0, UINT32_MAX, 1000), 999);
    EXPECT_EQ(uniform_guess(1u << 31, 0, UINT32_MAX, 1000), 500);
    EXPECT_EQ(uniform_guess(5, 9, 3, 10), 0);  // an empty range
    // evenly spread keys are guessed within one place of where they are
    std::vector<uint32_t> v(1000);
    for (int i = 0; i < 1000; i++) v[i] = uint32_t(i) * 4000000u;
    for (int i = 0; i < 1000; i++) {
        const int g = uniform_guess(v[i], v.front(), v.back(), 1000);
        EXPECT_LE(std::abs(g - i), 1) << i;
    }
}
