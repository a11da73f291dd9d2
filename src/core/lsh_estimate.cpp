// Matches and candidates of an lsh probe from build statistics: see lsh_estimate.h.
#include "core/lsh_estimate.h"
#include "core/lsh_prefix.h"

#include <algorithm>
#include <cmath>

namespace minhash {

void set_band_moment(BandMoments *bm, int m, double sumsq, double entries, int bits) noexcept {
    if (m < 1 || m > kMaxMomentDepth || sumsq <= 0.0 || entries <= 0.0 || bm->bands < 1)
        return;
    const double per_band = entries / bm->bands;
    bm->chance[m] = per_band * std::ldexp(1.0, -bits);
    bm->moment[m] = std::max(0.0, sumsq / entries - 1.0 - bm->chance[m]);
}

// Rows at similarity >= t implied by mu_m, with those rows spread evenly over [t, 1].
static double matches_from_moment(double mu, int m, double t) noexcept {
    if (mu <= 0.0)
        return 0.0;
    if (t >= 1.0)
        return mu;
    const double mean_jm = (1.0 - std::pow(t, m + 1)) / ((m + 1) * (1.0 - t));
    return mu / std::max(mean_jm, std::pow(t, m));
}

double expected_matches(const BandMoments &bm, double t) noexcept {
    double best = -1.0;
    t = std::max(t, 0.01);
    for (int m = 1; m <= kMaxMomentDepth; ++m) {
        if (bm.moment[m] < 0.0)
            continue;
        const double n = matches_from_moment(bm.moment[m], m, t);
        best = best < 0.0 ? n : std::min(best, n);
    }
    return best < 0.0 ? best : std::min(best, bm.rows_at_build);
}

double expected_candidates(const BandMoments &bm, int m) noexcept {
    if (m < 1 || m > kMaxMomentDepth || bm.moment[m] < 0.0 || bm.bands < 1)
        return -1.0;
    const double b = bm.bands;
    const double all_bands = b * bm.moment[m];
    // The related rows by similarity: N(s) rows at >= s, in steps of 1/200;
    // a row at s is counted b s^m times in all_bands and found with
    // probability 1 - (1 - s^m)^b.
    constexpr int kSteps = 200;
    double repeats = 0.0;
    double found = 0.0;
    double above = expected_matches(bm, 1.0);  // exact duplicates
    repeats += above * (b - 1.0);
    found += above;
    for (int i = kSteps - 1; i >= 0; --i) {
        const double lo = static_cast<double>(i) / kSteps;
        const double n = expected_matches(bm, lo);
        const double mass = std::max(0.0, n - above);
        const double s = lo + 0.5 / kSteps;
        const double p = prefix_hit_probability(s, m, bm.bands);
        repeats += mass * std::max(0.0, b * std::pow(s, m) - p);
        found += mass * p;
        above = std::max(above, n);
    }
    const double related = std::max(all_bands - repeats, std::min(found, all_bands));
    return std::min(b * bm.chance[m] + related, std::max(0.0, bm.rows_at_build - 1.0));
}

}  // namespace minhash
