// The normalizer shared by normalize() (which records every unit) and every
// path that shingles (which streams units into a ShingleWindow):
// one pass over the UTF-8 input that writes the normalized text into a
// caller's buffer and reports each completed unit as a byte range of it.
//
// Case: text is fully case-folded (Unicode CaseFolding.txt, C and F
// mappings, no language-specific rules, no normalization form): for ASCII
// that is lowercasing, done by table lookup inline; only bytes ≥ 0x80 go
// through libunistring (classify_non_ascii in shingle.cpp).
//
// Ignored characters (ShingleSpec::ignore, shingle.h) are dropped where they
// are met: an ASCII punctuation byte is of class kIgnored (it changes no
// state: a token goes on across it), a non-ASCII code point is decomposed
// (accents) and yields only the pieces that are kept
// (classify_non_ascii_ignoring). Without flags nothing of this runs.
//
// Private to src/core: not part of the API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/shingle.h"
#include "core/shingle_window.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace minhash {
namespace detail {

// Folding one code point yields at most 3 code points and 6 bytes (U+0390
// ΐ, 2 bytes, folds to ι + U+0308 + U+0301, 6 bytes): at most kMaxExpansion
// times its input bytes. With accents ignored a code point may decompose
// first: a Hangul syllable (3 bytes) into three jamo (9 bytes), again at
// most kMaxExpansion times. ASCII maps to one byte, and each inserted space
// stands for at least one separator byte of input, so the normalized text is
// at most kMaxExpansion bytes per input byte (the tests check every code
// point under every set of flags), plus slack for the 16-byte stores of
// copy_ascii_token.
constexpr size_t kMaxFoldedBytes = 8;
constexpr size_t kMaxExpansion = 3;
inline size_t normalized_capacity(size_t input_len) { return kMaxExpansion * input_len + 32; }
// Bytes of normalized text the signing paths keep on their stack: documents
// up to (16 KB - 32) / 3 ≈ 5.4 KB of input need no allocation (a malloc and
// free of ~10 KB per row cost 5% of the loop: perf, core_bench).
constexpr size_t kStackText = 16384;
// Offsets are 32-bit; PostgreSQL text is at most 1 GB.
inline bool too_large_to_shingle(size_t input_len) {
    return input_len > (UINT32_MAX - 64) / kMaxExpansion;
}

// Byte classes. In word mode: Token (letter or digit), Mark (a combining
// mark: part of a token only when it continues one, so "e\u0301" stays one
// word) and Separator. In character mode: Unit or Separator (whitespace,
// control characters and malformed UTF-8 all act as whitespace). In both,
// Ignored: a character left out (ignore flags), which changes nothing.
enum : uint8_t { kSeparator = 0, kToken = 1, kMark = 2, kUnit = 3, kIgnored = 4 };

// The classes of ASCII bytes, [0] as always, [1] with punctuation ignored
// (the bytes of categories P and S, as libunistring classifies them, are
// kIgnored there).
struct AsciiTables {
    uint8_t word_class[2][128];
    uint8_t char_class[2][128];
    char lower[128];
};
extern const AsciiTables kAscii;

// One non-ASCII code point (or one malformed byte) starting at s, n ≥ 1
// bytes available: its input length, its class and its case-folded UTF-8
// (one to three code points).
struct NonAscii {
    uint8_t in_len;   // 1..4
    uint8_t cls;      // as above, for the unit kind asked
    uint8_t out_len;  // 0..kMaxFoldedBytes
    char out[kMaxFoldedBytes];
};
void classify_non_ascii(const unsigned char *s, size_t n, bool word_mode, NonAscii *cp) noexcept;

// The same under ignore flags (not 0): the code point (decomposed if accents
// are ignored) as the pieces that are kept, each with its class and its
// case-folded UTF-8, in order. No piece: the code point is ignored entirely.
// A full canonical decomposition has at most 4 code points (U+1FAF; the
// tests check every code point).
constexpr int kMaxPieces = 4;
struct NonAsciiPieces {
    uint8_t in_len;  // 1..4
    uint8_t count;   // 0..kMaxPieces
    struct Piece {
        uint8_t cls;
        uint8_t out_len;
        char out[kMaxFoldedBytes];
    } piece[kMaxPieces];
};
void classify_non_ascii_ignoring(const unsigned char *s, size_t n, bool word_mode, uint8_t ignore,
                                 NonAsciiPieces *cp) noexcept;

// Word-mode scanning of ASCII, 16 bytes at a time where SSE2 exists (every
// x86-64): English text spends most of its time here, and a byte loop pays
// a branch misprediction at nearly every word boundary.
#if defined(__SSE2__)
// Bit j set where byte j is an ASCII letter or digit. Bytes ≥ 0x80 are
// negative as signed chars and fall outside both ranges.
inline unsigned ascii_token_mask(__m128i v) {
    const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));  // 'A'..'Z' → 'a'..'z'
    const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)),
                                         _mm_cmplt_epi8(folded, _mm_set1_epi8('z' + 1)));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                        _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(letter, digit)));
}
#endif

