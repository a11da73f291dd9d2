// Ground truth: the exact Jaccard similarity of document pairs, with the
// extension's own shingling (src/core), so the benchmark can score recall and
// precision against the truth rather than against another estimate.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/shingle.h"
#include "gen/corpus.h"

namespace gen {

struct TruthPair {
    int64_t a, b;     // row ids (1-based), a < b
    double jaccard;   // exact
    bool planted;     // same cluster
};

// Every pair inside a cluster (whatever its similarity), computed exactly on
// the distinct shingle strings.
std::vector<TruthPair> planted_document_pairs(const Corpus &c, const minhash::ShingleSpec &spec);

// Every pair in different clusters with exact Jaccard >= threshold. Candidate
// pairs come from a prefix-filter similarity join (Chaudhuri et al. 2006;
// Bayardo et al. 2007) over 64-bit shingle hashes, which misses no pair at or
// above the threshold; each candidate is then verified on the shingle strings.
std::vector<TruthPair> accidental_document_pairs(const Corpus &c, const minhash::ShingleSpec &spec,
                                                 double threshold);

// Baskets: every pair inside a cluster, exact Jaccard over distinct elements
// by their text form (as jaccard(anyarray, anyarray) defines it).
std::vector<TruthPair> planted_basket_pairs(const Corpus &c);

}  // namespace gen
