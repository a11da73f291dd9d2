// Shingling: normalization of UTF-8 text into words or code points, and the
// distinct shingles a user sees (minhash_shingles).
#include "core/shingle.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <unicase.h>
#include <unictype.h>
#include <unistr.h>

#include "core/hash.h"
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

namespace {

// Full case folding (Unicode CaseFolding.txt, statuses C and F, as
// libunistring's u8_casefold applies it) equals lowercasing (uc_tolower) for
// all but a few hundred code points: ß → "ss", ς → σ, ſ → s, ﬁ → "fi",
// ẞ → "ss", İ → "i̇", ǰ → "ǰ" (decomposed), Cherokee small letters → capitals
// ... This table holds those code points with their foldings, so every code
// point takes a cheap path: a bit test, then lowercasing or a binary search.
// They all lie in the BMP (outside it folding is lowercasing; the tests check
// every code point against u8_casefold). Built once per process by asking
// libunistring about each BMP code point, a few milliseconds: the answer
// follows the installed Unicode data rather than a copy of it.
class FoldExceptions {
  public:
    FoldExceptions() noexcept {
        for (ucs4_t uc = 0x80; uc < 0x10000; ++uc) {
            if (uc >= 0xD800 && uc < 0xE000)  // surrogates are not characters
                continue;
            uint8_t in[4], lower[4];
            Entry e{uc, 0, {}};
            const int in_len = u8_uctomb(in, uc, 4);
            const int lower_len = u8_uctomb(lower, uc_tolower(uc), 4);
            size_t len = sizeof e.bytes;
            uint8_t *r = u8_casefold(in, static_cast<size_t>(in_len), nullptr, nullptr, e.bytes, &len);
            if (r != e.bytes) {  // longer than kMaxFoldedBytes (none is), or no memory
                std::free(r);
                mark(uc);  // not in entries_: folded by u8_casefold on each use
                continue;
            }
            if (len == static_cast<size_t>(lower_len) && std::memcmp(e.bytes, lower, len) == 0)
                continue;
            mark(uc);
            if (count_ < kMaxEntries) {
                e.len = static_cast<uint8_t>(len);
                entries_[count_++] = e;  // ascending code points
            }
        }
    }

    // Writes the folding of uc (UTF-8 s[0..len)) to out; false if uc folds
    // like its lowercase.
    bool fold(ucs4_t uc, const unsigned char *s, int len, char *out, uint8_t *out_len) const noexcept {
        if (uc >= 0x10000 || ((bits_[uc >> 6] >> (uc & 63)) & 1) == 0)
            return false;
        const Entry *e = std::lower_bound(entries_, entries_ + count_, uc,
                                          [](const Entry &x, ucs4_t c) { return x.uc < c; });
        if (e != entries_ + count_ && e->uc == uc) {
            std::memcpy(out, e->bytes, e->len);
            *out_len = e->len;
            return true;
        }
        size_t n = kMaxFoldedBytes;
        auto *o = reinterpret_cast<uint8_t *>(out);
        uint8_t *r = u8_casefold(s, static_cast<size_t>(len), nullptr, nullptr, o, &n);
        if (r != o) {
            std::free(r);
            return false;
        }
        *out_len = static_cast<uint8_t>(n);
        return true;
    }

  private:
    static constexpr size_t kMaxEntries = 1024;  // Unicode 14 has 298
    struct Entry {
        ucs4_t uc;
        uint8_t len;
        uint8_t bytes[kMaxFoldedBytes];
    };
    void mark(ucs4_t uc) { bits_[uc >> 6] |= uint64_t(1) << (uc & 63); }

    uint64_t bits_[0x10000 / 64] = {};
    size_t count_ = 0;
    Entry entries_[kMaxEntries];
};

// uc (its UTF-8 bytes s[0..len)) fully case-folded into out (kMaxFoldedBytes).
uint8_t fold_code_point(ucs4_t uc, const unsigned char *s, int len, char *out) noexcept {
    static const FoldExceptions exceptions;  // thread-safe initialisation (C++11)
    uint8_t n = 0;
    if (exceptions.fold(uc, s, len, out, &n))
        return n;
    const int m = u8_uctomb(reinterpret_cast<uint8_t *>(out), uc_tolower(uc), 4);
    if (m > 0)
        return static_cast<uint8_t>(m);
    std::memcpy(out, s, static_cast<size_t>(len));  // cannot happen for a valid code point
    return static_cast<uint8_t>(len);
}

}  // namespace

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
    cp->out_len = cls == kSeparator ? 0 : fold_code_point(uc, s, len, cp->out);
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
    if (doc.size() > (UINT32_MAX - 64) / detail::kMaxExpansion)
        throw std::length_error("document too large to shingle");
    NormalizedText norm;
    norm.text.resize(detail::normalized_capacity(doc.size()));
    RecordingSink sink{&norm};
    size_t len = 0;
    detail::normalize_into(doc, unit, norm.text.data(), &len, sink);
    norm.text.resize(len);
    return norm;
}

