// Compact (b-bit) signatures: see bbit.h for the estimator.
#include "core/bbit.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace minhash {

int width_bits(ValueWidth w) noexcept {
    switch (w) {
    case ValueWidth::Bits16:
        return 16;
    case ValueWidth::Bits8:
        return 8;
    case ValueWidth::Bits32:
        break;
    }
    return 32;
}

bool width_of_bits(int bits, ValueWidth *out) noexcept {
    switch (bits) {
    case 32:
        *out = ValueWidth::Bits32;
        return true;
    case 16:
        *out = ValueWidth::Bits16;
        return true;
    case 8:
        *out = ValueWidth::Bits8;
        return true;
    default:
        return false;
    }
}

namespace {

// Packed values are read and written through memcpy: a signature's values
// need not be aligned for their width once inside a varlena.
template <typename T>
void narrow_to(const uint32_t *in, int k, void *out) {
    auto *o = static_cast<unsigned char *>(out);
    for (int i = 0; i < k; ++i) {
        const T v = static_cast<T>(in[i]);
        std::memcpy(o + sizeof(T) * i, &v, sizeof(T));
    }
}

template <typename T>
uint32_t packed_at(const void *p, int i) {
    T v;
    std::memcpy(&v, static_cast<const unsigned char *>(p) + sizeof(T) * i, sizeof(T));
    return v;
}

template <typename T>
int matching_of(const void *a, const void *b, int k) {
    int same = 0;
    for (int i = 0; i < k; ++i)
        same += packed_at<T>(a, i) == packed_at<T>(b, i);
    return same;
}

}  // namespace

void narrow_values(const uint32_t *in, int k, ValueWidth w, void *out) noexcept {
    switch (w) {
    case ValueWidth::Bits16:
        narrow_to<uint16_t>(in, k, out);
        return;
    case ValueWidth::Bits8:
        narrow_to<uint8_t>(in, k, out);
        return;
    case ValueWidth::Bits32:
        break;
    }
    std::memcpy(out, in, sizeof(uint32_t) * static_cast<size_t>(std::max(k, 0)));
}

void widen_values(const void *in, int k, ValueWidth w, uint32_t *out) noexcept {
    for (int i = 0; i < k; ++i)
        out[i] = w == ValueWidth::Bits16  ? packed_at<uint16_t>(in, i)
                 : w == ValueWidth::Bits8 ? packed_at<uint8_t>(in, i)
                                          : packed_at<uint32_t>(in, i);
}

void renarrow_values(const void *in, int k, ValueWidth from, ValueWidth to, void *out) noexcept {
    for (int i = 0; i < k; ++i) {
        uint32_t v;
        widen_values(static_cast<const unsigned char *>(in) + value_bytes(from) * i, 1, from, &v);
        narrow_values(&v, 1, to, static_cast<unsigned char *>(out) + value_bytes(to) * i);
    }
}

int matching_packed(const void *a, const void *b, int k, ValueWidth w) noexcept {
    switch (w) {
    case ValueWidth::Bits16:
        return matching_of<uint16_t>(a, b, k);
    case ValueWidth::Bits8:
        return matching_of<uint8_t>(a, b, k);
    case ValueWidth::Bits32:
        break;
    }
    return matching_of<uint32_t>(a, b, k);
}

double bbit_chance(double r, int bits) noexcept {
    const double cells = std::ldexp(1.0, bits);  // 2^b
    if (!(r > 0.0))
        return 1.0 / cells;
    if (r >= 1.0)
        return 0.0;  // every element is in the set: the minimum is 0, never a chance match
    // r (1 − r)^(2^b − 1) / (1 − (1 − r)^(2^b)), in logarithms so that tiny
    // r and large 2^b lose no precision: (1 − r)^n = exp(n log1p(−r)).
    const double l = std::log1p(-r);
    const double but_one = std::exp((cells - 1) * l);  // (1 − r)^(2^b − 1)
    const double denom = -std::expm1(cells * l);        // 1 − (1 − r)^(2^b), accurately
    return r * but_one / denom;
}

double bbit_estimate(int matches, int k, int bits, double r1, double r2) noexcept {
    if (k <= 0)
        return 0.0;
    const double p = static_cast<double>(matches) / k;
    if (bits >= 32)
        return p;
    const double a1 = bbit_chance(r1, bits);
    const double a2 = bbit_chance(r2, bits);
    double c1 = a1, c2 = a2;  // both sets small: the limits agree, C1 = C2 = 2^−b
    if (r1 > 0.0 || r2 > 0.0) {
        const double s = std::max(r1, 0.0) + std::max(r2, 0.0);
        c1 = (a1 * std::max(r2, 0.0) + a2 * std::max(r1, 0.0)) / s;
        c2 = (a1 * std::max(r1, 0.0) + a2 * std::max(r2, 0.0)) / s;
    }
    return (p - c1) / (1.0 - c2);
}

double bbit_jaccard(int matches, int k, int bits) noexcept {
    return std::clamp(bbit_estimate(matches, k, bits), 0.0, 1.0);
}

int bbit_min_matches(int k, int bits, double t) noexcept {
    // bbit_jaccard grows with matches: the first count that reaches t, by
    // bisection over [0, k + 1), evaluating exactly what jaccard() returns
    int lo = 0, hi = std::max(k, 0) + 1;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (bbit_jaccard(mid, k, bits) >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

}  // namespace minhash
