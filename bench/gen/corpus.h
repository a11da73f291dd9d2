// The benchmark corpora: documents and baskets with planted near-duplicate
// clusters.
//
// A cluster is one base item plus 0..9 variants. Each variant copies the base
// (or, for a chain, an earlier variant) and applies random edits at a rate
// chosen so the 5-word-shingle Jaccard with its source is spread over
// (0, 1]: with a fraction e of words edited, a 5-word shingle survives with
// probability (1-e)^5 = s, and J = s / (2 - s). Inverting gives the rate for
// a target J. The target only shapes the distribution; the true Jaccard of
// every pair is computed exactly afterwards (truth.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gen/rng.h"
#include "gen/zipf.h"

namespace gen {

using Words = std::vector<int>;  // Zipf ranks

struct Corpus {
    std::vector<std::string> rows;    // text bodies, or basket literals {1,2,3}
    std::vector<int32_t> cluster;     // cluster id per row (1-based), rows 1-based by index+1
};

struct CorpusOptions {
    int64_t rows = 10000;
    uint64_t seed = 42;
    double singleton_share = 0.5;  // clusters without variants
    int max_cluster = 10;
};

// Text documents: 2-5 paragraphs of 15-60 words from a 50,000-word Zipf
// vocabulary, sentences capitalised and punctuated (tokenisation ignores
// both). Variants: word substitution, insertion, deletion, swaps of
// neighbouring words (seed 000's permutations, locally), and paragraph
// shuffles.
Corpus make_documents(const CorpusOptions &opt);

// The same documents, one cluster at a time (its id and its rows' bodies, in
// row order), without holding the corpus: for corpora larger than memory
// (the 10m scale). make_documents is this, collected.
void for_each_document_cluster(const CorpusOptions &opt,
                               const std::function<void(int32_t, const std::vector<std::string> &)> &emit);

// Long documents (long_docs.cpp): mail- and web-page-like text of 2-4 KB
// (headers, wrapped and quoted paragraphs, lists, links, signatures), the
// size PostgreSQL compresses and often stores out of line (TOAST). The same
// clusters and edits as make_documents.
Corpus make_long_documents(const CorpusOptions &opt);

// Shared by both document generators.
// 5% exact copies, the rest with a target Jaccard uniform in [0.05, 1).
double draw_target(Rng &rng);
// 1 (singleton) with probability singleton_share, else 2 + a geometric number.
int draw_cluster_size(Rng &rng, const CorpusOptions &opt);
// round(e * words) random edits for the target Jaccard (the header's rate),
// then, if shuffle, a paragraph shuffle with probability 0.3.
std::vector<Words> edit_paragraphs(const std::vector<Words> &src, double target_j, Rng &rng,
                                   const Vocabulary &vocab, bool shuffle);

// Baskets: 5-60 distinct item ids drawn Zipf-wise from 100,000 products,
// variants by item substitution, insertion and deletion.
Corpus make_baskets(const CorpusOptions &opt);

// Seed 000's experiment data: `count` random permutations of one
// `words`-word document (its sections 7.2 and 8.1).
std::vector<std::string> make_permutations(int words, int count, uint64_t seed);

}  // namespace gen
