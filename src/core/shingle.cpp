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
#include <uninorm.h>
#include <unistr.h>

#include "core/guard_impl.h"
#include "core/hash.h"
#include "core/normalize_impl.h"

namespace minhash {
namespace detail {

namespace {

// Punctuation and symbols: the characters ignore => 'punctuation' leaves out.
bool is_punctuation_or_symbol(ucs4_t uc) noexcept {
    return uc_is_general_category(uc, UC_CATEGORY_P) || uc_is_general_category(uc, UC_CATEGORY_S);
}

AsciiTables make_ascii_tables() noexcept {
    AsciiTables t{};
    for (int c = 0; c < 128; ++c) {
        const bool upper = c >= 'A' && c <= 'Z';
        const bool lower = c >= 'a' && c <= 'z';
        const bool digit = c >= '0' && c <= '9';
        t.lower[c] = static_cast<char>(upper ? c + ('a' - 'A') : c);
        t.word_class[0][c] = (upper || lower || digit) ? kToken : kSeparator;
        // Whitespace and every other control character (NUL..US, DEL) separate.
        const bool space_or_control = c <= 0x20 || c == 0x7f;
        t.char_class[0][c] = space_or_control ? kSeparator : kUnit;
        // libunistring says which bytes are punctuation (the SSE2 mask of
        // classify_ascii_block_punct is checked against this by the tests)
        const bool punct = is_punctuation_or_symbol(static_cast<ucs4_t>(c));
        t.word_class[1][c] = punct ? uint8_t{kIgnored} : t.word_class[0][c];
        t.char_class[1][c] = punct ? uint8_t{kIgnored} : t.char_class[0][c];
    }
    return t;
}

}  // namespace

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

// The class of a code point in word or character mode (ignore flags aside).
uint8_t class_of(ucs4_t uc, bool word_mode) noexcept {
    if (word_mode) {
        if (uc_is_property_alphabetic(uc) || uc_is_general_category(uc, UC_CATEGORY_Nd))
            return kToken;
        if (uc_is_general_category(uc, UC_CATEGORY_M))
            return kMark;
        return kSeparator;
    }
    return (uc_is_property_white_space(uc) || uc_is_general_category(uc, UC_CATEGORY_Cc))
               ? kSeparator
               : kUnit;
}

// The full canonical decomposition of uc into out[0..room): libunistring's
// mapping (one level, as UnicodeData.txt lists it) applied until nothing
// decomposes, which is the decomposition NFD applies. -1 if it does not fit.
int canonical_decomposition(ucs4_t uc, ucs4_t *out, int room) noexcept {
    ucs4_t level[UC_DECOMPOSITION_MAX_LENGTH];
    const int n = uc_canonical_decomposition(uc, level);
    if (n <= 0) {
        if (room < 1)
            return -1;
        out[0] = uc;
        return 1;
    }
    int total = 0;
    for (int i = 0; i < n; ++i) {
        const int m = canonical_decomposition(level[i], out + total, room - total);
        if (m < 0)
            return -1;
        total += m;
    }
    return total;
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
    const uint8_t cls = class_of(uc, word_mode);
    cp->cls = cls;
    cp->out_len = cls == kSeparator ? 0 : fold_code_point(uc, s, len, cp->out);
}

void classify_non_ascii_ignoring(const unsigned char *s, size_t n, bool word_mode, uint8_t ignore,
                                 NonAsciiPieces *cp) noexcept {
    ucs4_t uc = 0;
    const int len = u8_mbtoucr(&uc, s, n);
    if (len <= 0) {  // malformed: a separator, as in classify_non_ascii
        cp->in_len = 1;
        cp->count = 1;
        cp->piece[0].cls = kSeparator;
        cp->piece[0].out_len = 0;
        return;
    }
    cp->in_len = static_cast<uint8_t>(len);
    ucs4_t cps[kMaxPieces];
    int m = -1;
    if (ignore & kIgnoreAccents)
        m = canonical_decomposition(uc, cps, kMaxPieces);
    if (m < 0) {  // accents kept (or a decomposition too long, which Unicode has none of)
        cps[0] = uc;
        m = 1;
    }
    cp->count = 0;
    for (int i = 0; i < m; ++i) {
        const ucs4_t c = cps[i];
        if ((ignore & kIgnoreAccents) && uc_is_general_category(c, UC_CATEGORY_Mn))
            continue;
        if ((ignore & kIgnorePunctuation) && is_punctuation_or_symbol(c))
            continue;
        NonAsciiPieces::Piece &p = cp->piece[cp->count++];
        p.cls = class_of(c, word_mode);
        p.out_len = 0;
        if (p.cls == kSeparator)
            continue;
        if (c == uc) {
            p.out_len = fold_code_point(c, s, len, p.out);
        } else {
            uint8_t bytes[4];
            const int blen = u8_uctomb(bytes, c, 4);
            p.out_len = fold_code_point(c, bytes, blen, p.out);
        }
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

bool parse_ignore(std::string_view list, uint8_t *flags, std::string_view *bad) noexcept {
    auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    auto trim = [&](std::string_view s) {
        while (!s.empty() && is_space(s.front()))
            s.remove_prefix(1);
        while (!s.empty() && is_space(s.back()))
            s.remove_suffix(1);
        return s;
    };
    *flags = 0;
    if (trim(list).empty())
        return true;
    for (;;) {
        const size_t comma = list.find(',');
        const std::string_view name = trim(list.substr(0, comma));
        if (name == "accents")
            *flags |= kIgnoreAccents;
        else if (name == "punctuation")
            *flags |= kIgnorePunctuation;
        else {
            *bad = name;
            *flags = 0;
            return false;
        }
        if (comma == std::string_view::npos)
            return true;
        list.remove_prefix(comma + 1);
    }
}

const char *ignore_name(uint8_t flag) noexcept {
    switch (flag) {
        case kIgnoreAccents:
            return "accents";
        case kIgnorePunctuation:
            return "punctuation";
    }
    return nullptr;
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

NormalizedText normalize(std::string_view doc, ShingleUnit unit, NormalizePath path,
                         uint8_t ignore) {
    if (detail::too_large_to_shingle(doc.size()))
        throw std::length_error("document too large to shingle");
    NormalizedText norm;
    norm.text.resize(detail::normalized_capacity(doc.size()));
    RecordingSink sink{&norm};
    size_t len = 0;
    detail::normalize_into(doc, unit, norm.text.data(), &len, sink, path, ignore);
    norm.text.resize(len);
    return norm;
}

namespace detail {

// Polls the caller's flag; remembers why the work stopped.
class Poller {
  public:
    explicit Poller(InterruptFlag interrupt) : interrupt_(interrupt) {}
    bool poll() {
        if (status_ == Status::Ok && interrupt_ && *interrupt_)
            status_ = Status::Interrupted;
        return status_ == Status::Ok;
    }
    bool stop(Status why) {
        status_ = why;
        return false;
    }
    Status status() const { return status_; }

  private:
    InterruptFlag interrupt_;
    Status status_ = Status::Ok;
};

// Receives the shingles of a text (its window is WindowSink's) and keeps the
// new ones in an open-addressing hash table of 64-bit slots: the top 32 bits
// of the shingle's XXH3 hash, then its index + 1 (0 = empty). A table of 2^b
// slots (b ≤ 32) probes from the top b bits of the hash, which the slot
// itself keeps, so growing never rehashes any text.
class DistinctConsumer : public Poller {
  public:
    DistinctConsumer(const char *text, InterruptFlag interrupt, size_t max_bytes,
                     DistinctShingles *out)
        : Poller(interrupt), text_(text), max_bytes_(max_bytes), out_(out) {
        slots_.assign(size_t(1) << bits_, 0);
    }

    bool shingle(uint32_t start, uint32_t end) {
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

  private:
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
        if (charge > max_bytes_ - used_)
            return stop(Status::TooLarge);
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
        if (bits_ == 32)  // positions come from the 32-bit tag
            return stop(Status::TooLarge);
        ++bits_;
        std::vector<uint64_t> bigger(size_t(1) << bits_, 0);
        const size_t mask = bigger.size() - 1;
        for (size_t n = 0; n < slots_.size(); ++n) {
            if ((n & (kSlotsPerPoll - 1)) == kSlotsPerPoll - 1 && !poll())
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
    const size_t max_bytes_;
    DistinctShingles *out_;
    size_t used_ = 0;
    int bits_ = 10;
    std::vector<uint64_t> slots_;
    size_t npending_ = 0;
    Pending pending_[kBatch];
};

// Hands the hash of each shingle to the caller's sink in blocks.
class HashConsumer : public Poller {
  public:
    HashConsumer(const char *text, InterruptFlag interrupt, ShingleHashSink sink, void *ctx)
        : Poller(interrupt), text_(text), sink_(sink), ctx_(ctx) {}

    bool shingle(uint32_t start, uint32_t end) {
        block_[nblock_++] = hash_bytes(text_ + start, end - start);
        return nblock_ < kBlock || flush();
    }
    bool flush() {
        const size_t n = nblock_;
        nblock_ = 0;
        return n == 0 || sink_(ctx_, block_, n) || stop(Status::TooLarge);
    }

  private:
    static constexpr size_t kBlock = 256;

    const char *text_;
    ShingleHashSink sink_;
    void *ctx_;
    size_t nblock_ = 0;
    uint64_t block_[kBlock];
};

}  // namespace detail

namespace {

// The set of a normalized (or copied) text, owned by set: shingle(consumer)
// produces the shingles.
template <class Shingle>
Status fill_distinct(DistinctShingles *set, const char *text, InterruptFlag interrupt,
                     size_t max_bytes, Shingle &&shingle) {
    detail::DistinctConsumer consumer(text, interrupt, max_bytes, set);
    if (shingle(consumer))
        consumer.flush();
    return consumer.status();
}

}  // namespace

Status distinct_shingles(std::string_view doc, const ShingleSpec &spec, InterruptFlag interrupt,
                         size_t max_bytes, DistinctShingles *out) noexcept {
    return detail::guarded([&] {
        *out = DistinctShingles();
        if (detail::too_large_to_shingle(doc.size()))
            return Status::TooLarge;
        DistinctShingles set;
        set.text_.reset(new char[detail::normalized_capacity(doc.size())]);
        char *text = set.text_.get();
        const Status st = fill_distinct(&set, text, interrupt, max_bytes, [&](auto &consumer) {
            return detail::shingle_document(doc, spec, text, consumer);
        });
        if (st == Status::Ok)
            *out = std::move(set);
        return st;
    });
}

Status distinct_shingles(const UnitText &units, int k, InterruptFlag interrupt, size_t max_bytes,
                         DistinctShingles *out) noexcept {
    return detail::guarded([&] {
        *out = DistinctShingles();
        const size_t len = units.count == 0 ? 0 : units.ends[units.count - 1];
        DistinctShingles set;
        set.text_.reset(new char[len + 1]);
        std::memcpy(set.text_.get(), units.text, len);
        const Status st = fill_distinct(&set, set.text_.get(), interrupt, max_bytes,
                                        [&](auto &consumer) {
            return detail::shingle_units(units, k, consumer);
        });
        if (st == Status::Ok)
            *out = std::move(set);
        return st;
    });
}

namespace {

template <class Compute>
Status new_set(DistinctShingles **out, Compute &&compute) noexcept {
    *out = nullptr;
    return detail::guarded([&] {
        std::unique_ptr<DistinctShingles> set(new DistinctShingles());
        const Status st = compute(set.get());
        if (st == Status::Ok)
            *out = set.release();
        return st;
    });
}

}  // namespace

Status new_distinct_shingles(std::string_view doc, const ShingleSpec &spec,
                             InterruptFlag interrupt, size_t max_bytes,
                             DistinctShingles **out) noexcept {
    return new_set(out, [&](DistinctShingles *set) {
        return distinct_shingles(doc, spec, interrupt, max_bytes, set);
    });
}

Status new_distinct_shingles(const UnitText &units, int k, InterruptFlag interrupt,
                             size_t max_bytes, DistinctShingles **out) noexcept {
    return new_set(out, [&](DistinctShingles *set) {
        return distinct_shingles(units, k, interrupt, max_bytes, set);
    });
}

void free_distinct_shingles(DistinctShingles *set) noexcept { delete set; }

Status for_each_shingle_hash(std::string_view doc, const ShingleSpec &spec, InterruptFlag interrupt,
                             ShingleHashSink sink, void *ctx) noexcept {
    return detail::guarded([&] {
        if (detail::too_large_to_shingle(doc.size()))
            return Status::TooLarge;
        std::unique_ptr<char[]> text(new char[detail::normalized_capacity(doc.size())]);
        detail::HashConsumer consumer(text.get(), interrupt, sink, ctx);
        if (detail::shingle_document(doc, spec, text.get(), consumer))
            consumer.flush();
        return consumer.status();
    });
}

Status for_each_shingle_hash(const UnitText &units, int k, InterruptFlag interrupt,
                             ShingleHashSink sink, void *ctx) noexcept {
    return detail::guarded([&] {
        detail::HashConsumer consumer(units.text, interrupt, sink, ctx);
        if (detail::shingle_units(units, k, consumer))
            consumer.flush();
        return consumer.status();
    });
}

namespace {

// Deduplicates set->hashes[0..n) in place: sorted, distinct.
size_t sort_unique(uint64_t *h, size_t n) {
    std::sort(h, h + n);
    return static_cast<size_t>(std::unique(h, h + n) - h);
}

// The ShingleHashSink of shingle_hash_set: when the buffer fills, it is
// deduplicated and the stream goes on while enough room is left.
bool take_hashes(void *ctx, const uint64_t *hashes, size_t count) {
    auto *set = static_cast<ShingleHashSet *>(ctx);
    for (size_t i = 0; i < count; ++i) {
        if (set->count == set->cap) {
            set->count = sort_unique(set->hashes, set->count);
            if (set->count == set->cap ||
                (!set->last_try && set->count > set->cap - set->cap / 8))
                return false;
        }
        set->hashes[set->count++] = hashes[i];
    }
    return true;
}

template <class Stream>
Status hash_set(ShingleHashSet *set, Stream &&stream) {
    set->count = 0;
    const Status st = stream(take_hashes, static_cast<void *>(set));
    if (st == Status::Ok)
        set->count = sort_unique(set->hashes, set->count);
    else
        set->count = 0;
    return st;
}

}  // namespace

Status shingle_hash_set(std::string_view doc, const ShingleSpec &spec, InterruptFlag interrupt,
                        ShingleHashSet *set) noexcept {
    return hash_set(set, [&](ShingleHashSink sink, void *ctx) {
        return for_each_shingle_hash(doc, spec, interrupt, sink, ctx);
    });
}

Status shingle_hash_set(const UnitText &units, int k, InterruptFlag interrupt,
                        ShingleHashSet *set) noexcept {
    return hash_set(set, [&](ShingleHashSink sink, void *ctx) {
        return for_each_shingle_hash(units, k, interrupt, sink, ctx);
    });
}

std::vector<std::string> distinct_shingles(std::string_view doc, const ShingleSpec &spec) {
    DistinctShingles set;
    const Status st = distinct_shingles(doc, spec, nullptr, std::numeric_limits<size_t>::max(), &set);
    if (st == Status::OutOfMemory)
        throw std::bad_alloc();
    if (st != Status::Ok)
        throw std::length_error("document too large to shingle");
    std::vector<std::string> out;
    out.reserve(set.size());
    for (size_t i = 0; i < set.size(); ++i)
        out.emplace_back(set[i]);
    return out;
}

}  // namespace minhash
