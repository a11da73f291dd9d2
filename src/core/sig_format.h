// The external forms of a signature, decoded without PostgreSQL so that the
// fuzzer (tests/fuzz/fuzz_formats.cpp) can reach them: the text form
// seed:[v1,...,vk] and the binary (send/recv) layout. src/pg/type_io.cpp turns
// the results into values or errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

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
