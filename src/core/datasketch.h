// The datasketch family: what Python's datasketch.MinHash(num_perm=k, seed=s)
// computes with its defaults, reproduced bit for bit so signatures move
// between a Python ETL and the database.
//
//   element hash   sha1_hash32(b): the first 4 bytes of SHA-1(b), little-endian
//   permutations   (a_i, b_i) for i = 0..k-1, drawn in that order from NumPy's
//                  legacy RandomState(s): a_i = randint(1, p), b_i = randint(0, p),
//                  dtype uint64, p = 2^61 - 1
//   function i     h_i(x) = (((a_i·x + b_i) mod 2^64) mod p) & (2^32 - 1)
//
// The "mod 2^64" is NumPy's: a·x is a uint64 product that wraps before the
// reduction mod p, and datasketch inherits that. The empty set's value is
// 2^32 - 1, as in datasketch and the native family.
#pragma once

#include <cstddef>
#include <cstdint>

namespace minhash {

constexpr uint64_t kMersenne61 = (uint64_t(1) << 61) - 1;
// RandomState accepts integer seeds 0 .. 2^32 - 1 only.
constexpr uint64_t kMaxDatasketchSeed = UINT32_MAX;

// sha1_hash32: SHA-1 is libnettle's.
uint32_t sha1_hash32(const void *data, size_t len) noexcept;

// MT19937 as NumPy's legacy RandomState seeds and runs it: init_genrand(seed)
// (Matsumoto & Nishimura 1998), 64-bit draws as (first << 32) | second.
class Mt19937 {
  public:
    explicit Mt19937(uint32_t seed) noexcept;
    uint32_t next32() noexcept;
    uint64_t next64() noexcept;

  private:
    void twist() noexcept;
    uint32_t mt_[624];
    int pos_;
};

// RandomState.randint(low, high, dtype=np.uint64) for ranges wider than 2^32
// (legacy masked rejection sampling: draw 64 bits, keep the bits under the
// smallest all-ones mask covering high - 1 - low, retry while too large).
// Requires high - low > 2^32.
uint64_t legacy_randint_u64(Mt19937 &rng, uint64_t low, uint64_t high) noexcept;

// x mod (2^61 - 1) for any 64-bit x: 2^61 ≡ 1, so x ≡ (x >> 61) + (x & p).
inline uint64_t mod_mersenne61(uint64_t x) {
    uint64_t r = (x & kMersenne61) + (x >> 61);
    return r >= kMersenne61 ? r - kMersenne61 : r;
}

// h_i(x), the definition the datasketch kernel reproduces.
inline uint32_t datasketch_permute(uint64_t a, uint64_t b, uint64_t x) {
    return static_cast<uint32_t>(mod_mersenne61(a * x + b));
}

}  // namespace minhash
