// Which native update kernel signature_update calls (signature.h, SimdLevel).
//
// One process-wide choice, made once at start-up from the CPU (or the
// environment variable MINHASH_SIMD) and changed by simd_use: an atomic
// pointer, read with relaxed order on every block of hashes (the kernels
// compute the same bits, so a thread that still sees the old one computes
// the same signature). It exists so that one machine can measure every
// kernel, e.g. the AVX2 one on a host that also has AVX-512.
#include <atomic>
#include <cstdlib>

#include "core/signature.h"
#include "core/signature_impl.h"

namespace minhash {

namespace {

detail::UpdateFn kernel_for(SimdLevel level) {
    switch (level) {
    case SimdLevel::Avx512:
        return detail::signature_update_avx512;
    case SimdLevel::Avx2:
        return detail::signature_update_avx2;
    case SimdLevel::Portable:
        break;
    }
    return detail::signature_update_portable;
}

// The widest level <= wanted that this CPU runs.
SimdLevel capped(SimdLevel wanted) {
    const SimdLevel best = simd_best();
    return static_cast<uint8_t>(wanted) < static_cast<uint8_t>(best) ? wanted : best;
}

struct Choice {
    std::atomic<detail::UpdateFn> kernel;
    std::atomic<SimdLevel> level;
    Choice() : kernel(kernel_for(simd_default())), level(simd_default()) {}
};

Choice &choice() {
    static Choice c;  // thread-safe initialisation (C++11)
    return c;
}

}  // namespace

SimdLevel simd_best() noexcept {
    static const SimdLevel best = detail::cpu_has_avx512() ? SimdLevel::Avx512
                                  : detail::cpu_has_avx2() ? SimdLevel::Avx2
                                                           : SimdLevel::Portable;
    return best;
}

SimdLevel simd_default() noexcept {
    static const SimdLevel level = [] {
        SimdLevel wanted = SimdLevel::Avx512;
        const char *env = std::getenv("MINHASH_SIMD");
        if (env == nullptr || !parse_simd_level(env, &wanted))
            wanted = SimdLevel::Avx512;
        return capped(wanted);
    }();
    return level;
}

SimdLevel simd_use(SimdLevel level) noexcept {
    const SimdLevel use = capped(level);
    Choice &c = choice();
    c.kernel.store(kernel_for(use), std::memory_order_relaxed);
    c.level.store(use, std::memory_order_relaxed);
    return use;
}

SimdLevel simd_in_use() noexcept { return choice().level.load(std::memory_order_relaxed); }

bool parse_simd_level(std::string_view name, SimdLevel *out) noexcept {
    if (name == "portable")
        *out = SimdLevel::Portable;
    else if (name == "avx2")
        *out = SimdLevel::Avx2;
    else if (name == "avx512")
        *out = SimdLevel::Avx512;
    else
        return false;
    return true;
}

const char *simd_level_name(SimdLevel level) noexcept {
    switch (level) {
    case SimdLevel::Avx512:
        return "avx512";
    case SimdLevel::Avx2:
        return "avx2";
    case SimdLevel::Portable:
        break;
    }
    return "portable";
}

namespace detail {

UpdateFn native_kernel() noexcept { return choice().kernel.load(std::memory_order_relaxed); }

}  // namespace detail
}  // namespace minhash
