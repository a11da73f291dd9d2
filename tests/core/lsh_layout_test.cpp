// The leaf entries' bulk encoding (put_entries, get_entries) against the
// entry-at-a-time one (put_entry, entry_key, entry_rowid), both formats, at
// the sizes a leaf takes; put_entries must not write past the entries (a
// page's hole stays as it was).
#include "core/lsh_layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

using namespace minhash;

namespace {

struct Entry {
    uint32_t key;
    uint32_t value;
};

constexpr int kContent = 8192 - 24 - 24;

TEST(LshLayout, BulkEntriesEqualOneAtATime) {
    std::mt19937 rng(11);
    for (bool narrow : {true, false}) {
        const int esize = narrow ? lsh_layout::kNarrowEntrySize : lsh_layout::kWideEntrySize;
        for (int n : {0, 1, 2, 3, 100, kContent / esize}) {
            const uint32_t low = narrow ? uint32_t(rng()) & 0xFF000000u : 0;
            std::vector<Entry> e(static_cast<size_t>(n));
            for (Entry& x : e) {
                x.key = low + (narrow ? uint32_t(rng()) & lsh_layout::kNarrowRange : uint32_t(rng()));
                x.value = uint32_t(rng());
            }
            if (n > 1)  // the top of the range: a narrow key's three bytes all set
                e[1].key = low + (narrow ? lsh_layout::kNarrowRange : 0xFFFFFFFFu);
            std::vector<uint8_t> one(kContent, 0xAB), bulk(kContent, 0xAB);
            for (int i = 0; i < n; i++)
                lsh_layout::put_entry(one.data(), i, narrow, low, e[i].key, e[i].value);
            lsh_layout::put_entries(bulk.data(), e.data(), n, narrow, low);
            ASSERT_EQ(one, bulk) << (narrow ? "narrow" : "wide") << ", " << n << " entries";

            std::vector<Entry> back(static_cast<size_t>(n));
            lsh_layout::get_entries(bulk.data(), n, narrow, low, back.data());
            for (int i = 0; i < n; i++) {
                ASSERT_EQ(back[i].key, e[i].key) << "entry " << i << " of " << n;
                ASSERT_EQ(back[i].value, e[i].value) << "entry " << i << " of " << n;
                ASSERT_EQ(back[i].key, lsh_layout::entry_key(bulk.data(), i, narrow, low));
                ASSERT_EQ(back[i].value, lsh_layout::entry_rowid(bulk.data(), i, narrow));
            }
        }
    }
}

}  // namespace
