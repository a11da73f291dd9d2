// Exact Jaccard similarity over distinct elements.
#include "core/jaccard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/hash.h"
#include "core/jaccard_impl.h"

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

// ---- exact Jaccard of hashed element lists (jaccard(anyarray, anyarray)) ----

namespace {

using minhash::HashedElement;
using minhash::Status;

// Element lists over a pool of strings; the hash is a function of the
// bytes, reduced modulo `hash_values` to force collisions between different
// strings when small.
struct Lists {
    std::vector<std::string> pool;
    std::vector<HashedElement> a, b;
};

HashedElement element(const std::string &s, uint64_t hash_values) {
    return HashedElement{minhash::hash_bytes(s) % hash_values, s.data(), s.size()};
}

Lists random_lists(std::mt19937_64 &rng, size_t na, size_t nb, size_t universe,
                   uint64_t hash_values) {
    Lists l;
    for (size_t i = 0; i < universe; ++i)
        l.pool.push_back(i % 5 == 0 ? std::string() + char('a' + i % 26) + std::to_string(i)
                                    : "element-" + std::to_string(i));
    l.pool.push_back("");  // the empty string is an element too
    for (size_t i = 0; i < na; ++i)
        l.a.push_back(element(l.pool[rng() % l.pool.size()], hash_values));
    for (size_t i = 0; i < nb; ++i)
        l.b.push_back(element(l.pool[rng() % l.pool.size()], hash_values));
    return l;
}

double reference(const std::vector<HashedElement> &a, const std::vector<HashedElement> &b) {
    std::set<std::string> sa, sb, both;
    for (const auto &e : a)
        sa.emplace(e.data, e.len);
    for (const auto &e : b)
        sb.emplace(e.data, e.len);
    if (sa.empty() && sb.empty())
        return 1.0;
    size_t common = 0;
    for (const auto &s : sa)
        common += sb.count(s);
    return double(common) / double(sa.size() + sb.size() - common);
}

// The multiset of (pointer, length) pairs: what must survive an interruption.
std::multiset<std::pair<const char *, size_t>> contents(const std::vector<HashedElement> &v) {
    std::multiset<std::pair<const char *, size_t>> m;
    for (const auto &e : v)
        m.emplace(e.data, e.len);
    return m;
}

double exact(std::vector<HashedElement> a, std::vector<HashedElement> b) {
    std::vector<HashedElement> scratch(std::max(a.size(), b.size()));
    double r = -1;
    EXPECT_EQ(minhash::jaccard_exact(a.data(), a.size(), b.data(), b.size(), scratch.data(),
                                     nullptr, &r),
              Status::Ok);
    return r;
}

}  // namespace

TEST(ExactJaccardElements, MatchesSetReference) {
    std::mt19937_64 rng(5);
    for (uint64_t hash_values : {uint64_t(1), uint64_t(3), uint64_t(64), ~uint64_t(0)}) {
        for (size_t n : {0, 1, 2, 17, 300, 5000}) {
            const Lists l = random_lists(rng, n, n + n / 3, n / 2 + 1, hash_values);
            EXPECT_DOUBLE_EQ(exact(l.a, l.b), reference(l.a, l.b))
                << "n=" << n << " hash values=" << hash_values;
        }
    }
}

TEST(ExactJaccardElements, HashCollisionsNeverMakeElementsEqual) {
    // Every element has the same hash: only the bytes decide.
    const std::string s1 = "alpha", s2 = "beta", s3 = "alphA", s4 = std::string("al\0pha", 6);
    auto e = [](const std::string &s) { return HashedElement{42, s.data(), s.size()}; };
    EXPECT_DOUBLE_EQ(exact({e(s1), e(s2), e(s1)}, {e(s2), e(s3)}), 1.0 / 3);
    EXPECT_DOUBLE_EQ(exact({e(s1), e(s4)}, {e(s4), e(s1), e(s1)}), 1.0);
    EXPECT_DOUBLE_EQ(exact({e(s1)}, {e(s3)}), 0.0);
    EXPECT_DOUBLE_EQ(exact({}, {}), 1.0);
    EXPECT_DOUBLE_EQ(exact({e(s1)}, {}), 0.0);
}

TEST(ExactJaccardElements, LargeListsAcrossMergePasses) {
    // More than one run of the production tuning, many repeats.
    std::mt19937_64 rng(6);
    const Lists l = random_lists(rng, 70000, 50000, 40000, ~uint64_t(0));
    EXPECT_DOUBLE_EQ(exact(l.a, l.b), reference(l.a, l.b));
}

// Interrupt the computation at each point where it polls, in turn: every
// time, both lists must still hold their elements, and calling again must
// give the exact answer.
TEST(ExactJaccardElements, InterruptibleAtEveryPollPoint) {
    std::mt19937_64 rng(7);
    const Lists l = random_lists(rng, 240, 170, 120, 16);  // collisions included
    const double expected = reference(l.a, l.b);
    const auto ca = contents(l.a), cb = contents(l.b);
    const minhash::detail::ExactJaccardTuning tuning{4, 2};  // many runs, merges and polls

    struct Countdown {
        long left;
    };
    const minhash::detail::PollFn stop_at_zero = [](void *c) {
        return --static_cast<Countdown *>(c)->left == 0;
    };
    long points = 0;
    for (long n = 1;; ++n) {
        std::vector<HashedElement> a = l.a, b = l.b;
        std::vector<HashedElement> scratch(std::max(a.size(), b.size()));
        Countdown countdown{n};
        double r = -1;
        const Status first = minhash::detail::jaccard_exact_polled(
            a.data(), a.size(), b.data(), b.size(), scratch.data(), stop_at_zero, &countdown,
            tuning, &r);
        if (first == Status::Ok) {
            EXPECT_DOUBLE_EQ(r, expected);
            break;
        }
        ASSERT_EQ(first, Status::Interrupted);
        ++points;
        ASSERT_EQ(contents(a), ca) << "poll " << n;
        ASSERT_EQ(contents(b), cb) << "poll " << n;
        Countdown never{-1};
        ASSERT_EQ(minhash::detail::jaccard_exact_polled(a.data(), a.size(), b.data(), b.size(),
                                                        scratch.data(), stop_at_zero, &never,
                                                        tuning, &r),
                  Status::Ok);
        ASSERT_DOUBLE_EQ(r, expected) << "poll " << n;
    }
    // Sorting and merging 410 elements with these settings polls hundreds of times.
    EXPECT_GT(points, 200);
}

TEST(ExactJaccardElements, InterruptFlagStopsAndTheCallCanBeRepeated) {
    std::mt19937_64 rng(8);
    Lists l = random_lists(rng, 100000, 100000, 150000, ~uint64_t(0));
    const auto ca = contents(l.a);
    std::vector<HashedElement> scratch(100000);
    volatile std::sig_atomic_t pending = 1;
    double r = -1;
    EXPECT_EQ(minhash::jaccard_exact(l.a.data(), l.a.size(), l.b.data(), l.b.size(),
                                     scratch.data(), &pending, &r),
              Status::Interrupted);
    EXPECT_EQ(contents(l.a), ca);
    pending = 0;
    EXPECT_EQ(minhash::jaccard_exact(l.a.data(), l.a.size(), l.b.data(), l.b.size(),
                                     scratch.data(), &pending, &r),
              Status::Ok);
    EXPECT_DOUBLE_EQ(r, reference(l.a, l.b));
}
