#include "gen/corpus.h"

#include <algorithm>
#include <cmath>

namespace gen {

namespace {

using Document = std::vector<Words>;         // paragraphs

// Edit rate for a target 5-shingle Jaccard (see corpus.h).
double edit_rate_for(double target_j) {
    const double s = 2 * target_j / (1 + target_j);
    return 1 - std::pow(s, 1.0 / 5);
}

}  // namespace

// 5% exact copies, the rest with a target Jaccard uniform in [0.05, 1).
double draw_target(Rng &rng) { return rng.chance(0.05) ? 1.0 : 0.05 + 0.95 * rng.uniform(); }

// 1 (singleton) with probability singleton_share, else 2 + a geometric
// number with mean 1.5, capped.
int draw_cluster_size(Rng &rng, const CorpusOptions &opt) {
    if (rng.chance(opt.singleton_share)) return 1;
    int size = 2;
    while (size < opt.max_cluster && rng.chance(0.6)) ++size;
    return size;
}

namespace {

Document base_document(Rng &rng, const Vocabulary &vocab) {
    Document doc(rng.range(2, 5));
    for (Words &para : doc) {
        para.resize(rng.range(15, 60));
        for (int &w : para) w = vocab.draw_rank(rng);
    }
    return doc;
}

}  // namespace

// Applies round(e * words) random edits, then maybe shuffles paragraphs.
std::vector<Words> edit_paragraphs(const std::vector<Words> &src, double target_j, Rng &rng,
                                   const Vocabulary &vocab, bool shuffle) {
    Document doc = src;
    if (target_j >= 1.0) return doc;
    size_t total = 0;
    for (const Words &p : doc) total += p.size();
    const double e = edit_rate_for(target_j);
    const auto edits = static_cast<int64_t>(std::llround(e * static_cast<double>(total)));
    for (int64_t i = 0; i < edits; ++i) {
        Words &para = doc[rng.range(0, static_cast<int64_t>(doc.size()) - 1)];
        if (para.empty()) {
            para.push_back(vocab.draw_rank(rng));
            continue;
        }
        const int64_t pos = rng.range(0, static_cast<int64_t>(para.size()) - 1);
        const double op = rng.uniform();
        if (op < 0.4) {
            para[pos] = vocab.draw_rank(rng);
        } else if (op < 0.6) {
            para.insert(para.begin() + pos, vocab.draw_rank(rng));
        } else if (op < 0.8) {
            if (para.size() > 1) para.erase(para.begin() + pos);
        } else if (pos + 1 < static_cast<int64_t>(para.size())) {
            std::swap(para[pos], para[pos + 1]);
        }
    }
    if (shuffle && doc.size() > 1 && rng.chance(0.3)) rng.shuffle(doc.begin(), doc.end());
    return doc;
}

namespace {

// Sentences of 5-20 words, first letter capitalised, ending in . ! or ?,
// with the odd comma; paragraphs separated by a blank line.
std::string render(const Document &doc, Rng &rng, const Vocabulary &vocab) {
    std::string out;
    for (size_t p = 0; p < doc.size(); ++p) {
        if (p > 0) out += "\n\n";
        int64_t left = rng.range(5, 20);
        bool start = true;
        for (size_t i = 0; i < doc[p].size(); ++i) {
            if (i > 0) out += ' ';
            std::string w = vocab.word(doc[p][i]);
            if (start) w[0] = static_cast<char>(w[0] - 'a' + 'A');
            out += w;
            start = false;
            const bool last = i + 1 == doc[p].size();
            if (--left == 0 || last) {
                const double u = rng.uniform();
                out += u < 0.8 ? "." : u < 0.9 ? "?" : "!";
                start = true;
                left = rng.range(5, 20);
            } else if (rng.chance(0.05)) {
                out += ',';
            }
        }
    }
    return out;
}

std::string render_basket(const std::vector<int> &items) {
    std::string out = "{";
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(items[i]);
    }
    return out + "}";
}

}  // namespace

