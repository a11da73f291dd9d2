#include "gen/truth.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/hash.h"
#include "core/jaccard.h"

namespace gen {

namespace {

// Row indices [first, last) of each cluster; clusters are contiguous.
std::vector<std::pair<size_t, size_t>> cluster_ranges(const Corpus &c) {
    std::vector<std::pair<size_t, size_t>> out;
    for (size_t i = 0; i < c.rows.size();) {
        size_t j = i + 1;
        while (j < c.rows.size() && c.cluster[j] == c.cluster[i]) ++j;
        out.emplace_back(i, j);
        i = j;
    }
    return out;
}

// Sorted distinct 64-bit hashes of a document's shingles.
std::vector<uint64_t> shingle_hashes(const std::string &doc, const minhash::ShingleSpec &spec) {
    std::vector<uint64_t> h;
    minhash::for_each_shingle(minhash::normalize(doc, spec.unit), spec.k,
                              [&](std::string_view s) { h.push_back(minhash::hash_bytes(s)); });
    std::sort(h.begin(), h.end());
    h.erase(std::unique(h.begin(), h.end()), h.end());
    return h;
}

size_t intersection_size(const uint64_t *a, size_t na, const uint64_t *b, size_t nb) {
    size_t i = 0, j = 0, common = 0;
    while (i < na && j < nb) {
        if (a[i] < b[j]) ++i;
        else if (b[j] < a[i]) ++j;
        else { ++common; ++i; ++j; }
    }
    return common;
}

std::vector<std::string> basket_elements(const std::string &literal) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : literal) {
        if (ch == '{') continue;
        if (ch == ',' || ch == '}') {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += ch;
        }
    }
    return out;
}

}  // namespace

std::vector<TruthPair> planted_document_pairs(const Corpus &c, const minhash::ShingleSpec &spec) {
    std::vector<TruthPair> out;
    for (auto [first, last] : cluster_ranges(c)) {
        std::vector<std::vector<std::string>> sets;
        for (size_t i = first; i < last; ++i) sets.push_back(minhash::distinct_shingles(c.rows[i], spec));
        for (size_t i = first; i < last; ++i)
            for (size_t j = i + 1; j < last; ++j)
                out.push_back({static_cast<int64_t>(i + 1), static_cast<int64_t>(j + 1),
                               minhash::jaccard_exact(sets[i - first], sets[j - first]), true});
    }
    return out;
}

std::vector<TruthPair> accidental_document_pairs(const Corpus &c, const minhash::ShingleSpec &spec,
                                                 double threshold) {
    const size_t n = c.rows.size();
    std::vector<uint64_t> tokens;     // all documents' sorted hash sets, concatenated
    std::vector<size_t> offset{0};
    offset.reserve(n + 1);
    for (size_t i = 0; i < n; ++i) {
        const auto h = shingle_hashes(c.rows[i], spec);
        tokens.insert(tokens.end(), h.begin(), h.end());
        offset.push_back(tokens.size());
    }

    // In how many clusters does each shingle occur? Only shingles in two or
    // more clusters can make a cross-cluster pair, and there are few of them:
    // variants share their base's shingles, unrelated documents almost never.
    std::unordered_map<uint64_t, uint32_t> cross;  // shingle -> number of clusters, if >= 2
    {
        std::vector<uint64_t> per_cluster;
        for (auto [first, last] : cluster_ranges(c)) {
            std::vector<uint64_t> u(tokens.begin() + offset[first], tokens.begin() + offset[last]);
            std::sort(u.begin(), u.end());
            u.erase(std::unique(u.begin(), u.end()), u.end());
            per_cluster.insert(per_cluster.end(), u.begin(), u.end());
        }
        std::sort(per_cluster.begin(), per_cluster.end());
        for (size_t i = 0; i < per_cluster.size();) {
            size_t j = i + 1;
            while (j < per_cluster.size() && per_cluster[j] == per_cluster[i]) ++j;
            if (j - i >= 2) cross.emplace(per_cluster[i], static_cast<uint32_t>(j - i));
            i = j;
        }
    }
    auto clusters_of = [&](uint64_t h) -> uint32_t {
        const auto it = cross.find(h);
        return it == cross.end() ? 1 : it->second;
    };

    // Prefix filter: order every set by (cluster count, hash), a fixed global
    // order with rare shingles first. If J(A,B) >= t then A and B share a
    // shingle among the first |A| - ceil(t|A|) + 1 of A and likewise of B.
    // Shingles of count 1 are never shared across clusters, so only the
    // prefix's cross-cluster shingles are indexed and probed.
    std::unordered_map<uint64_t, std::vector<uint32_t>> postings;
    std::vector<uint32_t> seen_by(n, UINT32_MAX);
    std::vector<TruthPair> out;
    std::vector<std::pair<uint32_t, uint64_t>> order;
    for (size_t i = 0; i < n; ++i) {
        const size_t len = offset[i + 1] - offset[i];
        if (len == 0) continue;
        order.clear();
        for (size_t p = offset[i]; p < offset[i + 1]; ++p) order.emplace_back(clusters_of(tokens[p]), tokens[p]);
        std::sort(order.begin(), order.end());
        const size_t prefix = len - static_cast<size_t>(std::ceil(threshold * static_cast<double>(len) - 1e-9)) + 1;
        for (size_t p = 0; p < std::min(prefix, len); ++p) {
            if (order[p].first < 2) continue;
            auto &list = postings[order[p].second];
            for (uint32_t other : list) {
                if (seen_by[other] == i || c.cluster[other] == c.cluster[i]) continue;
                seen_by[other] = static_cast<uint32_t>(i);
                const size_t olen = offset[other + 1] - offset[other];
                const size_t common = intersection_size(&tokens[offset[i]], len, &tokens[offset[other]], olen);
                const double jh = static_cast<double>(common) / static_cast<double>(len + olen - common);
                if (jh < threshold - 0.05) continue;  // margin for 64-bit hash collisions
                const double j = minhash::jaccard_exact(minhash::distinct_shingles(c.rows[other], spec),
                                                        minhash::distinct_shingles(c.rows[i], spec));
                if (j >= threshold)
                    out.push_back({static_cast<int64_t>(other + 1), static_cast<int64_t>(i + 1), j, false});
            }
            list.push_back(static_cast<uint32_t>(i));
        }
    }
    return out;
}

std::vector<TruthPair> planted_basket_pairs(const Corpus &c) {
    std::vector<TruthPair> out;
    for (auto [first, last] : cluster_ranges(c)) {
        for (size_t i = first; i < last; ++i)
            for (size_t j = i + 1; j < last; ++j)
                out.push_back({static_cast<int64_t>(i + 1), static_cast<int64_t>(j + 1),
                               minhash::jaccard_exact(basket_elements(c.rows[i]), basket_elements(c.rows[j])),
                               true});
    }
    return out;
}

}  // namespace gen