// The first position ≥ i that is not an ASCII separator (or n). Outside a
// token an ignored byte is no different from a separator: both are skipped.
inline size_t skip_ascii_separators(const unsigned char *in, size_t i, size_t n) {
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i));
        const unsigned stop = ascii_token_mask(v) | static_cast<unsigned>(_mm_movemask_epi8(v));
        if (stop)
            return i + static_cast<size_t>(__builtin_ctz(stop));
    }
#endif
    while (i < n && in[i] < 0x80 && kAscii.word_class[0][in[i]] == kSeparator)
        ++i;
    return i;
}

// Copies the ASCII letters and digits from *i on, lowercased, to out + *o,
// advancing both. For letters and digits alike, lowercase is c | 0x20.
// Writes up to 16 bytes beyond the token (overwritten later): the buffer
// has that slack (normalized_capacity), and *o + 16 ≤ 3·(*i) + 16 ≤ 3n + 16.
inline void copy_ascii_token(const unsigned char *in, size_t *i, size_t n, char *out,
                             size_t *o) {
    size_t p = *i, q = *o;
#if defined(__SSE2__)
    while (p + 16 <= n) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + p));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + q), _mm_or_si128(v, _mm_set1_epi8(0x20)));
        const unsigned run = static_cast<unsigned>(__builtin_ctz(~ascii_token_mask(v)));  // ≤ 16
        p += run;
        q += run;
        if (run < 16) {
            *i = p;
            *o = q;
            return;
        }
    }
#endif
    while (p < n && in[p] < 0x80 && kAscii.word_class[0][in[p]] == kToken)
        out[q++] = kAscii.lower[in[p++]];
    *i = p;
    *o = q;
}

// Every kTickBytes of input the normalizer calls sink.tick() (interrupt polling).
constexpr size_t kTickBytes = size_t(1) << 16;

#if defined(__SSE2__)
// The ASCII fast path of word mode classifies kAsciiBlock bytes at a time
// and copies a token's bytes 16 at a time from where it starts, so it runs
// while kAsciiBlock + 16 bytes of input remain.
constexpr size_t kAsciiBlock = 64;

// Bit j of *token: byte j is an ASCII letter or digit; of *high: byte j is
// 0x80 or above (not ASCII).
inline void classify_ascii_block(const unsigned char *p, uint64_t *token, uint64_t *high) {
    uint64_t t = 0, h = 0;
    for (int q = 0; q < 4; ++q) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + 16 * q));
        t |= uint64_t(ascii_token_mask(v)) << (16 * q);
        h |= uint64_t(static_cast<unsigned>(_mm_movemask_epi8(v))) << (16 * q);
    }
    *token = t;
    *high = h;
}

