// Shingling: turn a document into the set of its k-shingles.
//
// Word shingles: tokens are maximal runs of Unicode letters and digits,
// case-folded; a shingle is k consecutive tokens joined by one space.
// Character shingles: the text case-folded with every whitespace run
// collapsed to one space (trimmed at both ends), or with whitespace dropped
// entirely (CharNoSpace); a shingle is k consecutive code points of it.
// Case folding is Unicode's full case folding (CaseFolding.txt, C and F),
// so "Straße" and "STRASSE", "ΣΟΦΙΑΣ" and "σοφιας" are the same; no Unicode
// normalization is applied ("é" and "e" + U+0301 differ) unless accents are
// ignored (below).
// A text with fewer than k units yields one shingle, its whole normalized
// form, so short texts still compare; an empty normalized text yields none.
//
// Every shingle is a contiguous substring of the normalized text, so it can be
// hashed without building a string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/shingle_window.h"
#include "core/status.h"

namespace minhash {

enum class ShingleUnit : uint8_t { Word = 0, Char = 1, CharNoSpace = 2 };

// 5 for words (seed 002), 9 for characters (seed 000).
int default_shingle_size(ShingleUnit unit) noexcept;

// "word", "char", "char_nospace". Returns false for anything else.
bool parse_shingle_unit(std::string_view name, ShingleUnit *unit) noexcept;
const char *shingle_unit_name(ShingleUnit unit) noexcept;

// Characters a document's normalization leaves out before it finds units
// (SQL: minhash(doc, ignore => 'accents, punctuation')), a set of flags.
// The text is shingled as if it had been rewritten first:
//  - kIgnoreAccents: every character replaced by its full canonical
//    decomposition (Unicode's, as NFD decomposes; without NFD's reordering
//    of combining marks, which matters only among the marks dropped here
//    and a few spacing marks of rare scripts), then every nonspacing mark
//    (general category Mn) removed: "é", "e" + U+0301 and "e" compare
//    equal, as do "Å" and "A"; Hangul syllables become their jamo.
//  - kIgnorePunctuation: every punctuation character and symbol (general
//    categories P and S; on ASCII exactly the 32 characters of Python's
//    string.punctuation) removed, so that it neither belongs to a word nor
//    separates words: "don't" is "dont", "e-mail" is "email".
// A removed character is absent, not a separator: the text around it is
// normalized as if it had never been there. With no flags (the default)
// normalization is what it always was.
enum : uint8_t { kIgnoreAccents = 1, kIgnorePunctuation = 2 };
constexpr uint8_t kIgnoreAll = kIgnoreAccents | kIgnorePunctuation;

// A list of names separated by commas, white space allowed around each:
// "accents", "punctuation" ("" or only white space: none). Repeats are
// allowed. False for anything else, with *bad the first unknown name.
bool parse_ignore(std::string_view list, uint8_t *flags, std::string_view *bad) noexcept;
// "accents", "punctuation": the name of one flag (nullptr for anything else).
const char *ignore_name(uint8_t flag) noexcept;

struct ShingleSpec {
    ShingleUnit unit = ShingleUnit::Word;
    int k = 5;           // 1..kMaxShingleSize, validated by the caller
    uint8_t ignore = 0;  // kIgnore* flags
};

// The k the functions below use: spec.k, or the unit's default if k < 1, at
// most kMaxShingleSize (a safety net; the caller reports bad k to the user).
int clamp_shingle_size(const ShingleSpec &spec) noexcept;

// A document in normalized form and where its shingles start and end.
struct NormalizedText {
    std::string text;              // case-folded, units separated as described above
    std::vector<uint32_t> starts;  // byte offset of each unit (word or code point)
    std::vector<uint32_t> ends;    // byte offset one past each unit
};

// How a document is normalized: Fast (what every shingling path uses) or
// General, the code-point-by-code-point definition the fast path must equal
// bit for bit, under every set of ignore flags (the tests and the fuzzer
// compare them). They differ in word mode only, where the fast path takes
// ASCII 64 bytes at a time.
enum class NormalizePath : uint8_t { Fast, General };

// Input should be UTF-8 (PostgreSQL guarantees valid text in a UTF-8
// database; the glue converts other encodings first). Malformed bytes are
// tolerated: each acts as a separator (whitespace in character mode).
// Control characters are separators too. ignore: kIgnore* flags.
NormalizedText normalize(std::string_view doc, ShingleUnit unit,
                         NormalizePath path = NormalizePath::Fast, uint8_t ignore = 0);

// Calls fn(std::string_view shingle) for every shingle, in document order,
// repeats included (the tests' reference: the recorded units through the
// same ShingleWindow as every other path).
template <class Fn>
void for_each_shingle(const NormalizedText &norm, int k, Fn &&fn) {
    ShingleWindow window(k);
    uint32_t first, end;
    for (size_t i = 0; i < norm.starts.size(); ++i)
        if (window.push(norm.starts[i], norm.ends[i], &first))
            fn(std::string_view(norm.text.data() + first, norm.ends[i] - first));
    if (window.short_text(&first, &end))
        fn(std::string_view(norm.text.data() + first, end - first));
}

namespace detail {
class DistinctConsumer;
}

// The distinct shingles of a document in order of first appearance (what
// minhash_shingles shows). Every shingle is a substring of the normalized
// text, so the set is that text plus one (start, length) pair per shingle:
// nothing is copied per shingle, and the caller reads the bytes in place.
class DistinctShingles {
  public:
    size_t size() const noexcept { return start_.size(); }
    std::string_view operator[](size_t i) const noexcept {
        return std::string_view(text_.get() + start_[i], length_[i]);
    }
    size_t total_bytes() const noexcept { return total_bytes_; }  // sum of the lengths

