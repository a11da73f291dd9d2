#include "core/sig_format.h"

#include <charconv>
#include <cstring>

namespace minhash {

namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct Cursor {
    std::string_view s;
    size_t i = 0;
    bool at_end() const { return i >= s.size(); }
    char peek() const { return at_end() ? '\0' : s[i]; }
    void skip_space() {
        while (!at_end() && is_space(s[i]))
            i++;
    }
};

// Decimal digits into an unsigned value <= limit; false if none or too big.
bool parse_unsigned(Cursor *c, uint64_t limit, uint64_t *out) {
    uint64_t v = 0;
    if (!is_digit(c->peek()))
        return false;
    for (; is_digit(c->peek()); c->i++) {
        const unsigned d = static_cast<unsigned>(c->peek() - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

bool parse_seed(Cursor *c, int64_t *out) {
    bool neg = false;
    uint64_t mag;
    if (c->peek() == '-' || c->peek() == '+') {
        neg = c->peek() == '-';
        c->i++;
    }
    if (!parse_unsigned(c, neg ? uint64_t{INT64_MAX} + 1 : uint64_t{INT64_MAX}, &mag))
        return false;
    *out = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
    return true;
}

uint32_t get32(const uint8_t *p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

void put32(uint8_t *p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
}

}  // namespace

SigTextError parse_signature_text(std::string_view text, int64_t *seed, uint32_t *values,
                                  int max_values, int *n) {
    Cursor c{text};
    *n = 0;
    c.skip_space();
    if (!parse_seed(&c, seed))
        return SigTextError::BadSeed;
    c.skip_space();
    if (c.peek() != ':' || c.at_end())
        return SigTextError::NoColon;
    c.i++;
    c.skip_space();
    if (c.peek() != '[' || c.at_end())
        return SigTextError::NoBracket;
    c.i++;
    for (;;) {
        uint64_t v;
        c.skip_space();
        if (!parse_unsigned(&c, UINT32_MAX, &v))
            return *n == 0 && c.peek() == ']' ? SigTextError::Empty : SigTextError::BadValue;
        if (*n == max_values)
            return SigTextError::TooMany;
        values[(*n)++] = static_cast<uint32_t>(v);
        c.skip_space();
        if (c.peek() == ',' && !c.at_end()) {
            c.i++;
            continue;
        }
        if (c.peek() == ']' && !c.at_end()) {
            c.i++;
            break;
        }
        return SigTextError::BadSeparator;
    }
    c.skip_space();
    return c.at_end() ? SigTextError::Ok : SigTextError::Trailing;
}

bool decode_signature_header(const uint8_t *data, size_t len, SigBinaryHeader *h) {
    if (len < kSigBinaryHeader)
        return false;
    h->version = data[0];
    h->flags = data[1];
    h->num_perm = (data[2] << 8) | data[3];
    h->seed = (uint64_t{get32(data + 4)} << 32) | get32(data + 8);
    return true;
}

bool decode_signature_values(const uint8_t *data, size_t len, int num_perm, uint32_t *values,
                             ValueWidth w) {
    if (num_perm < 0 || len < signature_binary_size(num_perm, w))
        return false;
    const size_t bytes = value_bytes(w);
    for (int i = 0; i < num_perm; i++) {
        const uint8_t *p = data + kSigBinaryHeader + bytes * static_cast<size_t>(i);
        uint32_t v = 0;
        for (size_t b = 0; b < bytes; b++)
            v = (v << 8) | p[b];
        values[i] = v;
    }
    return true;
}

void encode_signature_binary(int version, int flags, int num_perm, uint64_t seed,
                             const uint32_t *values, uint8_t *out, ValueWidth w) {
    out[0] = static_cast<uint8_t>(version);
    out[1] = static_cast<uint8_t>(flags);
    out[2] = static_cast<uint8_t>(num_perm >> 8);
    out[3] = static_cast<uint8_t>(num_perm);
    put32(out + 4, static_cast<uint32_t>(seed >> 32));
    put32(out + 8, static_cast<uint32_t>(seed));
    const size_t bytes = value_bytes(w);
    for (int i = 0; i < num_perm; i++) {
        uint8_t *p = out + kSigBinaryHeader + bytes * static_cast<size_t>(i);
        for (size_t b = 0; b < bytes; b++)
            p[b] = static_cast<uint8_t>(values[i] >> (8 * (bytes - 1 - b)));
    }
}

bool parse_width_prefix(std::string_view text, ValueWidth *width, size_t *rest) {
    Cursor c{text};
    *width = ValueWidth::Bits32;
    *rest = 0;
    c.skip_space();
    if (text.substr(c.i, 4) != "bits")
        return true;  // not a tag: the seed (or a malformed text) comes first
    c.i += 4;
    uint64_t bits = 0;
    if (!parse_unsigned(&c, 1000, &bits))
        return true;
    c.skip_space();
    if (c.peek() != ':' || c.at_end())
        return true;
    if (!width_of_bits(static_cast<int>(bits), width))
        return false;
    *rest = c.i + 1;
    return true;
}

size_t format_signature_text(HashFamily family, ValueWidth width, uint64_t seed,
                             const uint32_t *values, int num_perm, char *out) noexcept {
    char *p = out;
    // Every pointer below stays within signature_text_capacity(num_perm).
    char *const end = out + signature_text_capacity(num_perm);
    if (family != HashFamily::Native) {
        const char *name = hash_family_name(family);
        const size_t len = strlen(name);
        memcpy(p, name, len);
        p += len;
        *p++ = ':';
    }
    if (width != ValueWidth::Bits32) {
        memcpy(p, "bits", 4);
        p = std::to_chars(p + 4, end, width_bits(width)).ptr;
        *p++ = ':';
    }
    p = std::to_chars(p, end, static_cast<int64_t>(seed)).ptr;
    *p++ = ':';
    *p++ = '[';
    for (int i = 0; i < num_perm; i++) {
        if (i > 0)
            *p++ = ',';
        p = std::to_chars(p, end, values[i]).ptr;
    }
    *p++ = ']';
    return static_cast<size_t>(p - out);
}

bool parse_family_prefix(std::string_view text, HashFamily *family, size_t *rest) {
    Cursor c{text};
    *family = HashFamily::Native;
    *rest = 0;
    c.skip_space();
    const size_t start = c.i;
    auto name_char = [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || is_digit(ch) || ch == '_';
    };
    while (!c.at_end() && name_char(c.peek()))
        c.i++;
    if (c.i == start || is_digit(text[start]) || text[start] == '_')
        return true;  // no name: the seed comes first
    const std::string_view name = text.substr(start, c.i - start);
    c.skip_space();
    if (c.peek() != ':')
        return true;  // not a prefix
    if (name.size() > 4 && name.substr(0, 4) == "bits" &&
        name.find_first_not_of("0123456789", 4) == std::string_view::npos)
        return true;  // a width tag (parse_width_prefix), not a family
    if (!parse_hash_family(name, family))
        return false;
    *rest = c.i + 1;
    return true;
}

}  // namespace minhash
