// One-permutation hashing with optimal densification (oph.h).
#include "core/oph.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/guard_impl.h"
#include "core/normalize_impl.h"
#include "core/signature.h"

// Unit hashes are XXH3-64 of a few bytes each, in the hot loop: inline, as
// signature.cpp does for shingles.
#define XXH_INLINE_ALL
#include <xxhash.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace minhash {

namespace {

// The polynomial's base: odd, and P − 1 has a single factor 2 (P ≡ 3 mod 4),
// so two windows that differ by swapping two units collide only if those
// units' hashes agree in 63 bits.
constexpr uint64_t kBase = 0x9E3779B97F4A7C17ULL;

// A bijective 64-bit finaliser (splitmix64's), so bins and values come from
// well-mixed bits even where the element hash is a polynomial.
inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Bin of a mixed hash: the top 32 bits scaled to [0, k) (Lemire's
// multiply-shift range reduction, no division); the value is the low 32 bits.
inline uint32_t bin_of(uint64_t mixed, int k) {
    return static_cast<uint32_t>(((mixed >> 32) * static_cast<uint64_t>(k)) >> 32);
}

int clamp_bins(int k) { return std::clamp(k, kMinNumPerm, kMaxNumPerm); }

uint64_t power(uint64_t base, int e) {
    uint64_t r = 1;
    while (e-- > 0)
        r *= base;
    return r;
}

}  // namespace

void init_oph_family(OphFamily *family, int num_bins, uint64_t seed) noexcept {
    family->num_bins = clamp_bins(num_bins);
    family->seed = seed;
    family->key = mix64(seed + 0x4F50482D4F5048ULL);  // "OPH-OPH": not native's a_0
}

namespace {

// Units of up to 16 bytes -- every code point, nearly every word -- are
// hashed by one 64x64-bit multiplication of their two zero-padded halves,
// with no branch on the length: XXH3 picks one of four code paths by length,
// and words of mixed lengths mispredicted that choice often enough to cost
// more than the hash itself (perf, core_bench BM_OphText). Both constants
// have a zero low byte and no other: a unit without NUL bytes has a nonzero
// first byte, and a nonzero ninth byte when it has one, so neither factor
// is ever zero (a zero factor would map every unit sharing it to 0).
constexpr uint64_t kUnitLo = 0x8F3A5C7E91D2B400ULL;
constexpr uint64_t kUnitHi = 0xC4E1B7A3569D2F00ULL;
constexpr size_t kShortUnit = 16;

inline uint64_t short_unit_hash(uint64_t lo, uint64_t hi, size_t len) {
    const uint64_t a = lo ^ kUnitLo;
    const uint64_t b = hi ^ kUnitHi ^ (static_cast<uint64_t>(len) << 56);
#if defined(__SIZEOF_INT128__)
    const unsigned __int128 m = static_cast<unsigned __int128>(a) * b;
    return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
#else
    return detail::fold_product_by_halves(a, b);
#endif
}

inline uint64_t load_le64(const unsigned char *p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

// oph_unit_hash for a unit followed by at least 16 readable bytes (the
// normalizer's buffer has that slack): one unaligned load, the bytes past
// the unit masked off, so no copy and no branch on the length.
inline uint64_t unit_hash_padded(const char *data, size_t len) {
#if defined(__SSE2__)
    // 16 bytes from kKeep + 16 - len: len bytes 0xFF, then zeros
    alignas(16) static constexpr unsigned char kKeep[2 * kShortUnit] = {
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    if (len > kShortUnit)
        return oph_unit_hash(data, len);
    const __m128i keep = _mm_loadu_si128(reinterpret_cast<const __m128i *>(kKeep + kShortUnit - len));
    const __m128i v = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i *>(data)), keep);
    return short_unit_hash(static_cast<uint64_t>(_mm_cvtsi128_si64(v)),
                           static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v))), len);
#else
    return oph_unit_hash(data, len);
#endif
}

}  // namespace

namespace detail {

uint64_t fold_product_by_halves(uint64_t a, uint64_t b) noexcept {
    const uint64_t ll = (a & 0xFFFFFFFFu) * (b & 0xFFFFFFFFu);
    const uint64_t lh = (a & 0xFFFFFFFFu) * (b >> 32);
    const uint64_t hl = (a >> 32) * (b & 0xFFFFFFFFu);
    const uint64_t hh = (a >> 32) * (b >> 32);
    const uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFu) + (hl & 0xFFFFFFFFu);  // < 3·2^32
    const uint64_t low = (mid << 32) | (ll & 0xFFFFFFFFu);
    const uint64_t high = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return low ^ high;
}

}  // namespace detail

