// The external forms of a signature, decoded without PostgreSQL so that the
// fuzzer (tests/fuzz/fuzz_formats.cpp) can reach them: the text form
// seed:[v1,...,vk] and the binary (send/recv) layout. src/pg/type_io.cpp turns
// the results into values or errors; the Python package (python/) reads and
// writes both forms with the same functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/signature.h"

namespace minhash {

enum class SigTextError : uint8_t {
    Ok = 0,
    BadSeed,        // no signed 64-bit integer at the start
    NoColon,        // no ':' after the seed
    NoBracket,      // no '[' after ':'
    Empty,          // "[]": a signature has at least one value
    BadValue,       // not an unsigned 32-bit integer
    TooMany,        // more than max_values values
    BadSeparator,   // neither ',' nor ']' after a value
    Trailing,       // text after ']'
};

// Parses text (the whole view; ASCII white space allowed around every token)
// into seed and values[0..*n); values has room for max_values.
SigTextError parse_signature_text(std::string_view text, int64_t *seed, uint32_t *values,
                                  int max_values, int *n);

// An optional "family:" before the seed ("datasketch:42:[...]"; the native
// family is written without one, as 1.0 wrote every signature). Sets *family
// (Native when there is no prefix) and *rest to the offset where the seed
// starts. False if a name followed by ':' is not a family; a name without a
// ':' is not a prefix (*rest = 0: parse_signature_text reports the seed).
bool parse_family_prefix(std::string_view text, HashFamily *family, size_t *rest);

// The text form as the type's output function writes it: "family:" for every
// family but the native one (whose text is what 1.0 wrote), the seed as a
// signed 64-bit integer, the values in decimal, no white space. Writes at most
// signature_text_capacity(num_perm) bytes to out, no terminating NUL, and
// returns how many.
constexpr size_t signature_text_capacity(int num_perm) {
    // family name (< 16) and ':', seed (<= 20), ":[", k values of <= 10
    // digits and a separator, "]"
    return 16 + 1 + 20 + 2 + 11 * static_cast<size_t>(num_perm) + 1;
}
size_t format_signature_text(HashFamily family, uint64_t seed, const uint32_t *values,
                             int num_perm, char *out) noexcept;

// The binary form: uint8 version, uint8 flags, uint16 num_perm, int64 seed,
// num_perm x uint32, all big-endian.
constexpr size_t kSigBinaryHeader = 12;

struct SigBinaryHeader {
    int version;
    int flags;
    int num_perm;
    uint64_t seed;
};

// Decodes the header of data[0..len); false if len < kSigBinaryHeader.
bool decode_signature_header(const uint8_t *data, size_t len, SigBinaryHeader *h);

// The bytes a binary signature of num_perm values occupies.
constexpr size_t signature_binary_size(int num_perm) {
    return kSigBinaryHeader + 4 * static_cast<size_t>(num_perm);
}

// Decodes values[0..num_perm) from data[0..len); false if len is too short.
bool decode_signature_values(const uint8_t *data, size_t len, int num_perm, uint32_t *values);

// Writes the binary form (signature_binary_size(num_perm) bytes) to out.
void encode_signature_binary(int version, int flags, int num_perm, uint64_t seed,
                             const uint32_t *values, uint8_t *out);

}  // namespace minhash
