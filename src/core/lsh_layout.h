// The bounds and encoding of the lsh index's page contents, without
// PostgreSQL: how many entries a pd_lower describes, whether it is sound,
// and the wide (8-byte) and narrow (7-byte) leaf entries. src/pg/lsh/lsh_page.h
// reads pages through these; tests/fuzz/fuzz_formats.cpp fuzzes them.
#pragma once

#include <cstdint>
#include <cstring>

namespace minhash::lsh_layout {

constexpr int kWideEntrySize = 8;     // uint32 key, uint32 row id (native order)
constexpr int kNarrowEntrySize = 7;   // 3 bytes of key - low (little-endian), uint32 row id
constexpr uint32_t kNarrowRange = 0xFFFFFF;

// Entries stored from content_start up to pd_lower, clamped to [0, capacity]
// in signed arithmetic: a damaged pd_lower never yields a count that reaches
// outside the content area.
inline int entry_count(int pd_lower, int content_start, int content_size, int entry_size) {
    const int bytes = pd_lower - content_start;
    if (bytes <= 0)
        return 0;
    const int n = bytes / entry_size;
    const int cap = content_size / entry_size;
    return n < cap ? n : cap;
}

// Does pd_lower end a whole number of entries within the capacity?
inline bool entries_end_ok(int pd_lower, int content_start, int content_size, int entry_size) {
    const int bytes = pd_lower - content_start;
    return bytes >= 0 && bytes % entry_size == 0 && bytes / entry_size <= content_size / entry_size;
}

// Can a leaf with this key range use narrow entries?
inline bool narrow_range_ok(bool has_high, uint32_t low, uint32_t high) {
    return (has_high ? high : UINT32_MAX) - low <= kNarrowRange;
}

// Entry i of the entry array at content.
inline uint32_t entry_key(const uint8_t *content, int i, bool narrow, uint32_t low) {
    uint32_t key;
    if (!narrow) {
        std::memcpy(&key, content + static_cast<size_t>(i) * kWideEntrySize, sizeof(key));
        return key;
    }
    const uint8_t *p = content + static_cast<size_t>(i) * kNarrowEntrySize;
    return low + (p[0] | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16));
}

inline uint32_t entry_rowid(const uint8_t *content, int i, bool narrow) {
    uint32_t rowid;
    if (!narrow)
        std::memcpy(&rowid, content + static_cast<size_t>(i) * kWideEntrySize + 4, sizeof(rowid));
    else
        std::memcpy(&rowid, content + static_cast<size_t>(i) * kNarrowEntrySize + 3, sizeof(rowid));
    return rowid;
}

// Store entry i; a narrow entry needs low <= key <= low + kNarrowRange.
inline void put_entry(uint8_t *content, int i, bool narrow, uint32_t low, uint32_t key,
                      uint32_t rowid) {
    if (!narrow) {
        uint8_t *p = content + static_cast<size_t>(i) * kWideEntrySize;
        std::memcpy(p, &key, sizeof(key));
        std::memcpy(p + 4, &rowid, sizeof(rowid));
        return;
    }
    uint8_t *p = content + static_cast<size_t>(i) * kNarrowEntrySize;
    const uint32_t off = key - low;
    p[0] = static_cast<uint8_t>(off);
    p[1] = static_cast<uint8_t>(off >> 8);
    p[2] = static_cast<uint8_t>(off >> 16);
    std::memcpy(p + 3, &rowid, sizeof(rowid));
}

// Entries e[0, n) stored as entries 0..n-1 at content, as put_entry stores
// each (a narrow leaf: low <= key <= low + kNarrowRange). A leaf split or
// written whole stores a thousand entries: eight-byte stores, each of which
// the next entry overwrites in part, where put_entry writes three bytes and
// a row id. Writes nothing past the n entries.
template <class Entry>
inline void put_entries(uint8_t *content, const Entry *e, int n, bool narrow, uint32_t low) {
    if (!narrow) {
        for (int i = 0; i < n; i++)
            put_entry(content, i, false, low, e[i].key, e[i].value);
        return;
    }
    for (int i = 0; i + 1 < n; i++) {
        const uint64_t v = uint64_t{(e[i].key - low) & kNarrowRange} | uint64_t{e[i].value} << 24;
        std::memcpy(content + static_cast<size_t>(i) * kNarrowEntrySize, &v, sizeof(v));
    }
    if (n > 0)
        put_entry(content, n - 1, true, low, e[n - 1].key, e[n - 1].value);
}

// Entries 0..n-1 at content into out[0, n), as entry_key and entry_rowid read
// each; reads up to one byte past a narrow entry array (a page's content area
// is followed by its special space, so the read stays in the page).
template <class Entry>
inline void get_entries(const uint8_t *content, int n, bool narrow, uint32_t low, Entry *out) {
    if (!narrow) {
        for (int i = 0; i < n; i++) {
            out[i].key = entry_key(content, i, false, low);
            out[i].value = entry_rowid(content, i, false);
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        uint64_t v;
        std::memcpy(&v, content + static_cast<size_t>(i) * kNarrowEntrySize, sizeof(v));
        out[i].key = low + static_cast<uint32_t>(v & kNarrowRange);
        out[i].value = static_cast<uint32_t>(v >> 24);
    }
}

// Data pages: fixed slots of a 6-byte TID, a 2-byte state and num_perm values
// of value_bytes each (4; 2 or 1 for the compact slots of format 5), the
// slot rounded up to 4 bytes so that every slot's header stays aligned.
inline int slot_size(int num_perm, int value_bytes = 4) {
    return (8 + value_bytes * num_perm + 3) & ~3;
}
inline int slots_per_page(int content_size, int num_perm, int value_bytes = 4) {
    return content_size / slot_size(num_perm, value_bytes);
}
inline bool data_lower_ok(int pd_lower, int content_start, int content_size, int num_perm,
                          int value_bytes = 4) {
    return num_perm >= 1 && pd_lower == content_start +
        slots_per_page(content_size, num_perm, value_bytes) * slot_size(num_perm, value_bytes);
}

}  // namespace minhash::lsh_layout