void for_each_document_cluster(const CorpusOptions &opt,
                               const std::function<void(int32_t, const std::vector<std::string> &)> &emit) {
    const Vocabulary vocab(50000, 1.0, opt.seed ^ 0x766f636162ULL);
    Rng rng(opt.seed);
    int64_t rows = 0;
    int32_t cluster = 0;
    std::vector<std::string> bodies;
    while (rows < opt.rows) {
        ++cluster;
        const int size = draw_cluster_size(rng, opt);
        std::vector<Document> members{base_document(rng, vocab)};
        for (int v = 1; v < size; ++v) {
            const Document &src = rng.chance(0.7) ? members[0] : members[rng.range(0, v - 1)];
            members.push_back(edit_paragraphs(src, draw_target(rng), rng, vocab, true));
        }
        bodies.clear();
        for (const Document &d : members) {
            if (rows == opt.rows) break;
            bodies.push_back(render(d, rng, vocab));
            ++rows;
        }
        emit(cluster, bodies);
    }
}

Corpus make_documents(const CorpusOptions &opt) {
    Corpus c;
    c.rows.reserve(opt.rows);
    c.cluster.reserve(opt.rows);
    for_each_document_cluster(opt, [&](int32_t cluster, const std::vector<std::string> &bodies) {
        for (const std::string &b : bodies) {
            c.rows.push_back(b);
            c.cluster.push_back(cluster);
        }
    });
    return c;
}

Corpus make_baskets(const CorpusOptions &opt) {
    const Vocabulary products(100000, 1.0, opt.seed ^ 0x626173ULL);
    Rng rng(opt.seed + 1);
    // Product ids are scattered over 1..10^6 so popularity is not the id order.
    std::vector<int> ids(products.size());
    for (int i = 0; i < products.size(); ++i) ids[i] = static_cast<int>(rng.range(1, 1000000));
    auto draw_item = [&] { return ids[products.draw_rank(rng)]; };
    auto distinct = [](std::vector<int> v) {
        std::vector<int> out;
        for (int x : v)
            if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
        return out;
    };
    Corpus c;
    int32_t cluster = 0;
    while (static_cast<int64_t>(c.rows.size()) < opt.rows) {
        ++cluster;
        const int size = draw_cluster_size(rng, opt);
        std::vector<int> base(rng.range(5, 60));
        for (int &x : base) x = draw_item();
        std::vector<std::vector<int>> members{distinct(base)};
        for (int v = 1; v < size; ++v) {
            std::vector<int> b = members[rng.chance(0.7) ? 0 : rng.range(0, v - 1)];
            // For sets J = (n - d) / (n + d) after d substitutions, so d = n(1-J)/(1+J).
            const double j = draw_target(rng);
            const auto edits = std::llround(static_cast<double>(b.size()) * (1 - j) / (1 + j));
            for (int64_t i = 0; i < edits; ++i) {
                const double op = rng.uniform();
                const int64_t pos = rng.range(0, static_cast<int64_t>(b.size()) - 1);
                if (op < 0.6) b[pos] = draw_item();
                else if (op < 0.8) b.push_back(draw_item());
                else if (b.size() > 1) b.erase(b.begin() + pos);
            }
            members.push_back(distinct(b));
        }
        for (const auto &m : members) {
            if (static_cast<int64_t>(c.rows.size()) == opt.rows) break;
            c.rows.push_back(render_basket(m));
            c.cluster.push_back(cluster);
        }
    }
    return c;
}

std::vector<std::string> make_permutations(int words, int count, uint64_t seed) {
    const Vocabulary vocab(50000, 1.0, seed ^ 0x7065726dULL);
    Rng rng(seed);
    Words base(words);
    for (int &w : base) w = vocab.draw_rank(rng);
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i) {
        Words p = base;
        rng.shuffle(p.begin(), p.end());
        std::string s;
        for (size_t j = 0; j < p.size(); ++j) {
            if (j) s += ' ';
            s += vocab.word(p[j]);
        }
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace gen
