// A Zipf-distributed vocabulary of made-up words.
//
// Rank i (1-based) is drawn with probability proportional to 1/i^s, as word
// frequencies in natural text roughly are; s = 1.0 over 50,000 words gives
// the few very common words and the long tail of rare ones that make
// unrelated documents share almost no 5-word shingles while still sharing
// most single words.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gen/rng.h"

namespace gen {

class Vocabulary {
public:
    Vocabulary(int size, double exponent, uint64_t seed);

    // A Zipf rank in [0, size).
    int draw_rank(Rng &rng) const;
    const std::string &word(int rank) const { return words_[rank]; }
    int size() const { return static_cast<int>(words_.size()); }

private:
    std::vector<std::string> words_;
    std::vector<double> cdf_;
};

}  // namespace gen
