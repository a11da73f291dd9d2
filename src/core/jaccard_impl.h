// The exact Jaccard of element lists with its polling made explicit, so the
// tests can interrupt it at every point it polls. Private to src/core.
#pragma once

#include <cstddef>

#include "core/jaccard.h"

namespace minhash {
namespace detail {

// Returns true when the work should stop (the interrupt flag is set).
using PollFn = bool (*)(void *context);

struct ExactJaccardTuning {
    size_t run;         // elements per std::sort call before the merge passes
    size_t poll_every;  // elements (or byte comparisons) between polls, a power of 2
};

// The production tuning: a run of 2^14 elements sorts in well under a
// millisecond, and 2^16 merged elements take about as long.
constexpr ExactJaccardTuning kExactJaccardTuning = {size_t(1) << 14, size_t(1) << 16};

Status jaccard_exact_polled(HashedElement *a, size_t na, HashedElement *b, size_t nb,
                            HashedElement *scratch, PollFn poll, void *context,
                            const ExactJaccardTuning &tuning, double *result) noexcept;

}  // namespace detail
}  // namespace minhash