  private:
    friend class detail::DistinctConsumer;
    friend Status distinct_shingles(std::string_view, const ShingleSpec &, InterruptFlag, size_t,
                                    DistinctShingles *) noexcept;
    friend Status distinct_shingles(const UnitText &, int, InterruptFlag, size_t,
                                    DistinctShingles *) noexcept;
    std::unique_ptr<char[]> text_;  // the normalized text
    std::vector<uint32_t> start_;
    std::vector<uint32_t> length_;
    size_t total_bytes_ = 0;
};

// What distinct_shingles charges against max_bytes for each distinct shingle
// beyond its length. It covers the set's own bookkeeping (a start and a
// length, 8 bytes, plus at most 21 bytes of hash table at a load factor of at
// least 3/8) and exceeds what a PostgreSQL text[] spends per element (a
// 4-byte header and at most 3 bytes of alignment), so one budget bounds both
// the core's memory beyond the normalized text and the array built from it.
// (While a vector or the table doubles, the old and new copies coexist.)
constexpr size_t kDistinctShingleOverhead = 32;

// Streams the document's shingles into *out without recording every unit:
// memory is the normalized text (at most normalized_capacity bytes) plus the
// distinct shingles. Polls interrupt regularly. Returns
//  - Ok: *out holds the set;
//  - TooLarge: sum(length + kDistinctShingleOverhead) over the distinct
//    shingles would exceed max_bytes (checked as each one is found, so the
//    work stops there), or the document is too large for 32-bit offsets;
//  - Interrupted: the flag was set;
//  - OutOfMemory, Failure: see status.h.
// On anything but Ok, *out is left empty.
Status distinct_shingles(std::string_view doc, const ShingleSpec &spec, InterruptFlag interrupt,
                         size_t max_bytes, DistinctShingles *out) noexcept;

// The same for a text already split into units (text search lexemes),
// shingled k units at a time; the set keeps a copy of units.text.
Status distinct_shingles(const UnitText &units, int k, InterruptFlag interrupt, size_t max_bytes,
                         DistinctShingles *out) noexcept;

// For a caller that cannot own a C++ object (the PostgreSQL glue): the set
// on the core's heap, released with free_distinct_shingles (which takes
// nullptr). On anything but Ok, *out is nullptr.
Status new_distinct_shingles(std::string_view doc, const ShingleSpec &spec,
                             InterruptFlag interrupt, size_t max_bytes,
                             DistinctShingles **out) noexcept;
Status new_distinct_shingles(const UnitText &units, int k, InterruptFlag interrupt,
                             size_t max_bytes, DistinctShingles **out) noexcept;
void free_distinct_shingles(DistinctShingles *set) noexcept;

// The same without a budget or interruption, as strings (tests, tools).
// Throws std::length_error (too large) or std::bad_alloc.
std::vector<std::string> distinct_shingles(std::string_view doc, const ShingleSpec &spec);

// Receives shingle hashes a block at a time; returns false to stop the pass.
using ShingleHashSink = bool (*)(void *ctx, const uint64_t *hashes, size_t n);

// Streams hash_bytes() of every shingle of doc -- the shingles
// for_each_shingle(normalize(doc), k) visits, in that order, repeats
// included -- to sink, without recording the units: memory is the
// normalized text alone (at most normalized_capacity bytes). Polls interrupt
// regularly. Returns Ok; Interrupted (the flag was set); TooLarge (the sink
// returned false, or the document is too large for 32-bit offsets);
// OutOfMemory; Failure.
Status for_each_shingle_hash(std::string_view doc, const ShingleSpec &spec, InterruptFlag interrupt,
                             ShingleHashSink sink, void *ctx) noexcept;

// The same for a text already split into units, k units a shingle.
Status for_each_shingle_hash(const UnitText &units, int k, InterruptFlag interrupt,
                             ShingleHashSink sink, void *ctx) noexcept;

// The distinct shingle hashes of a document (exact verification), sorted
// ascending, in a buffer the caller owns and sizes.
struct ShingleHashSet {
    uint64_t *hashes;  // room for cap hashes
    size_t cap;
    bool last_try;     // the caller cannot give more room: use every slot
    size_t count;      // out: hashes[0..count) on Ok
};

// Streams the hashes into set->hashes; whenever it fills, it is sorted and
// deduplicated in place and the stream goes on, so the room needed is the
// number of distinct shingles, not of shingles. Returns TooLarge when they
// do not fit: after deduplication the buffer is full, or (unless last_try)
// more than 7/8 full, so a retry with more room does not thrash. Polls
// interrupt as for_each_shingle_hash does.
Status shingle_hash_set(std::string_view doc, const ShingleSpec &spec, InterruptFlag interrupt,
                        ShingleHashSet *set) noexcept;
Status shingle_hash_set(const UnitText &units, int k, InterruptFlag interrupt,
                        ShingleHashSet *set) noexcept;

}  // namespace minhash
