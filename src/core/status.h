// What the core's entry points return, and how they are stopped.
//
// The entry points the PostgreSQL glue calls are noexcept: the core catches
// its own exceptions (std::bad_alloc and any other) and reports them here, so
// the glue, compiled with -fno-exceptions, never sees one.
#pragma once

#include <csignal>
#include <cstdint>

namespace minhash {

// Polled by long loops; the caller passes PostgreSQL's InterruptPending (or
// nullptr). The loop stops early and reports Status::Interrupted.
using InterruptFlag = const volatile std::sig_atomic_t *;

// Ok: done.
// Interrupted: the flag was set; the caller services it and may call again.
// TooLarge: the result would exceed the caller's byte budget or buffer (or a
//   document exceeds the 32-bit offsets of the normalizer); nothing useful was
//   produced. The caller may call again with more room.
// OutOfMemory: an allocation of the core failed (std::bad_alloc).
// Failure: any other exception inside the core (a bug): nothing was produced.
enum class Status : uint8_t { Ok = 0, Interrupted = 1, TooLarge = 2, OutOfMemory = 3, Failure = 4 };

}  // namespace minhash
