// The signature kernels, exposed to the tests so they can check that every
// kernel computes the same bits. Private to src/core: not part of the API.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hash.h"
#include "core/signature.h"

namespace minhash {
namespace detail {

// h_i(x), the definition every kernel must reproduce bit for bit.
inline uint32_t permute(uint64_t a, uint64_t b, uint32_t x) {
    return static_cast<uint32_t>((a * x + b) >> 32);
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

}  // namespace detail
}  // namespace minhash