// As classify_ascii_block, and bit j of *punct: byte j is ASCII punctuation
// or a symbol, i.e. printable (0x21..0x7E) but not a letter or digit --
// exactly the bytes of categories P and S (the tests compare this with
// kAscii.word_class[1] for every byte).
inline void classify_ascii_block_punct(const unsigned char *p, uint64_t *token, uint64_t *high,
                                       uint64_t *punct) {
    uint64_t t = 0, h = 0, s = 0;
    for (int q = 0; q < 4; ++q) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + 16 * q));
        const unsigned tok = ascii_token_mask(v);
        // signed compares: bytes ≥ 0x80 are negative, never above 0x20
        const __m128i printable = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(0x20)),
                                                _mm_cmplt_epi8(v, _mm_set1_epi8(0x7f)));
        t |= uint64_t(tok) << (16 * q);
        h |= uint64_t(static_cast<unsigned>(_mm_movemask_epi8(v))) << (16 * q);
        s |= uint64_t(static_cast<unsigned>(_mm_movemask_epi8(printable)) & ~tok) << (16 * q);
    }
    *token = t;
    *high = h;
    *punct = s;
}

// dst[0..len) = src[0..len) lowercased, for letters and digits (c | 0x20),
// 16 bytes at a time: reads and writes up to 15 bytes beyond len.
inline void copy_token_lower(const unsigned char *src, size_t len, char *dst) {
    for (size_t c = 0; c < len; c += 16)
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + c),
                         _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + c)),
                                      _mm_set1_epi8(0x20)));
}

// The number of trailing one bits of v (64 when v is all ones).
inline unsigned trailing_ones(uint64_t v) {
    return ~v == 0 ? 64u : static_cast<unsigned>(__builtin_ctzll(~v));
}
#endif

// Word mode: tokens are maximal runs of letters and digits (and combining
// marks that continue a token), case-folded, joined by one space. Two paths
// (NormalizePath, shingle.h): the general one goes code point by code point
// (with SSE2 help for ASCII runs) and is the definition; the fast one takes
// ASCII 64 bytes at a time from bit masks -- one branch per word instead of
// one per change of byte class -- and hands every other byte to the general
// step. Both write the same text and report the same units under every set
// of ignore flags (tests: normalize_paths_test.cpp; the fuzzer).
// kPunct: punctuation is ignored, so ASCII punctuation bytes are dropped
// inside a token (ascii_block_punct) instead of ending it; a separate
// instantiation, so that the default path is the code it always was.
template <class Sink, bool kPunct = false>
class WordNormalizer {
  public:
    WordNormalizer(std::string_view doc, char *out, Sink &sink, uint8_t ignore = 0)
        : in_(reinterpret_cast<const unsigned char *>(doc.data())), n_(doc.size()), out_(out),
          sink_(sink), ignore_(ignore) {}

    bool run(NormalizePath path, size_t *out_len) {
        *out_len = 0;
        while (i_ < n_) {
            if (i_ >= next_tick_) {
                next_tick_ = i_ + kTickBytes;
                if (!sink_.tick())
                    return false;
            }
#if defined(__SSE2__)
            if (path == NormalizePath::Fast && i_ + kAsciiBlock + 16 <= n_) {
                if (!(kPunct ? ascii_block_punct() : ascii_block()))
                    return false;
                continue;
            }
#endif
            if (!general_step())
                return false;
        }
        if (in_token_ && !sink_.unit(uint32_t(token_start_), uint32_t(o_)))
            return false;
        *out_len = o_;
        return true;
    }

  private:
    // A token starts at o_: a space before it unless it is the first.
    void open_token() {
        if (o_ > 0)
            out_[o_++] = ' ';
        token_start_ = o_;
        in_token_ = true;
    }
    bool close_token() {
        in_token_ = false;
        return sink_.unit(uint32_t(token_start_), uint32_t(o_));
    }

    // One step of the general path: an ASCII run or one non-ASCII code point.
    bool general_step() {
        if (!in_token_) {
            i_ = skip_ascii_separators(in_, i_, n_);
            if (i_ == n_)
                return true;
        }
        const unsigned char c = in_[i_];
        if (c < 0x80) {
            const uint8_t cls = kAscii.word_class[kPunct][c];
            if (cls == kSeparator) {  // ends the token
                ++i_;
                return close_token();
            }
            if (kPunct && cls == kIgnored) {  // inside a token (skipped outside)
                ++i_;
                return true;
            }
            if (!in_token_)
                open_token();
            copy_ascii_token(in_, &i_, n_, out_, &o_);
            return true;
        }
        return non_ascii();
    }

