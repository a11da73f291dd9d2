// Compact signatures: b-bit minwise hashing (Li and König, "b-Bit Minwise
// Hashing", WWW 2010). A signature may keep only the lowest b bits of each
// 32-bit value (b = 16 or 8): half or a quarter of the bytes. Two sets'
// minima are equal with probability R (the Jaccard similarity); their low
// b bits are also equal by chance when the minima differ, so the raw share
// of equal positions P overestimates R. Li and König's Theorem 1:
//
//     P = C1 + (1 − C2) R,   so   R̂ = (P̂ − C1) / (1 − C2)
//
//     C1 = A1 r2/(r1+r2) + A2 r1/(r1+r2),   C2 = A1 r1/(r1+r2) + A2 r2/(r1+r2)
//     Aj = rj (1 − rj)^(2^b − 1) / (1 − (1 − rj)^(2^b)),   rj = fj / D
//
// with fj the sets' sizes and D the size of the hash range (2^32 here). As
// rj → 0, Aj → 2^−b and R̂ = (P̂ − 2^−b) / (1 − 2^−b): the form the
// extension uses, because signatures do not store their sets' sizes. It is
// exact to a relative 2^b·rj, i.e. for sets far smaller than 2^(32−b)
// elements (65,536 at 16 bits, 16.7 million at 8 bits: every document);
// for larger sets the chance collisions are rarer than 2^−b (small minima
// differ in their low bits) and the limit form undershoots R by at most
// 2^−b (bench/notes measures it).
//
// Values are narrowed by keeping their low bits (v mod 2^b); a compact
// signature is stored as k packed uint16 or uint8 in the machine's order,
// like the 32-bit values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace minhash {

// How many bits of each value a signature keeps. The code is stored in
// every signature (flags bits 4-5 in PostgreSQL), so keep the numbers.
enum class ValueWidth : uint8_t { Bits32 = 0, Bits16 = 1, Bits8 = 2 };
constexpr int kNumValueWidths = 3;

int width_bits(ValueWidth w) noexcept;                // 32, 16, 8
bool width_of_bits(int bits, ValueWidth *out) noexcept;  // false unless 8, 16 or 32
inline size_t value_bytes(ValueWidth w) noexcept { return size_t(4) >> static_cast<int>(w); }

// out (k packed values of width w) = the low bits of in[0..k).
void narrow_values(const uint32_t *in, int k, ValueWidth w, void *out) noexcept;
// out[0..k) = the packed values of width w, zero-extended to 32 bits.
void widen_values(const void *in, int k, ValueWidth w, uint32_t *out) noexcept;
// The packed values of width `from` narrowed to `to` (not wider) in place
// of a copy: out may not alias in.
void renarrow_values(const void *in, int k, ValueWidth from, ValueWidth to, void *out) noexcept;

// Positions where the packed values of a and b (width w) agree.
int matching_packed(const void *a, const void *b, int k, ValueWidth w) noexcept;

// Li and König's A(r, b): the probability that the low b bits of two
// different minima agree, for a set of relative size r = f / D (the r → 0
// limit, 2^−b, for r <= 0).
double bbit_chance(double r, int bits) noexcept;

// The unbiased estimate of R from `matches` equal positions out of k at
// b bits, for sets of relative sizes r1, r2 (0: the limit of small sets).
// b = 32 (or more) is the plain share of equal positions. Not clamped: may
// fall slightly below 0 or, never for b < 32, differ from P; see
// bbit_jaccard for the clamped form SQL returns.
double bbit_estimate(int matches, int k, int bits, double r1 = 0.0, double r2 = 0.0) noexcept;

// bbit_estimate(matches, k, bits) clamped to [0, 1]: the similarity of two
// signatures as jaccard() reports it. At 32 bits exactly matches / k.
double bbit_jaccard(int matches, int k, int bits) noexcept;

// The fewest equal positions out of k for which bbit_jaccard(matches, k,
// bits) >= t, or k + 1 when no count reaches t. An index that counts equal
// values compares against this instead of computing the estimate per row;
// since a narrower value agrees wherever the wider one does, a count at
// fewer bits below it rules a row out at every wider width too.
int bbit_min_matches(int k, int bits, double t) noexcept;

}  // namespace minhash
