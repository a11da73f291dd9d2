// The external forms of a signature, decoded without PostgreSQL so that the
// fuzzer (tests/fuzz/fuzz_formats.cpp) can reach them: the text form
// seed:[v1,...,vk] and the binary (send/recv) layout. src/pg/type_io.cpp turns
// the results into values or errors; the Python package (python/) reads and
// writes both forms with the same functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/bbit.h"
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
// (or the width tag) starts. False if a name followed by ':' is not a
// family; a name without a ':' is not a prefix, nor is a width tag such as
// "bits16:" (*rest = 0: parse_width_prefix and parse_signature_text go on).
bool parse_family_prefix(std::string_view text, HashFamily *family, size_t *rest);

// The text form as the type's output function writes it: "family:" for every
// family but the native one (whose text is what 1.0 wrote), "bitsN:" for a
// compact signature (values given widened, widen_values), the seed as a
// signed 64-bit integer, the values in decimal, no white space. Writes at most
// signature_text_capacity(num_perm) bytes to out, no terminating NUL, and
// returns how many.
constexpr size_t signature_text_capacity(int num_perm) {
    // family name (< 16) and ':', "bits16:", seed (<= 20), ":[", k values
    // of <= 10 digits and a separator, "]"
    return 16 + 1 + 7 + 20 + 2 + 11 * static_cast<size_t>(num_perm) + 1;
}
size_t format_signature_text(HashFamily family, ValueWidth width, uint64_t seed,
                             const uint32_t *values, int num_perm, char *out) noexcept;

// An optional width tag after the family prefix: "bits16:" or "bits8:"
// (a compact signature, bbit.h); "bits32:" is accepted, the default and
// never written. Sets *width (Bits32 without a tag) and *rest to the offset
// after it. False if a "bits<digits>:" tag names another width; anything
// else is not a tag (*rest = 0).
bool parse_width_prefix(std::string_view text, ValueWidth *width, size_t *rest);

// The binary form: uint8 version, uint8 flags, uint16 num_perm, int64 seed,
// num_perm values of the width the flags name (4, 2 or 1 bytes), all
// big-endian.
constexpr size_t kSigBinaryHeader = 12;

struct SigBinaryHeader {
    int version;
    int flags;
    int num_perm;
    uint64_t seed;
};

// Decodes the header of data[0..len); false if len < kSigBinaryHeader.
bool decode_signature_header(const uint8_t *data, size_t len, SigBinaryHeader *h);

// The bytes a binary signature of num_perm values of width w occupies.
constexpr size_t signature_binary_size(int num_perm, ValueWidth w = ValueWidth::Bits32) {
    return kSigBinaryHeader + (size_t(4) >> static_cast<int>(w)) * static_cast<size_t>(num_perm);
}

// Decodes values[0..num_perm) (of width w, zero-extended) from
// data[0..len); false if len is too short.
bool decode_signature_values(const uint8_t *data, size_t len, int num_perm, uint32_t *values,
                             ValueWidth w = ValueWidth::Bits32);

// Writes the binary form (signature_binary_size(num_perm, w) bytes) to out:
// the low bits of each value at width w.
void encode_signature_binary(int version, int flags, int num_perm, uint64_t seed,
                             const uint32_t *values, uint8_t *out,
                             ValueWidth w = ValueWidth::Bits32);

}  // namespace minhash