uint64_t oph_unit_hash(const void *data, size_t len) noexcept {
    if (len > kShortUnit)
        return XXH3_64bits(data, len);
    unsigned char padded[kShortUnit] = {};
    std::memcpy(padded, data, len);
    return short_unit_hash(load_le64(padded), load_le64(padded + 8), len);
}

uint64_t oph_combine(const uint64_t *unit_hashes, size_t m) noexcept {
    uint64_t h = 0;
    for (size_t j = 0; j < m; ++j)
        h = h * kBase + unit_hashes[j];
    return h;
}

std::vector<uint64_t> oph_element_hashes(const NormalizedText &norm, int k) {
    const size_t n = norm.starts.size();
    const size_t kk = static_cast<size_t>(std::clamp(k, 1, kMaxShingleSize));
    std::vector<uint64_t> units(n), elements;
    for (size_t i = 0; i < n; ++i)
        units[i] = oph_unit_hash(norm.text.data() + norm.starts[i], norm.ends[i] - norm.starts[i]);
    if (n > 0 && n < kk)
        elements.push_back(oph_combine(units.data(), n));
    for (size_t i = 0; n >= kk && i + kk <= n; ++i)
        elements.push_back(oph_combine(units.data() + i, kk));
    return elements;
}

void oph_update(const OphFamily &family, const uint64_t *hashes, size_t n,
                uint32_t *sketch) noexcept {
    const int k = clamp_bins(family.num_bins);
    for (size_t j = 0; j < n; ++j) {
        const uint64_t z = mix64(hashes[j] ^ family.key);
        uint32_t &slot = sketch[bin_of(z, k)];
        slot = std::min(slot, static_cast<uint32_t>(z));
    }
}

namespace {

// Bin i's probe sequence: attempt a (1, 2, ...) lands on bin_of(probe(i, a)),
// uniform over the bins and fixed by (seed, i, a) alone, not by the set.
// After 64·k attempts (probability < e^-64 with one filled bin) the next
// filled bin in order stands in, so every path is bounded whatever the hash
// does.
inline uint64_t probe(const OphFamily &family, int i, uint32_t attempt) {
    return mix64(family.key ^ (uint64_t(uint32_t(i)) << 32 | attempt));
}

inline uint32_t max_attempts(int k) { return 64u * static_cast<uint32_t>(k); }

int next_filled_in_order(const bool *empty, int k, int i) {
    for (int j = (i + 1) % k;; j = (j + 1) % k)
        if (!empty[j])
            return j;
}

// Optimal densification's donor of empty bin i: the first bin of i's probe
// sequence that is filled. About k / filled hashes.
int donor_by_probing(const OphFamily &family, const bool *empty, int k, int i) {
    for (uint32_t attempt = 1; attempt <= max_attempts(k); ++attempt) {
        const uint32_t j = bin_of(probe(family, i, attempt), k);
        if (!empty[j])
            return static_cast<int>(j);
    }
    return next_filled_in_order(empty, k, i);
}

// The same donors from a table of first arrivals: arrival[j·k + i] = the
// first attempt of bin i's sequence that lands on bin j (kNever if none
// within the bound). Each empty bin's donor is the filled bin that arrives
// first, so one pass over a filled bin's row of arrivals for all bins at
// once keeps the earliest (a vectorised minimum of (arrival << 8 | bin)):
// filled · k / 4 vector steps instead of about k / filled hashes per empty
// bin, which pays while fewer than about k / 8 bins are filled (short texts,
// small arrays: at k = 128 and 3 filled bins, 14 µs of CPU become 0.8;
// BM_OphDensify). The table costs about k² ln k hashes to build, once per
// family, and 2k² bytes (k ≤ kTableMaxBins: at most 128 kB).
constexpr int kTableMaxBins = 256;
constexpr uint32_t kNever = 0xFFFF;
static_assert(64u * kTableMaxBins < kNever && kTableMaxBins <= 256, "attempts fit 16 bits, bins 8");

struct FirstArrivals {
    uint64_t key;
    int k;
    uint16_t arrival[kTableMaxBins * kTableMaxBins];
};

// One table per process, in static storage (untouched, so unpaid for, until
// used). A thread takes it with a try-lock and builds it for its family if
// another one is there; a thread that finds it taken densifies by probing.
// So the server (one thread) always reads it, and threads of one process
// (the Python package signs with the GIL released) never wait and never see
// a half-built table. No thread_local: a dlopen'ed library's TLS costs a
// __tls_get_addr call per access, or a slot of the static TLS that other
// libraries may have used up.
FirstArrivals g_table;
std::atomic<bool> g_table_busy{false};

class TableLease {
  public:
    TableLease() : held_(!g_table_busy.exchange(true, std::memory_order_acquire)) {}
    ~TableLease() {
        if (held_)
            g_table_busy.store(false, std::memory_order_release);
    }
    TableLease(const TableLease &) = delete;
    TableLease &operator=(const TableLease &) = delete;
    bool held() const { return held_; }

