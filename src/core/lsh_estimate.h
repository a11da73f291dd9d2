// What an lsh probe finds, estimated from the key-multiplicity statistics an
// index build records (the planner's view of the index: selectivity of %,
// candidates of a scan).
//
// A build records, per key-prefix depth m, S_m = the sum over distinct
// depth-m prefixes of (entries with that prefix)^2, over E entries (E / b per
// band, one per row). S_m / E - 1 is the mean number of other entries sharing
// a random entry's prefix: per band, the other rows agreeing with the row on
// the band's first m values. Two rows of Jaccard similarity J agree on a value
// with probability J, so that mean is mu_m = sum over the other rows j of
// J_j^m, plus the prefixes shared by chance (E / b / 2^bits, the bits of the
// prefix beyond the band number), which is subtracted. The mu_m are the
// moments of the similarity of a stored row to the others; everything below
// is derived from them.
#pragma once

namespace minhash {

constexpr int kMaxMomentDepth = 32;

struct BandMoments {
    int bands = 0;
    double rows_at_build = 0;  // rows indexed by the build (entries per band)
    // mu_m for m = 1..kMaxMomentDepth (index m), clamped at 0; negative: not recorded
    double moment[kMaxMomentDepth + 1];
    // other rows sharing one band's depth-m prefix by chance (E / b / 2^bits)
    double chance[kMaxMomentDepth + 1];

    BandMoments() noexcept {
        for (int m = 0; m <= kMaxMomentDepth; ++m) {
            moment[m] = -1.0;
            chance[m] = 0.0;
        }
    }
};

// Record depth m (1..kMaxMomentDepth) from the build's S_m over E entries, the
// prefix having `bits` bits beyond the band number. Nothing for S_m = 0 (not
// recorded) or E = 0.
void set_band_moment(BandMoments *bm, int m, double sumsq, double entries, int bits) noexcept;

// Other rows of similarity >= t to a row like the stored ones (0 < t <= 1):
// the N rows at similarity >= t contribute N * E[J^m | J >= t] to mu_m, and
// the rows below t only add to it, so N <= mu_m / E[J^m | J >= t] for every
// recorded m. Taking the matches as spread evenly over [t, 1],
// E[J^m | J >= t] = (1 - t^(m+1)) / ((m + 1)(1 - t)), and keeping the
// smallest bound over m. At most rows_at_build; negative if no depth is
// recorded.
double expected_matches(const BandMoments &bm, double t) noexcept;

// Distinct other rows that a probe of every band at depth m finds (the
// candidates it verifies), for a row like the stored ones: per band the
// chance sharers (distinct across bands), plus sum_j 1 - (1 - J_j^m)^b over the
// rows j related to it. The latter is b * mu_m (each band counted) less the
// repeats: sum_j b J_j^m - (1 - (1 - J_j^m)^b), taken over the distribution
// of J that expected_matches describes (near-duplicates, found through many
// bands but verified once). Not below that distribution's own count. Negative
// if depth m is not recorded.
double expected_candidates(const BandMoments &bm, int m) noexcept;

}  // namespace minhash