    // The code point at i_ (not ASCII, or malformed): a letter or digit
    // continues or starts a token, a mark continues one, anything else ends it.
    bool non_ascii() {
        if (ignore_ != 0)
            return non_ascii_ignoring();
        NonAscii cp;
        classify_non_ascii(in_ + i_, n_ - i_, true, &cp);
        i_ += cp.in_len;
        return piece(cp.cls, cp.out, cp.out_len);
    }

    // One piece of a code point: what non_ascii() does with a class and bytes.
    bool piece(uint8_t cls, const char *bytes, int len) {
        if (cls == kSeparator || (cls == kMark && !in_token_))
            return !in_token_ || close_token();
        if (!in_token_)
            open_token();
        for (int b = 0; b < len; ++b)
            out_[o_++] = bytes[b];
        return true;
    }

    // Under ignore flags: the kept pieces in turn (none: nothing changes).
    bool non_ascii_ignoring() {
        NonAsciiPieces cp;
        classify_non_ascii_ignoring(in_ + i_, n_ - i_, true, ignore_, &cp);
        i_ += cp.in_len;
        for (int p = 0; p < cp.count; ++p)
            if (!piece(cp.piece[p].cls, cp.piece[p].out, cp.piece[p].out_len))
                return false;
        return true;
    }

#if defined(__SSE2__)
    // The fast path's step: the ASCII bytes of the next 64, token by token
    // from the bit mask, then the non-ASCII code point that ends them, if
    // any. The state lives in locals here: the stores into out_ (char) may
    // alias any member, which would otherwise be reloaded after each one.
    bool ascii_block() {
        const unsigned char *const block = in_ + i_;
        char *const out = out_;
        uint64_t token, high;
        classify_ascii_block(block, &token, &high);
        const unsigned ascii = high ? static_cast<unsigned>(__builtin_ctzll(high)) : 64u;
        if (ascii < 64)
            token &= (uint64_t(1) << ascii) - 1;  // the bytes [i_, i_ + ascii) are ASCII
        size_t o = o_;
        size_t token_start = token_start_;
        bool in_token = in_token_;
        unsigned pos = 0;
        bool ok = true;
        if (in_token) {  // a token continues from before this block
            pos = trailing_ones(token);
            copy_token_lower(block, pos, out + o);
            o += pos;
            if (pos < ascii) {
                in_token = false;
                ok = sink_.unit(uint32_t(token_start), uint32_t(o));
            }
        }
        while (ok && pos < ascii) {
            const uint64_t rest = token & (~uint64_t(0) << pos);  // pos < 64 here
            if (rest == 0)
                break;
            const unsigned start = static_cast<unsigned>(__builtin_ctzll(rest));
            const unsigned len = trailing_ones(token >> start);  // ≤ 64 - start
            if (o > 0)
                out[o++] = ' ';
            token_start = o;
            copy_token_lower(block + start, len, out + o);
            o += len;
            pos = start + len;
            if (pos >= ascii) {  // the token may go on: the next block, or a code point
                in_token = true;
                break;
            }
            ok = sink_.unit(uint32_t(token_start), uint32_t(o));  // ended by an ASCII separator
        }
        o_ = o;
        token_start_ = token_start;
        in_token_ = in_token;
        if (!ok)
            return false;
        i_ += ascii;
        return ascii == 64 || non_ascii();
    }

