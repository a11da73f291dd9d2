// minhash-gen: writes the benchmark's corpora as COPY files.
//
//   minhash-gen docs    --rows N [--seed S] --out docs.tsv --truth truth.tsv [--join 0.3]
//   minhash-gen docs    --rows N [--seed S] --out docs.tsv|- --truth truth.tsv --join 0
//   minhash-gen docs    --long --rows N [--seed S] --out docs.tsv [--truth truth.tsv]
//   minhash-gen baskets --rows N [--seed S] --out baskets.tsv --truth truth.tsv
//   minhash-gen perms   --words 50 --count 20 [--seed S] --out perms.tsv
//
// docs.tsv / baskets.tsv: id, cluster, body (text, or an int[] literal).
// truth.tsv: a, b, exact jaccard, planted (t/f) with a < b: every pair inside a
// cluster and, for documents, every other pair with Jaccard >= --join.
// --long: mail- and web-page-like documents of 2-4 KB (TOASTed in
// PostgreSQL) instead of short paragraphs; the truth file is optional.
// perms.tsv: id, body. Output depends only on the arguments.
// --join 0: no cross-cluster join; the corpus is streamed one cluster at a
// time (memory independent of --rows, for the 10m scale), --out - writes to
// stdout (to pipe into COPY), and the truth holds the planted pairs only
// (the same rows and planted pairs as without --join 0).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gen/copy_format.h"
#include "gen/corpus.h"
#include "gen/truth.h"

namespace {

struct Args {
    std::string mode, out, truth;
    long long rows = 10000, seed = 42;
    int words = 50, count = 20;
    double join = 0.3;
    bool long_docs = false;
};

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: minhash-gen docs|baskets --rows N [--seed S] --out FILE --truth FILE [--join T]\n"
                 "       minhash-gen docs --long --rows N [--seed S] --out FILE [--truth FILE]\n"
                 "       minhash-gen perms --words W --count C [--seed S] --out FILE\n");
    std::exit(2);
}

Args parse(int argc, char **argv) {
    if (argc < 2) usage();
    Args a;
    a.mode = argv[1];
    for (int i = 2; i < argc; ++i) {
        auto value = [&]() -> const char * {
            if (i + 1 >= argc) usage();
            return argv[++i];
        };
        if (!std::strcmp(argv[i], "--rows")) a.rows = std::atoll(value());
        else if (!std::strcmp(argv[i], "--seed")) a.seed = std::atoll(value());
        else if (!std::strcmp(argv[i], "--out")) a.out = value();
        else if (!std::strcmp(argv[i], "--truth")) a.truth = value();
        else if (!std::strcmp(argv[i], "--join")) a.join = std::atof(value());
        else if (!std::strcmp(argv[i], "--words")) a.words = std::atoi(value());
        else if (!std::strcmp(argv[i], "--count")) a.count = std::atoi(value());
        else if (!std::strcmp(argv[i], "--long")) a.long_docs = true;
        else usage();
    }
    if (a.out.empty() || a.rows < 1) usage();
    if ((a.mode == "docs" || a.mode == "baskets") && a.truth.empty() && !a.long_docs) usage();
    if (a.long_docs && a.mode != "docs") usage();
    return a;
}

FILE *open_out(const std::string &path) {
    if (path == "-") return stdout;
    FILE *f = std::fopen(path.c_str(), "w");
    if (!f) {
        std::perror(path.c_str());
        std::exit(1);
    }
    return f;
}

void write_rows(const std::string &path, const gen::Corpus &c) {
    FILE *f = open_out(path);
    std::string line;
    for (size_t i = 0; i < c.rows.size(); ++i) {
        line = std::to_string(i + 1) + '\t' + std::to_string(c.cluster[i]) + '\t';
        gen::append_copy_escaped(line, c.rows[i]);
        line += '\n';
        std::fwrite(line.data(), 1, line.size(), f);
    }
    std::fclose(f);
}

void put_truth(FILE *f, const std::vector<gen::TruthPair> &pairs, long long offset = 0) {
    for (const auto &p : pairs)
        std::fprintf(f, "%lld\t%lld\t%.6f\t%s\n", static_cast<long long>(p.a) + offset,
                     static_cast<long long>(p.b) + offset, p.jaccard, p.planted ? "t" : "f");
}

