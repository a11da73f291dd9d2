// Sorting the lsh index's band entries {key, value (row id)} by key, then
// row id: a leaf rewritten whole (VACUUM, a split) or copied by the all-pairs
// walk, and the pending list's entries before they go into the tree. One
// LSD radix sort over the entry's eight bytes, the row id's first, which
// skips a byte that every entry shares (a leaf's keys share their top bits),
// and the row id's four bytes when the row ids already ascend (the pending
// list's entries come in row order). Entries already in order (a leaf as a
// build wrote it) are left after one look. qsort and std::sort were slower
// on every input the index sorts: bench/core_bench.cpp, BM_SortEntries.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace minhash {

// Fewer entries than this are sorted by std::sort, without scratch space.
constexpr size_t kEntrySortRadixMin = 64;
// Entries whose leading run in order is at least 1/kEntrySortPrefixShare of
// them are sorted by sorting the rest and merging it into the run
// (bench/core_bench.cpp, BM_SortEntries: a leaf with a tenth of it appended,
// 6 us against 16 for the radix sort).
constexpr size_t kEntrySortPrefixShare = 4;

template <class Entry>
inline bool entry_before(const Entry& a, const Entry& b) {
    return a.key != b.key ? a.key < b.key : a.value < b.value;
}

namespace detail {
// Byte d of an entry as the radix sort reads it: 0-3 the value's, 4-7 the key's.
template <class Entry>
inline unsigned entry_byte(const Entry& e, int d) {
    return d < 4 ? (e.value >> (8 * d)) & 0xFF : (e.key >> (8 * (d - 4))) & 0xFF;
}
}  // namespace detail

// Sorts e[0, n) by (key, value). scratch: room for n entries, needed only
// when n >= kEntrySortRadixMin (else it may be null). Allocates nothing.
template <class Entry>
void sort_entries(Entry* e, size_t n, Entry* scratch) noexcept {
    static_assert(std::is_trivially_copyable<Entry>::value, "entries are copied as bytes");
    size_t in_order = 1;
    while (in_order < n && !entry_before(e[in_order], e[in_order - 1]))
        in_order++;
    if (in_order >= n)
        return;
    if (n < kEntrySortRadixMin) {
        std::sort(e, e + n, entry_before<Entry>);
        return;
    }
    // A leaf split by a merge: its entries in order as last written whole,
    // then the fewer appended since. Sort the appended ones, then copy the
    // run in order in blocks between the places a binary search finds for
    // them, where the radix sort's passes read every entry up to nine times.
    if (in_order >= n / kEntrySortPrefixShare) {
        Entry* tail = scratch + in_order;
        std::memcpy(static_cast<void*>(tail), e + in_order, (n - in_order) * sizeof(Entry));
        sort_entries(tail, n - in_order, e + in_order);
        // merge backwards into e: the run's entries only move right
        size_t run_end = in_order;
        for (size_t t = n - in_order; t-- > 0;) {
            const size_t at = static_cast<size_t>(
                std::upper_bound(e, e + run_end, tail[t], entry_before<Entry>) - e);
            std::memmove(static_cast<void*>(e + at + t + 1), e + at, (run_end - at) * sizeof(Entry));
            e[at + t] = tail[t];
            run_end = at;
        }
        return;
    }
    size_t count[8][256] = {};
    bool values_ascend = true;
    for (size_t i = 0; i < n; i++) {
        for (int d = 0; d < 8; d++)
            count[d][detail::entry_byte(e[i], d)]++;
        if (i > 0 && e[i].value < e[i - 1].value)
            values_ascend = false;
    }
    // Stable passes from the least significant byte. With the values already
    // ascending, equal keys keep them in order: the key's bytes suffice.
    Entry* src = e;
    Entry* dst = scratch;
    for (int d = values_ascend ? 4 : 0; d < 8; d++) {
        const size_t* c = count[d];
        if (c[detail::entry_byte(src[0], d)] == n)
            continue;  // every entry has this byte
        size_t at[256];
        size_t sum = 0;
        for (int b = 0; b < 256; b++) {
            at[b] = sum;
            sum += c[b];
        }
        for (size_t i = 0; i < n; i++)
            dst[at[detail::entry_byte(src[i], d)]++] = src[i];
        std::swap(src, dst);
    }
    if (src != e)
        std::memcpy(static_cast<void*>(e), src, n * sizeof(Entry));
}

// Sorts a[0, n) by key(a[i]), a 64-bit unsigned integer, stably (equal keys
// keep their order): an LSD radix sort over the key's bytes that skips those
// every element shares (keys below 2^20 take three passes of eight bits at
// most). scratch: room for n elements. Allocates nothing. minhash_match's
// candidates by indexed row.
template <class T, class KeyFn>
void stable_sort_by_u64(T* a, size_t n, T* scratch, KeyFn key) noexcept {
    static_assert(std::is_trivially_copyable<T>::value, "elements are copied as bytes");
    if (n < 2)
        return;
    uint64_t all_or = 0, all_and = ~uint64_t{0};
    for (size_t i = 0; i < n; i++) {
        const uint64_t k = key(a[i]);
        all_or |= k;
        all_and &= k;
    }
    T* src = a;
    T* dst = scratch;
    for (int d = 0; d < 8; d++) {
        const int shift = 8 * d;
        if (((all_or ^ all_and) >> shift & 0xFF) == 0)
            continue;  // every element has this byte
        size_t at[256] = {};
        for (size_t i = 0; i < n; i++)
            at[(key(src[i]) >> shift) & 0xFF]++;
        size_t sum = 0;
        for (int b = 0; b < 256; b++) {
            const size_t c = at[b];
            at[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[at[(key(src[i]) >> shift) & 0xFF]++] = src[i];
        std::swap(src, dst);
    }
    if (src != a)
        std::memcpy(static_cast<void*>(a), src, n * sizeof(T));
}

}  // namespace minhash
