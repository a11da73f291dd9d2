// The shingle window: the one place that decides which units form a shingle.
//
// Units (words, code points, lexemes) arrive one at a time as byte ranges of a
// text in which they appear in order. A shingle is k consecutive units: the
// bytes from the first unit's start to the last unit's end, so it is hashed
// in place without building a string. A text with fewer than k units (but at
// least one) is one shingle, all of it, so short texts still compare; a text
// without units has no shingle.
//
// Every path that shingles -- signatures, minhash_shingles, exact
// verification, text search lexemes, the tests' recorded normalization --
// goes through this class. It holds the starts of the last k units in a ring,
// so a shingle is complete the moment its last unit is: memory is O(k),
// whatever the document's length. Trivially destructible.
#pragma once

#include <cstddef>
#include <cstdint>

namespace minhash {

constexpr int kMaxShingleSize = 256;

class ShingleWindow {
  public:
    // k in 1..kMaxShingleSize (clamp_shingle_size gives one).
    explicit ShingleWindow(int k) noexcept : k_(k) {}

    // The unit [start, end) is complete. Returns true when it completes a
    // shingle, which is then [*first, end).
    bool push(uint32_t start, uint32_t end, uint32_t *first) noexcept {
        if (count_ == 0)
            first_start_ = start;
        ring_[pos_] = start;
        pos_ = pos_ + 1 == k_ ? 0 : pos_ + 1;
        ++count_;
        last_end_ = end;
        if (count_ < static_cast<uint64_t>(k_))
            return false;
        *first = ring_[pos_];  // the start of unit count_ - k
        return true;
    }

    // After the last unit: true if the text had 1..k-1 units, which form one
    // shingle [*first, *end).
    bool short_text(uint32_t *first, uint32_t *end) const noexcept {
        if (count_ == 0 || count_ >= static_cast<uint64_t>(k_))
            return false;
        *first = first_start_;
        *end = last_end_;
        return true;
    }

    uint64_t units() const noexcept { return count_; }

  private:
    int k_;
    int pos_ = 0;
    uint64_t count_ = 0;
    uint32_t first_start_ = 0;
    uint32_t last_end_ = 0;
    uint32_t ring_[kMaxShingleSize];
};

// A text already split into units (the lexemes of a text search
// configuration): unit i is text[starts[i], ends[i]), in order.
struct UnitText {
    const char *text;
    const uint32_t *starts;
    const uint32_t *ends;
    size_t count;
};

}  // namespace minhash
