// The band entries' sort: the order of std::sort by (key, value), for the
// inputs the index sorts (a leaf's sorted prefix and appended tail, random
// entries, the pending list's entries in row order) and the radix sort's
// edges (sizes around its threshold, bytes every entry shares, all keys
// equal, duplicates).
#include "core/entry_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using namespace minhash;

namespace {

struct Entry {
    uint32_t key;
    uint32_t value;
    bool operator==(const Entry& o) const { return key == o.key && value == o.value; }
};

void expect_sorted_like_std(std::vector<Entry> v) {
    std::vector<Entry> want = v;
    std::sort(want.begin(), want.end(), entry_before<Entry>);
    std::vector<Entry> scratch(v.size());
    sort_entries(v.data(), v.size(), scratch.data());
    ASSERT_EQ(v.size(), want.size());
    for (size_t i = 0; i < v.size(); i++) {
        ASSERT_EQ(v[i].key, want[i].key) << "at " << i << " of " << v.size();
        ASSERT_EQ(v[i].value, want[i].value) << "at " << i << " of " << v.size();
    }
}

std::vector<Entry> random_entries(std::mt19937& rng, size_t n, uint32_t key_mask, uint32_t key_base,
                                  uint32_t value_mod) {
    std::vector<Entry> v(n);
    for (Entry& e : v) {
        e.key = key_base | (rng() & key_mask);
        e.value = value_mod ? rng() % value_mod : rng();
    }
    return v;
}

TEST(EntrySort, SizesAroundTheRadixThreshold) {
    std::mt19937 rng(1);
    for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(3), kEntrySortRadixMin - 1, kEntrySortRadixMin,
                     kEntrySortRadixMin + 1, size_t(1000), size_t(100000)})
        expect_sorted_like_std(random_entries(rng, n, 0xFFFFFFFF, 0, 0));
}

TEST(EntrySort, NullScratchBelowTheThreshold) {
    std::mt19937 rng(2);
    std::vector<Entry> v = random_entries(rng, kEntrySortRadixMin - 1, 0xFFFF, 0, 0);
    std::vector<Entry> want = v;
    std::sort(want.begin(), want.end(), entry_before<Entry>);
    sort_entries<Entry>(v.data(), v.size(), nullptr);
    EXPECT_EQ(v, want);
}

TEST(EntrySort, LeafWithSortedPrefixAndAppendedTail) {
    std::mt19937 rng(3);
    for (double prefix : {1.0, 0.99, 0.9, 0.5, 0.0}) {
        // a narrow leaf: keys within 24 bits of its low key, so the top byte is shared
        std::vector<Entry> v = random_entries(rng, 1165, 0xFFFFFF, 0x5A000000, 5000000);
        std::sort(v.begin(), v.begin() + size_t(prefix * v.size()), entry_before<Entry>);
        expect_sorted_like_std(v);
    }
}

TEST(EntrySort, AlreadySortedIsLeftAsItIs) {
    std::mt19937 rng(4);
    std::vector<Entry> v = random_entries(rng, 5000, 0xFFFFFFFF, 0, 0);
    std::sort(v.begin(), v.end(), entry_before<Entry>);
    std::vector<Entry> want = v;
    sort_entries<Entry>(v.data(), v.size(), nullptr);  // no scratch needed: nothing to move
    EXPECT_EQ(v, want);
}

TEST(EntrySort, PendingEntriesInRowOrder) {
    // 30 band keys per row, rows ascending: the key bytes alone order them
    std::mt19937 rng(5);
    std::vector<Entry> v;
    for (uint32_t row = 0; row < 4000; row++)
        for (uint32_t band = 0; band < 30; band++)
            v.push_back({(band << 27) | (uint32_t(rng()) & 0x7FFFFFF), row * 7});
    expect_sorted_like_std(v);
    // the same rows in another order: the values' bytes are needed too
    std::shuffle(v.begin(), v.end(), rng);
    expect_sorted_like_std(v);
}

TEST(EntrySort, DuplicatesAndEqualKeys) {
    std::mt19937 rng(6);
    std::vector<Entry> v = random_entries(rng, 3000, 0x7, 0x12345670, 50);  // 8 keys, 50 values
    expect_sorted_like_std(v);
    for (Entry& e : v) e.key = 42;  // one key: the values decide alone
    expect_sorted_like_std(v);
    for (Entry& e : v) e.value = 9;  // every entry the same
    expect_sorted_like_std(v);
}

TEST(EntrySort, RunInOrderThenAppendedEntries) {
    // a leading run in order of at least a quarter: the appended entries are
    // sorted and merged into it; tails below and above the radix threshold,
    // all before the run, all after it, and ties with the run's entries
    std::mt19937 rng(7);
    for (size_t run : {size_t(16), size_t(250), size_t(1000)}) {
        for (size_t tail : {size_t(1), size_t(5), kEntrySortRadixMin + 3, size_t(240)}) {
            if (run * kEntrySortPrefixShare < run + tail)
                continue;
            std::vector<Entry> v = random_entries(rng, run, 0xFFFF, 0x10000, 100);
            std::sort(v.begin(), v.end(), entry_before<Entry>);
            std::vector<Entry> below = v, above = v, tied = v;
            for (size_t t = 0; t < tail; t++) {
                below.push_back({uint32_t(rng()) % 0x10000, uint32_t(rng())});  // below every run key
                above.push_back({0x30000u + uint32_t(rng()) % 100, uint32_t(rng())});
                tied.push_back(v[uint32_t(rng()) % run]);  // a copy of an entry in the run
                v.push_back({0x10000u | (uint32_t(rng()) & 0xFFFF), uint32_t(rng()) % 100});
            }
            expect_sorted_like_std(v);
            expect_sorted_like_std(below);
            expect_sorted_like_std(above);
            expect_sorted_like_std(tied);
        }
    }
}

TEST(EntrySort, ValuesAscendingButKeysTiedAcrossRows) {
    // ascending values with repeated keys: stability on the key passes keeps the values in order
    std::vector<Entry> v;
    for (uint32_t i = 0; i < 2000; i++) v.push_back({uint32_t(1000 - i % 1000), i});
    expect_sorted_like_std(v);
}

}  // namespace

// stable_sort_by_u64 equals std::stable_sort on the key, for keys that share
// their high bytes (row ids of one index), spread over all 64 bits, all equal,
// and for tiny inputs.
TEST(EntrySort, StableSortByU64IsStdStableSort) {
    struct Rec { uint64_t key; uint32_t order; uint32_t pad; };
    std::mt19937_64 rng(5);
    for (const uint64_t range : {uint64_t{1}, uint64_t{1000}, uint64_t{1} << 20, ~uint64_t{0}}) {
        for (const size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{100}, size_t{50000}}) {
            std::vector<Rec> a(n), scratch(n);
            for (size_t i = 0; i < n; i++)
                a[i] = Rec{range == ~uint64_t{0} ? rng() : rng() % range, static_cast<uint32_t>(i), 0};
            std::vector<Rec> want = a;
            std::stable_sort(want.begin(), want.end(), [](const Rec& x, const Rec& y) { return x.key < y.key; });
            stable_sort_by_u64(a.data(), n, scratch.data(), [](const Rec& r) { return r.key; });
            for (size_t i = 0; i < n; i++) {
                ASSERT_EQ(a[i].key, want[i].key) << "range " << range << " n " << n << " at " << i;
                ASSERT_EQ(a[i].order, want[i].order) << "range " << range << " n " << n << " at " << i;
            }
        }
    }
}