  private:
    bool held_;
};

// The table for family, built if it holds another one (the lease held).
const uint16_t *first_arrivals(const OphFamily &family, int k) {
    FirstArrivals *t = &g_table;
    if (t->k == k && t->key == family.key)
        return t->arrival;
    t->k = 0;  // a build is whole or absent
    std::fill(t->arrival, t->arrival + k * k, static_cast<uint16_t>(kNever));
    for (int i = 0; i < k; ++i) {
        int seen = 0;
        for (uint32_t attempt = 1; attempt <= max_attempts(k) && seen < k; ++attempt) {
            uint16_t &cell = t->arrival[bin_of(probe(family, i, attempt), k) * k + i];
            if (cell == kNever) {
                cell = static_cast<uint16_t>(attempt);
                ++seen;
            }
        }
    }
    t->key = family.key;
    t->k = k;
    return t->arrival;
}

bool table_pays(int k, int filled) { return k <= kTableMaxBins && 8 * filled < k; }

// donor[i] for every bin: the filled bin arriving first in bin i's sequence
// (meaningful for empty bins only).
void donors_by_table(const uint16_t *arrival, const int *filled, int nfilled, const bool *empty,
                     int k, int *donor) {
    // (arrival << 8 | bin) < 2^24: signed 32-bit minima, which SSE2 has
    // (pcmpgtd), where unsigned ones need SSE4.1
    int32_t best[kTableMaxBins];
    std::fill(best, best + k, INT32_MAX);
    for (int f = 0; f < nfilled; ++f) {
        const uint16_t *row = arrival + filled[f] * k;
        const int32_t bin = filled[f];
        for (int i = 0; i < k; ++i)
            best[i] = std::min(best[i], int32_t{row[i]} << 8 | bin);
    }
    for (int i = 0; i < k; ++i)
        donor[i] = static_cast<uint32_t>(best[i] >> 8) != kNever ? best[i] & 0xFF
                                                                : next_filled_in_order(empty, k, i);
}

// Densification by the definition (probing), or through the table of first
// arrivals where it pays and may_use_table.
void densify(const OphFamily &family, const uint32_t *sketch, uint32_t *sig, bool may_use_table) noexcept {
    const int k = clamp_bins(family.num_bins);
    // Which bins are empty, decided before any is filled (sig may alias sketch).
    bool empty[kMaxNumPerm];
    int filled[kMaxNumPerm];
    int nfilled = 0;
    for (int i = 0; i < k; ++i) {
        empty[i] = sketch[i] == kEmptyValue;
        if (!empty[i])
            filled[nfilled++] = i;
    }
    if (nfilled == 0 || nfilled == k) {
        if (sig != sketch)
            std::copy(sketch, sketch + k, sig);
        return;
    }
    uint32_t donor_value[kMaxNumPerm];
    std::copy(sketch, sketch + k, donor_value);
    // each empty bin's donor: from the table where it pays (and this thread
    // holds it), else by probing
    int donor[kMaxNumPerm];
    bool by_table = false;
    if (may_use_table && table_pays(k, nfilled)) {
        const TableLease lease;
        if (lease.held()) {
            donors_by_table(first_arrivals(family, k), filled, nfilled, empty, k, donor);
            by_table = true;
        }
    }
    for (int i = 0; !by_table && i < k; ++i)
        if (empty[i])
            donor[i] = donor_by_probing(family, empty, k, i);
    for (int i = 0; i < k; ++i)
        sig[i] = donor_value[empty[i] ? donor[i] : i];
}

}  // namespace

void oph_densify(const OphFamily &family, const uint32_t *sketch, uint32_t *sig) noexcept {
    densify(family, sketch, sig, true);
}

namespace detail {

void oph_densify_by_probing(const OphFamily &family, const uint32_t *sketch, uint32_t *sig) noexcept {
    densify(family, sketch, sig, false);
}

}  // namespace detail

namespace {

// Receives units from the normalizer, hashes each once, keeps the last k
// unit hashes in a ring and the window's polynomial rolled in O(1): adding a
// unit multiplies by P and adds its hash; the unit leaving the window takes
// its hash times P^(k-1) with it. Complete windows' element hashes go into
// the sketch a block at a time.
// A unit is hashed the moment the normalizer reports it. With padded (text
// has 16 readable bytes past every unit's start: the normalizer's buffer)
// the hash reads the 16 bytes the normalizer has just stored at the unit's
// start, which the CPU forwards from that store; remembering units and
// hashing them a block later, as SignatureConsumer must for shingles
// spanning several stores, cost 10% more here (core_bench BM_OphText).
// Units from a caller's buffer (lexemes) are copied first (oph_unit_hash).
class OphSink {
  public:
    OphSink(const OphFamily &family, const char *text, bool padded, int k, uint32_t *sketch,
            InterruptFlag interrupt)
        : family_(family), text_(text), padded_(padded), k_(k), top_(power(kBase, k - 1)),
          sketch_(sketch), interrupt_(interrupt) {}