namespace detail {

// Receives units from the normalizer and keeps the starts of the last k in a
// ring (as the signature path does), so a window is complete the moment its
// last unit is. New shingles go into an open-addressing hash table of 64-bit
// slots: the top 32 bits of the shingle's XXH3 hash, then its index + 1
// (0 = empty). A table of 2^b slots (b ≤ 32) probes from the top b bits of the
// hash, which the slot itself keeps, so growing never rehashes any text.
class DistinctSink {
  public:
    DistinctSink(const char *text, int k, InterruptFlag interrupt, size_t max_bytes,
                 DistinctShingles *out)
        : text_(text), k_(k), interrupt_(interrupt), max_bytes_(max_bytes), out_(out) {
        slots_.assign(size_t(1) << bits_, 0);
    }

    bool unit(uint32_t start, uint32_t end) {
        ring_[pos_] = start;
        pos_ = pos_ + 1 == k_ ? 0 : pos_ + 1;
        ++count_;
        last_end_ = end;
        if (count_ >= static_cast<uint64_t>(k_) && !add(ring_[pos_], end))
            return false;
        // The normalizer ticks per input bytes; poll per units too, since
        // hashing k-unit windows costs up to k times the input.
        if ((count_ & (kUnitsPerPoll - 1)) == 0)
            return tick();
        return true;
    }

    bool tick() {
        if (status_ == Status::Ok && interrupt_ && *interrupt_)
            status_ = Status::Interrupted;
        return status_ == Status::Ok;
    }

    // A text with fewer than k units is one shingle: all of it.
    void finish() {
        if (status_ == Status::Ok && count_ > 0 && count_ < static_cast<uint64_t>(k_))
            add(0, last_end_);
        if (status_ == Status::Ok)
            flush();
    }

    Status status() const { return status_; }

  private:
    static constexpr uint64_t kUnitsPerPoll = 1024;
    static constexpr size_t kSlotsPerPoll = size_t(1) << 16;
    // Shingles are hashed and their first slot prefetched kBatch at a time
    // before any is looked up: once the table outgrows the cache, the
    // lookups would otherwise wait on one memory access after another.
    static constexpr size_t kBatch = 16;

    struct Pending {
        uint32_t start;
        uint32_t len;
        uint32_t tag;  // top 32 bits of the hash
    };

    bool add(uint32_t start, uint32_t end) {
        const uint32_t len = end - start;
        const uint32_t tag = static_cast<uint32_t>(hash_bytes(text_ + start, len) >> 32);
        __builtin_prefetch(&slots_[tag >> (32 - bits_)]);
        pending_[npending_++] = Pending{start, len, tag};
        return npending_ < kBatch || flush();
    }

    // Looks up the pending shingles in order (so the first appearance wins).
    bool flush() {
        const size_t n = npending_;
        npending_ = 0;
        for (size_t p = 0; p < n; ++p)
            if (!insert(pending_[p]))
                return false;
        return true;
    }

    bool insert(const Pending &sh) {
        const char *s = text_ + sh.start;
        const size_t mask = slots_.size() - 1;
        size_t i = sh.tag >> (32 - bits_);
        for (uint64_t slot; (slot = slots_[i]) != 0; i = (i + 1) & mask) {
            if (static_cast<uint32_t>(slot >> 32) != sh.tag)
                continue;
            const size_t j = static_cast<uint32_t>(slot) - 1;
            if (out_->length_[j] == sh.len && std::memcmp(text_ + out_->start_[j], s, sh.len) == 0)
                return true;  // seen before
        }
        // New: charge it before storing anything.
        const size_t charge = size_t(sh.len) + kDistinctShingleOverhead;
        if (charge > max_bytes_ - used_) {
            status_ = Status::TooLarge;
            return false;
        }
        used_ += charge;
        const size_t index = out_->start_.size();
        out_->start_.push_back(sh.start);
        out_->length_.push_back(sh.len);
        out_->total_bytes_ += sh.len;
        slots_[i] = (uint64_t(sh.tag) << 32) | (index + 1);
        // Load factor at most 3/4 (so at least 3/8 after doubling).
        if (4 * (index + 1) > 3 * slots_.size())
            return grow();
        return true;
    }

    bool grow() {
        if (bits_ == 32) {  // positions come from the 32-bit tag
            status_ = Status::TooLarge;
            return false;
        }
        ++bits_;
        std::vector<uint64_t> bigger(size_t(1) << bits_, 0);
        const size_t mask = bigger.size() - 1;
        for (size_t n = 0; n < slots_.size(); ++n) {
            if ((n & (kSlotsPerPoll - 1)) == kSlotsPerPoll - 1 && !tick())
                return false;
            const uint64_t slot = slots_[n];
            if (slot == 0)
                continue;
            size_t i = static_cast<uint32_t>(slot >> 32) >> (32 - bits_);
            while (bigger[i] != 0)
                i = (i + 1) & mask;
            bigger[i] = slot;
        }
        slots_.swap(bigger);
        return true;
    }

