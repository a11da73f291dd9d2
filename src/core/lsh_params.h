// Choosing LSH bands b and rows r for a similarity threshold.
//
// A pair of similarity s shares at least one band with probability
// P(s) = 1 − (1 − s^r)^b. For threshold t we minimise
//   w_fp · ∫₀ᵗ P(s) ds  +  w_fn · ∫ₜ¹ (1 − P(s)) ds   over b·r ≤ k,
// the weighted false-positive and false-negative areas.
#pragma once

namespace minhash {

struct LshParams {
    int bands;
    int rows;
    double false_positive_area;  // ∫₀ᵗ P(s) ds
    double false_negative_area;  // ∫ₜ¹ (1 − P(s)) ds
};

// threshold in [0,1], num_perm in [kMinNumPerm, kMaxNumPerm], weights ≥ 0 and
// not both zero (validated by the caller).
LshParams choose_lsh_params(double threshold, int num_perm, double fp_weight = 0.5,
                            double fn_weight = 0.5) noexcept;

// P(s) for given b and r.
double lsh_candidate_probability(double s, int bands, int rows) noexcept;

// The areas for a given (b, r), e.g. explicit index options.
LshParams lsh_params_for(double threshold, int bands, int rows) noexcept;

}  // namespace minhash
