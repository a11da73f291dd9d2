// The core's side of the C++/PostgreSQL seam: an entry point the glue calls
// is noexcept and runs its body through guarded(), which turns any exception
// into a Status. Private to src/core: not part of the API.
#pragma once

#include <new>

#include "core/status.h"

namespace minhash {
namespace detail {

// body() returns a Status; an exception becomes OutOfMemory (std::bad_alloc)
// or Failure (anything else).
template <class Body>
Status guarded(Body &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return Status::OutOfMemory;
    } catch (...) {
        return Status::Failure;
    }
}

}  // namespace detail
}  // namespace minhash