    bool unit(uint32_t start, uint32_t end) {
        const char *unit = text_ + start;
        const uint64_t u = padded_ ? unit_hash_padded(unit, end - start)
                                   : oph_unit_hash(unit, end - start);
        if (count_ >= static_cast<uint64_t>(k_))
            window_ -= ring_[pos_] * top_;
        window_ = window_ * kBase + u;
        ring_[pos_] = u;
        pos_ = pos_ + 1 == k_ ? 0 : pos_ + 1;
        if (++count_ >= static_cast<uint64_t>(k_)) {
            hashes_[nhashes_] = window_;
            if (++nhashes_ == kBlock) {
                flush();
                tick();
            }
        }
        return !interrupted_;
    }

    bool tick() {
        if (interrupt_ && *interrupt_)
            interrupted_ = true;
        return !interrupted_;
    }

    // A text with fewer than k units is one shingle: all of it, which is
    // the polynomial rolled so far (no unit has left the window).
    void finish() {
        flush();
        if (count_ > 0 && count_ < static_cast<uint64_t>(k_))
            oph_update(family_, &window_, 1, sketch_);
    }

    bool interrupted() const { return interrupted_; }

  private:
    static constexpr size_t kBlock = 64;

    void flush() {
        oph_update(family_, hashes_, nhashes_, sketch_);
        nhashes_ = 0;
    }

    const OphFamily &family_;
    const char *text_;
    const bool padded_;
    const int k_;
    const uint64_t top_;  // P^(k-1)
    uint32_t *sketch_;
    InterruptFlag interrupt_;
    bool interrupted_ = false;
    int pos_ = 0;
    uint64_t count_ = 0;
    uint64_t window_ = 0;
    size_t nhashes_ = 0;
    uint64_t hashes_[kBlock];
    uint64_t ring_[kMaxShingleSize];
};

}  // namespace

Status oph_sketch_of_text(const OphFamily &family, std::string_view doc, const ShingleSpec &spec,
                          uint32_t *sketch, InterruptFlag interrupt) noexcept {
    return detail::guarded([&] {
        if (detail::too_large_to_shingle(doc.size()))
            return Status::TooLarge;
        const int k = clamp_shingle_size(spec);
        // the normalized text on the stack for documents of a few KB, as signature_of_text
        char local[detail::kStackText];
        std::unique_ptr<char[]> heap;
        char *text = local;
        if (detail::normalized_capacity(doc.size()) > sizeof local) {
            heap.reset(new char[detail::normalized_capacity(doc.size())]);
            text = heap.get();
        }
        // normalized_capacity leaves 32 bytes past the longest normalized text
        OphSink sink(family, text, true, k, sketch, interrupt);
        size_t len = 0;
        if (!detail::normalize_into(doc, spec.unit, text, &len, sink, NormalizePath::Fast,
                                    spec.ignore))
            return Status::Interrupted;
        sink.finish();
        return sink.interrupted() ? Status::Interrupted : Status::Ok;
    });
}

Status oph_sketch_of_units(const OphFamily &family, const UnitText &units, int k,
                           uint32_t *sketch, InterruptFlag interrupt) noexcept {
    const int kk = std::clamp(k, 1, kMaxShingleSize);
    OphSink sink(family, units.text, false, kk, sketch, interrupt);
    for (size_t i = 0; i < units.count; ++i) {
        if (!sink.unit(units.starts[i], units.ends[i]))
            return Status::Interrupted;
    }
    sink.finish();
    return sink.interrupted() ? Status::Interrupted : Status::Ok;
}

double oph_cardinality_estimate(const uint32_t *sketch, int num_bins) noexcept {
    const int k = clamp_bins(num_bins);
    int empty = 0;
    double sum = 0.0;
    for (int i = 0; i < k; ++i) {
        if (sketch[i] == kEmptyValue)
            ++empty;
        else
            sum += (static_cast<double>(sketch[i]) + 0.5) / 4294967296.0;
    }
    if (empty == k)
        return 0.0;
    if (empty > 0)
        return k * std::log(static_cast<double>(k) / empty);
    return std::max(0.0, k * (k / sum - 1.0));
}

}  // namespace minhash
