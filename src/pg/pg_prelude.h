/*
 * The first include of every file in src/pg (.cpp and .h): PostgreSQL's
 * headers and the C++ standard headers in the one order that compiles, and
 * the guards that keep the C++/PostgreSQL seam a compiler fact.
 *
 * Order: postgres.h first (it must precede every other PostgreSQL header),
 * the fmgr interface and the version guards (compat.h), all C headers inside
 * extern "C"; then the C++ standard headers the glue and the core's headers
 * use. PostgreSQL's port.h renames the printf family (snprintf becomes
 * pg_snprintf, ...) and declares the new names first, so the standard
 * headers that follow it import the renamed functions consistently; a
 * standard header included *before* postgres.h would see the plain names and
 * a later one the renamed ones. Hence the second guard below.
 *
 * Guards:
 *  - src/pg is compiled with -fno-exceptions (Makefile): a try block, a
 *    throw or a throwing standard container does not compile in the glue.
 *    The core (src/core) catches its own exceptions and returns
 *    minhash::Status; pg/core_call.h turns a Status into PostgreSQL's
 *    error handling.
 *  - this header comes before any C++ standard header.
 */
#ifndef MINHASH_PG_PRELUDE_H
#define MINHASH_PG_PRELUDE_H

#ifndef __cplusplus
#error "src/pg is C++: compile it as C++17"
#endif

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#error "src/pg must be compiled with -fno-exceptions (see PG_CXXFLAGS in the Makefile)"
#endif

#if !defined(MINHASH_PG_PRELUDE_FIRST) && (defined(_GLIBCXX_RELEASE) || defined(_LIBCPP_VERSION))
#error "include pg/pg_prelude.h before any C++ standard header"
#endif

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}
#include "pg/compat.h"

/* From here on C++ standard headers may follow. */
#define MINHASH_PG_PRELUDE_FIRST 1

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <string_view>

#endif
