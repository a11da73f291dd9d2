// libFuzzer target: the decoders that read bytes from outside -- the
// minhash type's text form and binary (recv) form, and the lsh index's page
// contents (core/lsh_layout.h, the bounds logic every page read trusts).
// Checks, besides "no crash, no sanitizer report":
//  - text: a parsed signature printed in the canonical form
//    (format_signature_text) parses back to the same family, width, seed and
//    values; every error leaves n within max_values;
//  - binary: a decoded signature (values of the width its flags name)
//    encodes back to the same bytes; decoding never reads past the given
//    length (ASan sees the exact-size buffer);
//  - pages: entry_count never exceeds the capacity, whatever pd_lower says;
//    when entries_end_ok accepts pd_lower, every entry decodes from inside
//    the content area and re-encoding the decoded entries reproduces the
//    bytes (for narrow leaves only when the range check accepts the leaf).
// The first input byte picks the decoder, the rest is its input.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/lsh_layout.h"
#include "core/sig_format.h"

using namespace minhash;

namespace {

void check(bool ok) {
    if (!ok)
        std::abort();
}

constexpr int kMaxValues = 1024;

void fuzz_text(const uint8_t *data, size_t size) {
    // an exact-size copy, so ASan catches a read past the end
    std::vector<char> buf(data, data + size);
    uint32_t values[kMaxValues];
    int n = -1;
    int64_t seed = 0;
    HashFamily family;
    size_t rest = 0;
    // as minhash_in reads it: an optional family prefix, an optional width
    // tag, then the signature
    if (!parse_family_prefix(std::string_view(buf.data(), buf.size()), &family, &rest))
        return;
    check(rest <= buf.size() && (rest == 0 || buf[rest - 1] == ':'));
    ValueWidth width;
    size_t after = 0;
    if (!parse_width_prefix(std::string_view(buf.data(), buf.size()).substr(rest), &width, &after))
        return;
    check(rest + after <= buf.size() && (after == 0 || buf[rest + after - 1] == ':'));
    rest += after;
    const SigTextError e = parse_signature_text(
        std::string_view(buf.data() + rest, buf.size() - rest), &seed, values, kMaxValues, &n);
    check(n >= 0 && n <= kMaxValues);
    if (e != SigTextError::Ok)
        return;
    check(n >= 1);
    // the canonical form, as the type's output function writes it
    std::string canon(signature_text_capacity(n), '\0');
    canon.resize(
        format_signature_text(family, width, static_cast<uint64_t>(seed), values, n, &canon[0]));
    check(canon.size() <= signature_text_capacity(n));
    uint32_t again[kMaxValues];
    int m = 0;
    int64_t seed2 = 0;
    HashFamily family2;
    ValueWidth width2;
    size_t rest2 = 0;
    size_t after2 = 0;
    check(parse_family_prefix(canon, &family2, &rest2) && family2 == family);
    check(parse_width_prefix(std::string_view(canon).substr(rest2), &width2, &after2) &&
          width2 == width);
    check(parse_signature_text(std::string_view(canon).substr(rest2 + after2), &seed2, again,
                               kMaxValues, &m) == SigTextError::Ok);
    check(m == n && seed2 == seed && std::memcmp(again, values, sizeof(uint32_t) * n) == 0);
}

void fuzz_binary(const uint8_t *data, size_t size) {
    std::vector<uint8_t> buf(data, data + size);
    SigBinaryHeader h;
    if (!decode_signature_header(buf.data(), buf.size(), &h)) {
        check(size < kSigBinaryHeader);
        return;
    }
    if (h.num_perm < 1 || h.num_perm > kMaxValues)
        return;
    // the width the flags name (bits 4-5), as minhash_recv reads it
    const int code = (h.flags >> 4) & 3;
    if (code >= kNumValueWidths)
        return;
    const ValueWidth w = static_cast<ValueWidth>(code);
    std::vector<uint32_t> values(h.num_perm);
    if (!decode_signature_values(buf.data(), buf.size(), h.num_perm, values.data(), w)) {
        check(size < signature_binary_size(h.num_perm, w));
        return;
    }
    std::vector<uint8_t> out(signature_binary_size(h.num_perm, w));
    encode_signature_binary(h.version, h.flags, h.num_perm, h.seed, values.data(), out.data(), w);
    check(std::memcmp(out.data(), buf.data(), out.size()) == 0);
}

// A page's content area as the index lays it out at BLCKSZ 8192: the header
// (24 bytes) before it, the 24-byte special space after it.
constexpr int kContentStart = 24;
constexpr int kContentSize = 8192 - 24 - 24;

void fuzz_page(const uint8_t *data, size_t size) {
    if (size < 12)
        return;
    // pd_lower, narrow flag, low and high key from the first bytes; the rest is content
    int pd_lower;
    uint32_t low, high;
    std::memcpy(&pd_lower, data, 2);
    pd_lower &= 0xFFFF;
    const bool narrow = data[2] & 1;
    const bool has_high = data[2] & 2;
    std::memcpy(&low, data + 4, 4);
    std::memcpy(&high, data + 8, 4);
    const int esize = narrow ? lsh_layout::kNarrowEntrySize : lsh_layout::kWideEntrySize;
    std::vector<uint8_t> content(kContentSize, 0);
    std::memcpy(content.data(), data + 12, std::min<size_t>(size - 12, kContentSize));

    const int n = lsh_layout::entry_count(pd_lower, kContentStart, kContentSize, esize);
    check(n >= 0 && n <= kContentSize / esize);
    // the clamped count is always safe to read
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += lsh_layout::entry_key(content.data(), i, narrow, low) +
            lsh_layout::entry_rowid(content.data(), i, narrow);
    (void) sum;
    if (!lsh_layout::entries_end_ok(pd_lower, kContentStart, kContentSize, esize))
        return;
    check(pd_lower - kContentStart == n * esize);
    if (narrow && !lsh_layout::narrow_range_ok(has_high, low, high))
        return;
    std::vector<uint8_t> rebuilt(kContentSize, 0);
    for (int i = 0; i < n; i++) {
        const uint32_t key = lsh_layout::entry_key(content.data(), i, narrow, low);
        if (narrow)
            check(key - low <= lsh_layout::kNarrowRange);
        lsh_layout::put_entry(rebuilt.data(), i, narrow, low, key,
                              lsh_layout::entry_rowid(content.data(), i, narrow));
    }
    check(std::memcmp(rebuilt.data(), content.data(), static_cast<size_t>(n) * esize) == 0);
    // the bulk forms read and write what the entry-at-a-time ones do, and
    // put_entries writes nothing past the entries
    struct Entry { uint32_t key, value; };
    std::vector<Entry> entries(static_cast<size_t>(n));
    lsh_layout::get_entries(content.data(), n, narrow, low, entries.data());
    for (int i = 0; i < n; i++) {
        check(entries[i].key == lsh_layout::entry_key(content.data(), i, narrow, low));
        check(entries[i].value == lsh_layout::entry_rowid(content.data(), i, narrow));
    }
    std::vector<uint8_t> bulk(kContentSize, 0);
    lsh_layout::put_entries(bulk.data(), entries.data(), n, narrow, low);
    check(std::memcmp(bulk.data(), content.data(), static_cast<size_t>(n) * esize) == 0);
    for (size_t b = static_cast<size_t>(n) * esize; b < bulk.size(); b++)
        check(bulk[b] == 0);

    // data pages: the slot array the pd_lower check accepts fits the content area
    const int num_perm = 1 + (data[3] | ((data[2] >> 2) << 8)) % kMaxValues;
    const int value_bytes = 4 >> (data[2] >> 6) % 3;  // 32-, 16- or 8-bit slots
    if (lsh_layout::data_lower_ok(pd_lower, kContentStart, kContentSize, num_perm, value_bytes)) {
        const int slot = lsh_layout::slot_size(num_perm, value_bytes);
        check(slot % 4 == 0 && slot >= 8 + value_bytes * num_perm);
        check(lsh_layout::slots_per_page(kContentSize, num_perm, value_bytes) * slot <= kContentSize);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    switch (data[0] % 3) {
        case 0:
            fuzz_text(data + 1, size - 1);
            break;
        case 1:
            fuzz_binary(data + 1, size - 1);
            break;
        default:
            fuzz_page(data + 1, size - 1);
            break;
    }
    return 0;
}
