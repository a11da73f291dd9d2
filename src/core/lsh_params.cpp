// Choosing LSH bands and rows by minimising the weighted false-positive and
// false-negative areas under the S-curve P(s) = 1 − (1 − s^r)^b.
//
// The areas are integrated numerically with adaptive Gauss–Kronrod (7/15)
// quadrature, absolute tolerance 1e-12 per integral: the curve is smooth
// but, for large r, steep near s = 1, so a fixed grid would either be too
// coarse there or wastefully fine everywhere else, and Gauss–Kronrod needs
// far fewer evaluations than Simpson for the same accuracy (the search runs
// ~k·ln k integrations, so this is what makes k = 1024 fast). The search is exhaustive over b ≥ 1,
// r ≥ 1, b·r ≤ k (about k·ln k pairs).
//
// Ties: pairs are visited in increasing b, then increasing r, and a later
// pair replaces the best only if its cost is lower by more than a relative
// 1e-9 (integration noise), so among equal costs the one with fewer bands
// (then fewer rows) wins: the smaller index.
#include "core/lsh_params.h"

#include <algorithm>
#include <cmath>

#include "core/signature.h"

namespace minhash {

namespace {

// 1 − P(s) = (1 − s^r)^b, computed via log1p so tiny s^r keeps its precision.
double miss_probability(double s, int bands, int rows) {
    const double sr = std::pow(s, rows);
    if (sr >= 1.0)
        return 0.0;
    return std::exp(bands * std::log1p(-sr));
}

// P(s) = 1 − (1 − s^r)^b via expm1, exact to the last bits even where P is tiny
// (1 − miss_probability would cancel to 0 or noise below ~1e-16).
double hit_probability(double s, int bands, int rows) {
    const double sr = std::pow(s, rows);
    if (sr >= 1.0)
        return 1.0;
    return -std::expm1(bands * std::log1p(-sr));
}

// Gauss–Kronrod 7/15 nodes and weights on [−1, 1] (QUADPACK's qk15):
// kXgk[1,3,5,7] are also the 7-point Gauss nodes, weighted by kWg.
constexpr double kXgk[8] = {0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
                            0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
                            0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
                            0.207784955007898467600689403773245, 0.0};
constexpr double kWgk[8] = {0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
                            0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
                            0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
                            0.204432940075298892414161999234649, 0.209482141084727828012999174891714};
constexpr double kWg[4] = {0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
                           0.381830050505118944950369775488975, 0.417959183673469387755102040816327};

// Adaptive Gauss–Kronrod: the 15-point Kronrod value, bisecting while it
// differs from the embedded 7-point Gauss value by more than tol. That
// difference overstates the Kronrod rule's real error by orders of magnitude
// on smooth pieces, so the result is accurate well below tol.
template <class F>
double gauss_kronrod(F &f, double a, double b, double tol, int depth) {
    const double c = 0.5 * (a + b);
    const double h = 0.5 * (b - a);
    const double fc = f(c);
    double kronrod = kWgk[7] * fc;
    double gauss = kWg[3] * fc;
    for (int j = 0; j < 7; ++j) {
        const double sum = f(c - h * kXgk[j]) + f(c + h * kXgk[j]);
        kronrod += kWgk[j] * sum;
        if (j % 2 == 1)
            gauss += kWg[j / 2] * sum;
    }
    kronrod *= h;
    gauss *= h;
    // !(... > tol) also ends the recursion on NaN.
    if (depth <= 0 || !(std::fabs(kronrod - gauss) > tol))
        return kronrod;
    return gauss_kronrod(f, a, c, tol / 2, depth - 1) + gauss_kronrod(f, c, b, tol / 2, depth - 1);
}

template <class F>
double integrate(F f, double a, double b) {
    if (!(b > a))
        return 0.0;
    return gauss_kronrod(f, a, b, 1e-12, 30);
}

double clamp_threshold(double t) {
    if (!(t >= 0.0))  // also NaN
        return 0.0;
    return std::min(t, 1.0);
}

}  // namespace

double lsh_candidate_probability(double s, int bands, int rows) noexcept {
    return hit_probability(s, bands, rows);
}

LshParams lsh_params_for(double threshold, int bands, int rows) noexcept {
    const double t = clamp_threshold(threshold);
    LshParams p;
    p.bands = bands;
    p.rows = rows;
    p.false_positive_area =
        integrate([&](double s) { return hit_probability(s, bands, rows); }, 0.0, t);
    p.false_negative_area =
        integrate([&](double s) { return miss_probability(s, bands, rows); }, t, 1.0);
    return p;
}

LshParams choose_lsh_params(double threshold, int num_perm, double fp_weight,
                            double fn_weight) noexcept {
    const int k = std::clamp(num_perm, kMinNumPerm, kMaxNumPerm);
    const double wfp = std::isfinite(fp_weight) ? fp_weight : 0.0;
    const double wfn = std::isfinite(fn_weight) ? fn_weight : 0.0;
    LshParams best{1, 1, 0.0, 0.0};
    double best_cost = INFINITY;
    for (int b = 1; b <= k; ++b) {
        for (int r = 1; b * r <= k; ++r) {
            const LshParams p = lsh_params_for(threshold, b, r);
            const double cost = wfp * p.false_positive_area + wfn * p.false_negative_area;
            if (best_cost == INFINITY || cost < best_cost * (1.0 - 1e-9)) {
                best = p;
                best_cost = cost;
            }
        }
    }
    return best;
}

}  // namespace minhash
