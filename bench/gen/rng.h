// A small deterministic PRNG (xoshiro256**, seeded by splitmix64).
//
// Why not <random>: the standard distributions are not specified bit for bit,
// so std::uniform_int_distribution may give other numbers with another
// libstdc++. The benchmark corpus must be the same on every machine, so the
// generator draws only through these functions.
#pragma once

#include <cstdint>

namespace gen {

class Rng {
public:
    explicit Rng(uint64_t seed) {
        for (auto &w : s_) w = splitmix(seed);
    }

    uint64_t next() {
        const uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    // Uniform integer in [lo, hi]; the modulo bias (< 2^-40 here) is irrelevant
    // for a corpus, determinism is what matters.
    int64_t range(int64_t lo, int64_t hi) {
        return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
    }

    bool chance(double p) { return uniform() < p; }

    // Fisher-Yates, so permutations do not depend on std::shuffle's algorithm.
    template <class It>
    void shuffle(It first, It last) {
        const int64_t n = last - first;
        for (int64_t i = n - 1; i > 0; --i) {
            const int64_t j = range(0, i);
            auto tmp = first[i];
            first[i] = first[j];
            first[j] = tmp;
        }
    }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static uint64_t splitmix(uint64_t &x) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    uint64_t s_[4];
};

}  // namespace gen
