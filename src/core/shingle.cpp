// Shingling: normalization of UTF-8 text into words or code points, and the
// distinct shingles a user sees (minhash_shingles).
#include "core/shingle.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <unicase.h>
#include <unictype.h>
#include <unistr.h>

#include "core/normalize_impl.h"

namespace minhash {
namespace detail {

static constexpr AsciiTables make_ascii_tables() {
    AsciiTables t{};
    for (int c = 0; c < 128; ++c) {
        const bool upper = c >= 'A' && c <= 'Z';
        const bool lower = c >= 'a' && c <= 'z';
        const bool digit = c >= '0' && c <= '9';
        t.lower[c] = static_cast<char>(upper ? c + ('a' - 'A') : c);
        t.word_class[c] = (upper || lower || digit) ? kToken : kSeparator;
        // Whitespace and every other control character (NUL..US, DEL) separate.
        const bool space_or_control = c <= 0x20 || c == 0x7f;
        t.char_class[c] = space_or_control ? kSeparator : kUnit;
    }
    return t;
}

const AsciiTables kAscii = make_ascii_tables();

void classify_non_ascii(const unsigned char *s, size_t n, bool word_mode, NonAscii *cp) noexcept {
    ucs4_t uc = 0;
    const int len = u8_mbtoucr(&uc, s, n);
    if (len <= 0) {
        // Malformed or truncated UTF-8: skip one byte, acting as a separator,
        // so that the next valid sequence is still found.
        cp->in_len = 1;
        cp->cls = kSeparator;
        cp->out_len = 0;
        return;
    }
    cp->in_len = static_cast<uint8_t>(len);
    uint8_t cls;
    if (word_mode) {
        if (uc_is_property_alphabetic(uc) || uc_is_general_category(uc, UC_CATEGORY_Nd))
            cls = kToken;
        else if (uc_is_general_category(uc, UC_CATEGORY_M))
            cls = kMark;
        else
            cls = kSeparator;
    } else {
        cls = (uc_is_property_white_space(uc) || uc_is_general_category(uc, UC_CATEGORY_Cc))
                  ? kSeparator
                  : kUnit;
    }
    cp->cls = cls;
    if (cls == kSeparator) {
        cp->out_len = 0;
        return;
    }
    const int out = u8_uctomb(reinterpret_cast<uint8_t *>(cp->out), uc_tolower(uc), 4);
    if (out > 0) {
        cp->out_len = static_cast<uint8_t>(out);
    } else {  // cannot happen for a valid code point; keep the original bytes
        std::memcpy(cp->out, s, static_cast<size_t>(len));
        cp->out_len = static_cast<uint8_t>(len);
    }
}

}  // namespace detail

int default_shingle_size(ShingleUnit unit) noexcept { return unit == ShingleUnit::Word ? 5 : 9; }

bool parse_shingle_unit(std::string_view name, ShingleUnit *unit) noexcept {
    if (name == "word")
        *unit = ShingleUnit::Word;
    else if (name == "char")
        *unit = ShingleUnit::Char;
    else if (name == "char_nospace")
        *unit = ShingleUnit::CharNoSpace;
    else
        return false;
    return true;
}

const char *shingle_unit_name(ShingleUnit unit) noexcept {
    switch (unit) {
        case ShingleUnit::Word:
            return "word";
        case ShingleUnit::Char:
            return "char";
        case ShingleUnit::CharNoSpace:
            return "char_nospace";
    }
    return "word";
}

int clamp_shingle_size(const ShingleSpec &spec) noexcept {
    if (spec.k < 1)
        return default_shingle_size(spec.unit);
    return spec.k > kMaxShingleSize ? kMaxShingleSize : spec.k;
}

namespace {

// Records every unit of the document.
struct RecordingSink {
    NormalizedText *norm;
    bool unit(uint32_t start, uint32_t end) {
        norm->starts.push_back(start);
        norm->ends.push_back(end);
        return true;
    }
    bool tick() { return true; }
};

}  // namespace

NormalizedText normalize(std::string_view doc, ShingleUnit unit) {
    // Offsets are 32-bit; PostgreSQL text is at most 1 GB.
    if (doc.size() > (UINT32_MAX - 64) / 2)
        throw std::length_error("document too large to shingle");
    NormalizedText norm;
    norm.text.resize(detail::normalized_capacity(doc.size()));
    RecordingSink sink{&norm};
    size_t len = 0;
    detail::normalize_into(doc, unit, norm.text.data(), &len, sink);
    norm.text.resize(len);
    return norm;
}

std::vector<std::string> distinct_shingles(std::string_view doc, const ShingleSpec &spec) {
    const int k = clamp_shingle_size(spec);
    const NormalizedText norm = normalize(doc, spec.unit);
    std::vector<std::string> out;
    std::unordered_set<std::string_view> seen;
    for_each_shingle(norm, k, [&](std::string_view s) {
        if (seen.insert(s).second)
            out.emplace_back(s);
    });
    return out;
}

}  // namespace minhash
