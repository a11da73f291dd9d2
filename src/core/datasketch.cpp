// datasketch's hash and permutations (see datasketch.h for the definitions).
// MT19937 and NumPy's legacy bounded sampling are written here from their
// published descriptions; only SHA-1 comes from a library (libnettle).
#include "core/datasketch.h"

#include <nettle/sha1.h>

namespace minhash {

uint32_t sha1_hash32(const void *data, size_t len) noexcept {
    struct sha1_ctx ctx;
    uint8_t digest[SHA1_DIGEST_SIZE];
    sha1_init(&ctx);
    sha1_update(&ctx, len, static_cast<const uint8_t *>(data));
    sha1_digest(&ctx, sizeof digest, digest);
    return uint32_t(digest[0]) | uint32_t(digest[1]) << 8 | uint32_t(digest[2]) << 16 |
           uint32_t(digest[3]) << 24;
}

Mt19937::Mt19937(uint32_t seed) noexcept {
    mt_[0] = seed;
    for (uint32_t i = 1; i < 624; ++i)
        mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + i;
    pos_ = 624;
}

void Mt19937::twist() noexcept {
    constexpr uint32_t kUpper = 0x80000000u, kLower = 0x7fffffffu, kMatrixA = 0x9908b0dfu;
    for (int i = 0; i < 624; ++i) {
        const uint32_t y = (mt_[i] & kUpper) | (mt_[(i + 1) % 624] & kLower);
        mt_[i] = mt_[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
    }
    pos_ = 0;
}

uint32_t Mt19937::next32() noexcept {
    if (pos_ >= 624)
        twist();
    uint32_t y = mt_[pos_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

uint64_t Mt19937::next64() noexcept {
    const uint64_t hi = next32();
    const uint64_t lo = next32();
    return hi << 32 | lo;
}

uint64_t legacy_randint_u64(Mt19937 &rng, uint64_t low, uint64_t high) noexcept {
    const uint64_t range = high - 1 - low;  // the largest offset allowed
    uint64_t mask = range;
    for (int s = 1; s < 64; s <<= 1)
        mask |= mask >> s;
    uint64_t v;
    do {
        v = rng.next64() & mask;
    } while (v > range);
    return low + v;
}

}  // namespace minhash