void write_truth(const std::string &path, const std::vector<gen::TruthPair> &pairs) {
    FILE *f = open_out(path);
    put_truth(f, pairs);
    std::fclose(f);
}

// --join 0: documents and their planted pairs, one cluster at a time.
void stream_documents(const Args &a, const gen::CorpusOptions &opt, const minhash::ShingleSpec &spec) {
    FILE *out = open_out(a.out);
    FILE *truth = open_out(a.truth);
    long long next = 1, pairs = 0;
    double bytes = 0;
    int32_t clusters = 0;
    std::string line;
    gen::Corpus one;
    gen::for_each_document_cluster(opt, [&](int32_t cluster, const std::vector<std::string> &bodies) {
        one.rows = bodies;
        one.cluster.assign(bodies.size(), cluster);
        const auto planted = gen::planted_document_pairs(one, spec);
        put_truth(truth, planted, next - 1);
        pairs += static_cast<long long>(planted.size());
        for (const std::string &b : bodies) {
            line = std::to_string(next++) + '\t' + std::to_string(cluster) + '\t';
            gen::append_copy_escaped(line, b);
            line += '\n';
            std::fwrite(line.data(), 1, line.size(), out);
            bytes += static_cast<double>(b.size());
        }
        clusters = cluster;
    });
    if (std::fclose(out) != 0 || std::fclose(truth) != 0) {
        std::perror("minhash-gen");
        std::exit(1);
    }
    std::fprintf(stderr, "docs (streamed): %lld rows, %d clusters, %.1f MB, %lld planted pairs\n", next - 1,
                 clusters, bytes / 1e6, pairs);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char **argv) {
    const Args a = parse(argc, argv);
    const auto t0 = std::chrono::steady_clock::now();
    gen::CorpusOptions opt;
    opt.rows = a.rows;
    opt.seed = static_cast<uint64_t>(a.seed);
    if (a.mode == "docs" && !a.long_docs && a.join <= 0) {
        stream_documents(a, opt, minhash::ShingleSpec{minhash::ShingleUnit::Word, 5});
    } else if (a.mode == "docs") {
        const gen::Corpus c = a.long_docs ? gen::make_long_documents(opt) : gen::make_documents(opt);
        write_rows(a.out, c);
        if (a.truth.empty()) {
            size_t bytes = 0;
            for (const auto &r : c.rows) bytes += r.size();
            std::fprintf(stderr, "docs: %zu rows, %d clusters, %.1f MB, %.1f s\n", c.rows.size(),
                         c.cluster.back(), static_cast<double>(bytes) / 1e6, seconds_since(t0));
            return 0;
        }
        const minhash::ShingleSpec spec{minhash::ShingleUnit::Word, 5};  // minhash(text)'s default
        auto pairs = gen::planted_document_pairs(c, spec);
        const auto planted = pairs.size();
        const auto extra = gen::accidental_document_pairs(c, spec, a.join);
        pairs.insert(pairs.end(), extra.begin(), extra.end());
        write_truth(a.truth, pairs);
        std::fprintf(stderr, "docs: %zu rows, %d clusters, %zu planted pairs, %zu other pairs >= %.2f, %.1f s\n",
                     c.rows.size(), c.cluster.back(), planted, extra.size(), a.join, seconds_since(t0));
    } else if (a.mode == "baskets") {
        const gen::Corpus c = gen::make_baskets(opt);
        write_rows(a.out, c);
        const auto pairs = gen::planted_basket_pairs(c);
        write_truth(a.truth, pairs);
        std::fprintf(stderr, "baskets: %zu rows, %zu planted pairs, %.1f s\n", c.rows.size(), pairs.size(),
                     seconds_since(t0));
    } else if (a.mode == "perms") {
        const auto docs = gen::make_permutations(a.words, a.count, opt.seed);
        FILE *f = open_out(a.out);
        for (size_t i = 0; i < docs.size(); ++i) std::fprintf(f, "%zu\t%s\n", i + 1, docs[i].c_str());
        std::fclose(f);
    } else {
        usage();
    }
    return 0;
}
