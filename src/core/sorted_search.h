// Searching a sorted run of uniformly spread keys (band keys are hash values)
// from where the key should be, instead of from the middle: an index page's
// or a leaf's entries are found in a few cache lines rather than a binary
// search's ten, most of them misses once the pages are out of the CPU's
// caches. Used by the lsh index's leaves and internal levels (src/pg/lsh).
#pragma once

#include <cstdint>

namespace minhash {

// Where key likely is among n keys spread evenly over [low, high]
// (inclusive): an index in [0, n - 1]; 0 when n <= 1 or the range is empty.
inline int uniform_guess(uint32_t key, uint32_t low, uint32_t high, int n) {
    if (n <= 1 || key <= low || high < low) return 0;
    if (key >= high) return n - 1;
    const uint64_t span = uint64_t(high) - low + 1;
    const uint64_t at = uint64_t(key - low) * uint64_t(n) / span;
    return at >= uint64_t(n) ? n - 1 : int(at);
}

// The first i in [begin, end) for which before(i) is false (end if none),
// where before is true on a prefix of the range and false after it. Starts
// at guess (clamped into the range), takes doubling steps away from it until
// it passes the boundary, then bisects between the last two probes.
template <class Before>
inline int search_from_guess(int begin, int end, int guess, Before before) {
    if (begin >= end) return begin;
    int first = begin;  // before(i) for every i < first
    int last = end;     // !before(i) for every i >= last
    const int g = guess < begin ? begin : (guess >= end ? end - 1 : guess);
    if (before(g)) {
        first = g + 1;
        for (int step = 1; first < last; step *= 2) {
            const int at = g + step;
            if (at >= end) break;
            if (!before(at)) {
                last = at;
                break;
            }
            first = at + 1;
        }
    } else {
        last = g;
        for (int step = 1; first < last; step *= 2) {
            const int at = g - step;
            if (at < begin) break;
            if (before(at)) {
                first = at + 1;
                break;
            }
            last = at;
        }
    }
    while (first < last) {
        const int mid = first + (last - first) / 2;
        if (before(mid))
            first = mid + 1;
        else
            last = mid;
    }
    return first;
}

}  // namespace minhash
