#include "gen/zipf.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace gen {

namespace {

// Pronounceable pseudo-words: consonant-vowel syllables. Common ranks get
// short words, as in real languages, so the byte length of a document is
// realistic (about 5-6 bytes per word including the space).
std::string make_word(Rng &rng, int rank) {
    static const char *const onsets[] = {"b", "c", "d", "f", "g", "h", "j", "k", "l", "m",
                                         "n", "p", "r", "s", "t", "v", "w", "z", "st", "tr",
                                         "ch", "sh", "th", "br", "pl", "gr"};
    static const char *const vowels[] = {"a", "e", "i", "o", "u", "ai", "ou", "ea", "y"};
    const int syllables = rank < 100 ? 1 : rank < 3000 ? 2 : rank < 20000 ? 3 : 4;
    std::string w;
    for (int s = 0; s < syllables; ++s) {
        w += onsets[rng.range(0, 25)];
        w += vowels[rng.range(0, 8)];
    }
    if (rng.chance(0.4)) w += "nrstlm"[rng.range(0, 5)];
    return w;
}

}  // namespace

Vocabulary::Vocabulary(int size, double exponent, uint64_t seed) {
    Rng rng(seed);
    std::unordered_set<std::string> seen;
    words_.reserve(size);
    while (static_cast<int>(words_.size()) < size) {
        std::string w = make_word(rng, static_cast<int>(words_.size()));
        if (seen.insert(w).second) words_.push_back(std::move(w));
    }
    cdf_.resize(size);
    double total = 0;
    for (int i = 0; i < size; ++i) {
        total += 1.0 / std::pow(i + 1.0, exponent);
        cdf_[i] = total;
    }
    for (double &c : cdf_) c /= total;
}

int Vocabulary::draw_rank(Rng &rng) const {
    const double u = rng.uniform();
    const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
    return it == cdf_.end() ? static_cast<int>(cdf_.size()) - 1 : static_cast<int>(it - cdf_.begin());
}

}  // namespace gen