    // ascii_block with punctuation ignored: a token is a run of letters and
    // digits that may go on across punctuation bytes (dropped) and ends at
    // any other ASCII byte (white space, control). Its letters are copied
    // run by run; a run of punctuation alone starts nothing.
    bool ascii_block_punct() {
        const unsigned char *const block = in_ + i_;
        char *const out = out_;
        uint64_t token, high, punct;
        classify_ascii_block_punct(block, &token, &high, &punct);
        const unsigned ascii = high ? static_cast<unsigned>(__builtin_ctzll(high)) : 64u;
        if (ascii < 64) {  // the bytes [i_, i_ + ascii) are ASCII
            token &= (uint64_t(1) << ascii) - 1;
            punct &= (uint64_t(1) << ascii) - 1;
        }
        size_t o = o_;
        size_t token_start = token_start_;
        bool in_token = in_token_;
        unsigned pos = 0;
        bool ok = true;
        while (pos < ascii) {
            if (!in_token) {
                const uint64_t rest = token & (~uint64_t(0) << pos);  // pos < 64 here
                if (rest == 0)
                    break;  // only separators and punctuation are left
                pos = static_cast<unsigned>(__builtin_ctzll(rest));
                if (o > 0)
                    out[o++] = ' ';
                token_start = o;
                in_token = true;
            }
            // in a token at pos < ascii: a run of letters and digits (maybe empty)
            const unsigned len = trailing_ones(token >> pos);
            copy_token_lower(block + pos, len, out + o);
            o += len;
            pos += len;
            if (pos >= ascii)
                break;  // the token may go on: the next block, or a code point
            pos += trailing_ones(punct >> pos);  // dropped
            if (pos >= ascii)
                break;
            if ((token >> pos) & 1)
                continue;  // punctuation between two runs: one token
            in_token = false;  // a separator ends the token
            ok = sink_.unit(uint32_t(token_start), uint32_t(o));
            if (!ok)
                break;
        }
        o_ = o;
        token_start_ = token_start;
        in_token_ = in_token;
        if (!ok)
            return false;
        i_ += ascii;
        return ascii == 64 || non_ascii();
    }
#endif

    const unsigned char *in_;
    const size_t n_;
    char *out_;
    Sink &sink_;
    const uint8_t ignore_;
    size_t i_ = 0;
    size_t o_ = 0;
    size_t token_start_ = 0;
    size_t next_tick_ = kTickBytes;
    bool in_token_ = false;
};

