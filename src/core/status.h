// What the core's long-running functions return, and how they are stopped.
#pragma once

#include <csignal>
#include <cstdint>

namespace minhash {

// Polled by long loops; the caller passes PostgreSQL's InterruptPending (or
// nullptr). The loop stops early and reports Status::Interrupted.
using InterruptFlag = const volatile std::sig_atomic_t *;

// Interrupted: the flag was set; the caller services it and may call again.
// TooLarge: the result would exceed the caller's byte budget (or a document
// exceeds the 32-bit offsets of the normalizer); nothing useful was produced.
enum class Status : uint8_t { Ok = 0, Interrupted = 1, TooLarge = 2 };

}  // namespace minhash