    const char *text_;
    const int k_;
    InterruptFlag interrupt_;
    const size_t max_bytes_;
    DistinctShingles *out_;
    Status status_ = Status::Ok;
    size_t used_ = 0;
    int bits_ = 10;
    std::vector<uint64_t> slots_;
    int pos_ = 0;
    uint64_t count_ = 0;
    uint32_t last_end_ = 0;
    size_t npending_ = 0;
    Pending pending_[kBatch];
    uint32_t ring_[kMaxShingleSize];
};

}  // namespace detail

Status distinct_shingles(std::string_view doc, const ShingleSpec &spec, InterruptFlag interrupt,
                         size_t max_bytes, DistinctShingles *out) {
    *out = DistinctShingles();
    // Offsets are 32-bit; PostgreSQL text is at most 1 GB.
    if (doc.size() > (UINT32_MAX - 64) / detail::kMaxExpansion)
        return Status::TooLarge;
    const int k = clamp_shingle_size(spec);
    DistinctShingles set;
    set.text_.reset(new char[detail::normalized_capacity(doc.size())]);
    detail::DistinctSink sink(set.text_.get(), k, interrupt, max_bytes, &set);
    size_t len = 0;
    if (detail::normalize_into(doc, spec.unit, set.text_.get(), &len, sink))
        sink.finish();
    if (sink.status() == Status::Ok)
        *out = std::move(set);
    return sink.status();
}

namespace detail {

// Receives units from the normalizer, keeps the starts of the last k in a
// ring (as the signature path does) and hands the hash of each complete
// window to the caller's sink in blocks.
class HashSink {
  public:
    HashSink(const char *text, int k, InterruptFlag interrupt, ShingleHashSink sink, void *ctx)
        : text_(text), k_(k), interrupt_(interrupt), sink_(sink), ctx_(ctx) {}

    bool unit(uint32_t start, uint32_t end) {
        ring_[pos_] = start;
        pos_ = pos_ + 1 == k_ ? 0 : pos_ + 1;
        ++count_;
        last_end_ = end;
        if (count_ >= static_cast<uint64_t>(k_)) {
            const uint32_t first = ring_[pos_];  // start of unit count_ - k
            push(hash_bytes(text_ + first, end - first));
        }
        return status_ == Status::Ok;
    }

    bool tick() {
        if (status_ == Status::Ok && interrupt_ && *interrupt_)
            status_ = Status::Interrupted;
        return status_ == Status::Ok;
    }

    // A text with fewer than k units is one shingle: all of it.
    void finish() {
        if (count_ > 0 && count_ < static_cast<uint64_t>(k_))
            push(hash_bytes(text_, last_end_));
        flush();
    }

    Status status() const { return status_; }

  private:
    static constexpr size_t kBlock = 256;

    void push(uint64_t h) {
        if (status_ != Status::Ok)
            return;
        block_[nblock_++] = h;
        if (nblock_ == kBlock) {
            flush();
            tick();
        }
    }
    void flush() {
        if (status_ == Status::Ok && nblock_ > 0 && !sink_(ctx_, block_, nblock_))
            status_ = Status::TooLarge;
        nblock_ = 0;
    }

    const char *text_;
    const int k_;
    InterruptFlag interrupt_;
    ShingleHashSink sink_;
    void *ctx_;
    Status status_ = Status::Ok;
    int pos_ = 0;
    uint64_t count_ = 0;
    uint32_t last_end_ = 0;
    size_t nblock_ = 0;
    uint32_t ring_[kMaxShingleSize];
    uint64_t block_[kBlock];
};

}  // namespace detail

Status for_each_shingle_hash(std::string_view doc, const ShingleSpec &spec, InterruptFlag interrupt,
                             ShingleHashSink sink, void *ctx) {
    // Offsets are 32-bit; PostgreSQL text is at most 1 GB.
    if (doc.size() > (UINT32_MAX - 64) / detail::kMaxExpansion)
        return Status::TooLarge;
    const int k = clamp_shingle_size(spec);
    std::unique_ptr<char[]> text(new char[detail::normalized_capacity(doc.size())]);
    detail::HashSink hs(text.get(), k, interrupt, sink, ctx);
    size_t len = 0;
    if (detail::normalize_into(doc, spec.unit, text.get(), &len, hs))
        hs.finish();
    return hs.status();
}

std::vector<std::string> distinct_shingles(std::string_view doc, const ShingleSpec &spec) {
    DistinctShingles set;
    if (distinct_shingles(doc, spec, nullptr, std::numeric_limits<size_t>::max(), &set) !=
        Status::Ok)
        throw std::length_error("document too large to shingle");
    std::vector<std::string> out;
    out.reserve(set.size());
    for (size_t i = 0; i < set.size(); ++i)
        out.emplace_back(set[i]);
    return out;
}

}  // namespace minhash