// Calls sink.unit(start, end) for every unit (word, or code point of the
// folded text including the single space that replaces a whitespace run) as
// soon as it is complete, in order; offsets index `out`, which must hold normalized_capacity(doc.size())
// bytes. Returns false as soon as unit() or tick() returns false.
// *out_len receives the normalized length. path chooses the word
// normalizer (the results are the same); ignore: kIgnore* flags.
template <class Sink>
bool normalize_into(std::string_view doc, ShingleUnit unit, char *out, size_t *out_len, Sink &sink,
                    NormalizePath path = NormalizePath::Fast, uint8_t ignore = 0) {
    const bool punct = (ignore & kIgnorePunctuation) != 0;
    if (unit == ShingleUnit::Word && punct) {
        WordNormalizer<Sink, true> words(doc, out, sink, ignore);
        return words.run(path, out_len);
    }
    if (unit == ShingleUnit::Word) {
        WordNormalizer<Sink> words(doc, out, sink, ignore);
        return words.run(path, out_len);
    }

    const auto *in = reinterpret_cast<const unsigned char *>(doc.data());
    const size_t n = doc.size();
    size_t i = 0;
    size_t o = 0;
    size_t next_tick = kTickBytes;
    *out_len = 0;

    // Character units. A whitespace run becomes one pending space, written
    // (as a unit of its own) only when another unit follows: trimmed at both
    // ends. An ignored character changes nothing (not even a pending space).
    const bool keep_spaces = unit == ShingleUnit::Char;
    const uint8_t *const char_class = kAscii.char_class[punct];
    bool pending_space = false;
    // Before a unit: the space of a preceding whitespace run, if kept.
    auto flush_space = [&]() {
        const bool ok = !(pending_space && keep_spaces) ||
                        (out[o++] = ' ', sink.unit(uint32_t(o - 1), uint32_t(o)));
        pending_space = false;
        return ok;
    };
    while (i < n) {
        if (i >= next_tick) {
            next_tick = i + kTickBytes;
            if (!sink.tick())
                return false;
        }
        const unsigned char c = in[i];
        if (c < 0x80) {
            ++i;
            const uint8_t cls = char_class[c];
            if (cls == kSeparator) {
                pending_space = o > 0;
                continue;
            }
            if (cls == kIgnored)
                continue;
            if (!flush_space())
                return false;
            out[o++] = kAscii.lower[c];
            if (!sink.unit(uint32_t(o - 1), uint32_t(o)))
                return false;
            continue;
        }
        // One piece of a code point: a separator, or its folding's code
        // points, each a unit ("ß" is the two units "ss").
        auto piece = [&](uint8_t cls, const char *bytes, int len) {
            if (cls == kSeparator) {
                pending_space = o > 0;
                return true;
            }
            if (!flush_space())
                return false;
            for (int b = 0; b < len;) {
                const size_t start = o;
                const auto lead = static_cast<unsigned char>(bytes[b]);
                const int end = b + (lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4);
                while (b < end)
                    out[o++] = bytes[b++];
                if (!sink.unit(uint32_t(start), uint32_t(o)))
                    return false;
            }
            return true;
        };
        if (ignore == 0) {
            NonAscii cp;
            classify_non_ascii(in + i, n - i, false, &cp);
            i += cp.in_len;
            if (!piece(cp.cls, cp.out, cp.out_len))
                return false;
            continue;
        }
        NonAsciiPieces cp;
        classify_non_ascii_ignoring(in + i, n - i, false, ignore, &cp);
        i += cp.in_len;
        for (int p = 0; p < cp.count; ++p)
            if (!piece(cp.piece[p].cls, cp.piece[p].out, cp.piece[p].out_len))
                return false;
    }
    *out_len = o;
    return true;
}

// Every kUnitsPerPoll units the shingling paths poll too: hashing k-unit
// windows costs up to k times the input.
constexpr uint64_t kUnitsPerPoll = 1024;

// Adapts a shingle consumer to the normalizer's sink: units go through one
// ShingleWindow, each complete shingle [first, end) to
// consumer.shingle(first, end) and each poll to consumer.poll(); either
// returns false to stop.
template <class Consumer>
class WindowSink {
  public:
    WindowSink(int k, Consumer &consumer) : window_(k), consumer_(consumer) {}

    bool unit(uint32_t start, uint32_t end) {
        uint32_t first;
        if (window_.push(start, end, &first) && !consumer_.shingle(first, end))
            return false;
        if ((window_.units() & (kUnitsPerPoll - 1)) == 0)
            return consumer_.poll();
        return true;
    }
    bool tick() { return consumer_.poll(); }

    // After the last unit: the shingle of a short text, if any.
    bool finish() {
        uint32_t first, end;
        return !window_.short_text(&first, &end) || consumer_.shingle(first, end);
    }

  private:
    ShingleWindow window_;
    Consumer &consumer_;
};

// The shingles of doc, normalized into text (normalized_capacity(doc.size())
// bytes, which the offsets index), to consumer. False if it stopped.
template <class Consumer>
bool shingle_document(std::string_view doc, const ShingleSpec &spec, char *text,
                      Consumer &consumer) {
    WindowSink<Consumer> sink(clamp_shingle_size(spec), consumer);
    size_t len = 0;
    return normalize_into(doc, spec.unit, text, &len, sink, NormalizePath::Fast, spec.ignore) &&
           sink.finish();
}

// The shingles of a text already split into units, k at a time (offsets
// index units.text). False if the consumer stopped.
template <class Consumer>
bool shingle_units(const UnitText &units, int k, Consumer &consumer) {
    WindowSink<Consumer> sink(k, consumer);
    for (size_t i = 0; i < units.count; ++i)
        if (!sink.unit(units.starts[i], units.ends[i]))
            return false;
    return sink.finish();
}

}  // namespace detail
}  // namespace minhash
