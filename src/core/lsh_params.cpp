// Choosing LSH bands and rows by minimising the weighted false-positive and
// false-negative areas under the S-curve P(s) = 1 − (1 − s^r)^b.
//
// The areas are integrated numerically with adaptive Simpson quadrature
// (absolute tolerance 1e-12 per integral): the curve is smooth but, for large
// r, steep near s = 1, so a fixed grid would either be too coarse there or
// wastefully fine everywhere else. The search is exhaustive over b ≥ 1,
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

template <class F>
double simpson_step(F &f, double a, double b, double fa, double fm, double fb, double whole,
                    double tol, int depth) {
    const double m = 0.5 * (a + b);
    const double lm = 0.5 * (a + m);
    const double rm = 0.5 * (m + b);
    const double flm = f(lm);
    const double frm = f(rm);
    const double left = (m - a) / 6.0 * (fa + 4.0 * flm + fm);
    const double right = (b - m) / 6.0 * (fm + 4.0 * frm + fb);
    const double delta = left + right - whole;
    // !(|delta| > ...) also ends the recursion on NaN.
    if (depth <= 0 || !(std::fabs(delta) > 15.0 * tol))
        return left + right + delta / 15.0;
    return simpson_step(f, a, m, fa, flm, fm, left, tol / 2, depth - 1) +
           simpson_step(f, m, b, fm, frm, fb, right, tol / 2, depth - 1);
}

template <class F>
double integrate(F f, double a, double b) {
    if (!(b > a))
        return 0.0;
    // Start from 8 panels so a narrow feature cannot hide between the first samples.
    constexpr int kPanels = 8;
    double total = 0.0;
    const double h = (b - a) / kPanels;
    for (int p = 0; p < kPanels; ++p) {
        const double x0 = a + p * h;
        const double x1 = p + 1 == kPanels ? b : x0 + h;
        const double f0 = f(x0), f1 = f(x1), fm = f(0.5 * (x0 + x1));
        const double whole = (x1 - x0) / 6.0 * (f0 + 4.0 * fm + f1);
        total += simpson_step(f, x0, x1, f0, fm, f1, whole, 1e-12 / kPanels, 40);
    }
    return total;
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
