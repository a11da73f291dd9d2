// Shingling: turn a document into the set of its k-shingles.
//
// Word shingles: tokens are maximal runs of Unicode letters and digits,
// lowercased; a shingle is k consecutive tokens joined by one space.
// Character shingles: the text lowercased with every whitespace run collapsed
// to one space (trimmed at both ends), or with whitespace dropped entirely
// (CharNoSpace); a shingle is k consecutive code points.
// A text with fewer than k units yields one shingle, its whole normalized
// form, so short texts still compare; an empty normalized text yields none.
//
// Every shingle is a contiguous substring of the normalized text, so it can be
// hashed without building a string.
#pragma once

#include <csignal>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace minhash {

enum class ShingleUnit : uint8_t { Word = 0, Char = 1, CharNoSpace = 2 };

constexpr int kMaxShingleSize = 256;

// Polled by long loops; the caller passes PostgreSQL's InterruptPending (or
// nullptr). The loop stops early and reports Status::Interrupted.
using InterruptFlag = const volatile std::sig_atomic_t *;

enum class Status : uint8_t { Ok = 0, Interrupted = 1 };

// 5 for words (seed 002), 9 for characters (seed 000).
int default_shingle_size(ShingleUnit unit) noexcept;

// "word", "char", "char_nospace". Returns false for anything else.
bool parse_shingle_unit(std::string_view name, ShingleUnit *unit) noexcept;
const char *shingle_unit_name(ShingleUnit unit) noexcept;

struct ShingleSpec {
    ShingleUnit unit = ShingleUnit::Word;
    int k = 5;  // 1..kMaxShingleSize, validated by the caller
};

// The k the functions below use: spec.k, or the unit's default if k < 1, at
// most kMaxShingleSize (a safety net; the caller reports bad k to the user).
int clamp_shingle_size(const ShingleSpec &spec) noexcept;

// A document in normalized form and where its shingles start and end.
struct NormalizedText {
    std::string text;              // lowercased, units separated as described above
    std::vector<uint32_t> starts;  // byte offset of each unit (word or code point)
    std::vector<uint32_t> ends;    // byte offset one past each unit
};

// Input should be UTF-8 (PostgreSQL guarantees valid text in a UTF-8
// database; the glue converts other encodings first). Malformed bytes are
// tolerated: each acts as a separator (whitespace in character mode).
// Control characters are separators too.
NormalizedText normalize(std::string_view doc, ShingleUnit unit);

// Calls fn(std::string_view shingle) for every shingle, in document order,
// repeats included.
template <class Fn>
void for_each_shingle(const NormalizedText &norm, int k, Fn &&fn) {
    const size_t n = norm.starts.size();
    if (n == 0)
        return;
    if (n < static_cast<size_t>(k)) {
        fn(std::string_view(norm.text.data() + norm.starts[0], norm.ends[n - 1] - norm.starts[0]));
        return;
    }
    for (size_t i = 0; i + k <= n; ++i)
        fn(std::string_view(norm.text.data() + norm.starts[i], norm.ends[i + k - 1] - norm.starts[i]));
}

// Distinct shingles in order of first appearance (what minhash_shingles shows).
std::vector<std::string> distinct_shingles(std::string_view doc, const ShingleSpec &spec);

}  // namespace minhash
