// Shingle/element hashing and LSH band hashing, both XXH3-64 (libxxhash).
// XXH3's output is specified and stable since xxHash 0.8.0, and it is
// computed byte-wise in little-endian order, so hashes (and with them every
// signature) are identical across runs and machines.
#include "core/hash.h"

#include <cstring>

#include <xxhash.h>

namespace minhash {

uint64_t hash_bytes(const void *data, size_t len) noexcept { return XXH3_64bits(data, len); }

uint64_t band_hash(const uint32_t *values, int rows, int band) noexcept {
    if (rows <= 0)
        return XXH3_64bits_withSeed(nullptr, 0, static_cast<uint64_t>(band));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    // Hash the little-endian bytes so band hashes agree across architectures.
    XXH3_state_t state;
    XXH3_64bits_reset_withSeed(&state, static_cast<uint64_t>(band));
    for (int i = 0; i < rows; ++i) {
        const uint32_t v = __builtin_bswap32(values[i]);
        XXH3_64bits_update(&state, &v, sizeof v);
    }
    return XXH3_64bits_digest(&state);
#else
    return XXH3_64bits_withSeed(values, sizeof(uint32_t) * static_cast<size_t>(rows),
                                static_cast<uint64_t>(band));
#endif
}

}  // namespace minhash
