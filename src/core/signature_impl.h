// The signature kernels, exposed to the tests so they can check that every
// kernel computes the same bits. Private to src/core: not part of the API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/hash.h"
#include "core/signature.h"

namespace minhash {
namespace detail {

// h_i(x), the definition every kernel must reproduce bit for bit.
inline uint32_t permute(uint64_t a, uint64_t b, uint32_t x) {
    return static_cast<uint32_t>((a * x + b) >> 32);
}

// How the vector kernels walk the keys: passes over the signature for 16
// keys at a time amortise its loads and stores best; the tail (an aggregate
// adds one element per call) takes one block of 16, 8, 4, 2 or 1 keys, so
// padding a short block wastes at most as much work as is done.
// block(std::integral_constant<size_t, NB>{}, keys, m) runs one pass over
// m <= NB keys.
template <typename Block>
inline void for_each_key_block(const uint64_t *hashes, size_t n, Block &&block) {
    using std::integral_constant;
    size_t done = 0;
    for (; n - done >= 16; done += 16)
        block(integral_constant<size_t, 16>{}, hashes + done, size_t{16});
    const size_t rest = n - done;
    if (rest > 8)
        block(integral_constant<size_t, 16>{}, hashes + done, rest);
    else if (rest > 4)
        block(integral_constant<size_t, 8>{}, hashes + done, rest);
    else if (rest > 2)
        block(integral_constant<size_t, 4>{}, hashes + done, rest);
    else if (rest == 2)
        block(integral_constant<size_t, 2>{}, hashes + done, rest);
    else if (rest == 1)
        block(integral_constant<size_t, 1>{}, hashes + done, rest);
}

// Plain C++ kernel (any architecture).
void signature_update_portable(const PermutationFamily &family, const uint64_t *hashes, size_t n,
                               uint32_t *sig) noexcept;

// The datasketch family's kernel (datasketch.h), any architecture.
void signature_update_datasketch(const PermutationFamily &family, const uint64_t *hashes,
                                 size_t n, uint32_t *sig) noexcept;

// AVX2 kernel; call only when cpu_has_avx2().
bool cpu_has_avx2() noexcept;
void signature_update_avx2(const PermutationFamily &family, const uint64_t *hashes, size_t n,
                           uint32_t *sig) noexcept;

// AVX-512 (F + DQ) kernel; call only when cpu_has_avx512().
bool cpu_has_avx512() noexcept;
void signature_update_avx512(const PermutationFamily &family, const uint64_t *hashes, size_t n,
                             uint32_t *sig) noexcept;

// The native kernel signature_update calls now (signature_dispatch.cpp).
using UpdateFn = void (*)(const PermutationFamily &, const uint64_t *, size_t, uint32_t *) noexcept;
UpdateFn native_kernel() noexcept;

}  // namespace detail
}  // namespace minhash
