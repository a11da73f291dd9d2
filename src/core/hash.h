// Shingle and element hashing: 64-bit XXH3 (libxxhash), seed 0, over the
// shingle's UTF-8 bytes. The same function hashes array elements (their text
// form), so minhash(doc) equals minhash(minhash_shingles(doc)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace minhash {

uint64_t hash_bytes(const void *data, size_t len) noexcept;
inline uint64_t hash_bytes(std::string_view s) noexcept { return hash_bytes(s.data(), s.size()); }

// One 64-bit hash per LSH band: XXH3 of the band's r values (little-endian
// uint32) seeded with the band index, so equal values in different bands
// do not collide.
uint64_t band_hash(const uint32_t *values, int rows, int band) noexcept;

// XXH3's 64 bits folded to 32 (high half XOR low half): the key the
// permutations of the native family are applied to, and the band key of a
// version-1 (minhash 1.0) lsh index. One definition: both are on disk.
inline uint32_t fold64(uint64_t h) noexcept { return static_cast<uint32_t>(h ^ (h >> 32)); }

}  // namespace minhash
