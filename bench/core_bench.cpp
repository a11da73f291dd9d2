// The core signature loop outside PostgreSQL, over the benchmark's own corpus,
// so run.sh can put the SQL throughput beside it and show the database's
// overhead. Also splits the loop into its stages (shingling+hashing vs the
// k-permutation minimum) to show where the time goes.
//
//   MINHASH_BENCH_DOCS=docs.tsv MINHASH_BENCH_BASKETS=baskets.tsv build/core_bench
//
// The native family's kernel is the one the CPU's widest instruction set
// runs, or the one MINHASH_SIMD names (portable, avx2, avx512): run the
// program once per kernel to compare them (bench/lib/section_toast.sh does).
// Rates are per CPU second of the benchmark thread (Google Benchmark's
// default), like the SQL side, which run.sh measures from the backend's
// /proc/self/stat: on a shared machine wall time would mostly measure the
// neighbours. Files are minhash-gen's COPY output (id, cluster, body). Only the first
// MINHASH_BENCH_ROWS rows (default 20000) are used: the per-byte rate does
// not depend on the corpus size, and an iteration stays short.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/entry_sort.h"
#include "core/hash.h"
#include "core/oph.h"
#include "core/signature.h"
#include "core/signature_impl.h"
#include "gen/copy_format.h"

namespace {

std::vector<std::string> load_column(const char *env, size_t max_rows) {
    std::vector<std::string> out;
    const char *path = std::getenv(env);
    if (!path) return out;
    std::ifstream in(path);
    std::string line;
    while (out.size() < max_rows && std::getline(in, line)) {
        const size_t t1 = line.find('\t');
        const size_t t2 = line.find('\t', t1 + 1);
        if (t2 == std::string::npos) continue;
        out.push_back(gen::copy_unescape(std::string_view(line).substr(t2 + 1)));
    }
    return out;
}

size_t max_rows() {
    const char *s = std::getenv("MINHASH_BENCH_ROWS");
    return s ? std::strtoull(s, nullptr, 10) : 20000;
}

const std::vector<std::string> &documents() {
    static const auto docs = load_column("MINHASH_BENCH_DOCS", max_rows());
    return docs;
}

// Baskets as their elements' text forms: what minhash(anyarray) hashes.
const std::vector<std::vector<std::string>> &baskets() {
    static const auto sets = [] {
        std::vector<std::vector<std::string>> out;
        for (const std::string &lit : load_column("MINHASH_BENCH_BASKETS", max_rows())) {
            std::vector<std::string> items;
            std::string cur;
            for (char ch : lit) {
                if (ch == '{') continue;
                if (ch == ',' || ch == '}') {
                    if (!cur.empty()) items.push_back(cur);
                    cur.clear();
                } else {
                    cur += ch;
                }
            }
            out.push_back(std::move(items));
        }
        return out;
    }();
    return sets;
}

size_t total_bytes(const std::vector<std::string> &docs) {
    size_t n = 0;
    for (const auto &d : docs) n += d.size();
    return n;
}

std::unique_ptr<minhash::PermutationFamily> family_for(
    int num_perm, minhash::HashFamily kind = minhash::HashFamily::Native) {
    auto f = std::make_unique<minhash::PermutationFamily>();
    minhash::init_permutation_family(f.get(), num_perm, minhash::kDefaultSeed, kind);
    return f;
}

// What SELECT minhash(body) does per row: shingle, hash, fold into k minima
// (ignore: minhash(body, ignore => ...)'s flags).
void text_signatures(benchmark::State &state, minhash::HashFamily kind, int k,
                     uint8_t ignore = 0) {
    const auto &docs = documents();
    if (docs.empty()) return state.SkipWithError("set MINHASH_BENCH_DOCS");
    const auto family = family_for(k, kind);
    if (kind == minhash::HashFamily::Native)
        state.SetLabel(minhash::simd_level_name(minhash::simd_in_use()));
    const minhash::ShingleSpec spec{minhash::ShingleUnit::Word, 5, ignore};
    std::vector<uint32_t> sig(k);
    for (auto _ : state) {
        for (const auto &d : docs) {
            minhash::signature_init(sig.data(), k);
            minhash::signature_of_text(*family, d, spec, sig.data(), nullptr);
            benchmark::DoNotOptimize(sig.data());
        }
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * total_bytes(docs)));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * docs.size()));
}

void BM_SignatureText(benchmark::State &state) {
    text_signatures(state, minhash::HashFamily::Native, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_SignatureText)->Arg(64)->Arg(128)->Arg(256)->Unit(benchmark::kMillisecond);

// minhash(body, ignore => ...) at k = 128: the argument is the flags (0 none,
// 1 accents, 2 punctuation, 3 both), so /0 is BM_SignatureText/128 again.
void BM_SignatureTextIgnore(benchmark::State &state) {
    text_signatures(state, minhash::HashFamily::Native, 128,
                    static_cast<uint8_t>(state.range(0)));
}
BENCHMARK(BM_SignatureTextIgnore)->Arg(0)->Arg(1)->Arg(2)->Arg(3)->Unit(benchmark::kMillisecond);

// The datasketch family: SHA-1 of each shingle, k modular permutations.
void BM_DatasketchText(benchmark::State &state) {
    text_signatures(state, minhash::HashFamily::Datasketch, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_DatasketchText)->Arg(128)->Unit(benchmark::kMillisecond);

// The same documents through the one-permutation family (core oph.h): word
// hashes combined per shingle, one bin per shingle, densified at the end.
void BM_OphText(benchmark::State &state) {
    const auto &docs = documents();
    if (docs.empty()) return state.SkipWithError("set MINHASH_BENCH_DOCS");
    const int k = static_cast<int>(state.range(0));
    minhash::OphFamily family;
    minhash::init_oph_family(&family, k, minhash::kDefaultSeed);
    const minhash::ShingleSpec spec{minhash::ShingleUnit::Word, 5};
    std::vector<uint32_t> sig(k);
    for (auto _ : state) {
        for (const auto &d : docs) {
            minhash::signature_init(sig.data(), k);
            minhash::oph_sketch_of_text(family, d, spec, sig.data(), nullptr);
            minhash::oph_densify(family, sig.data(), sig.data());
            benchmark::DoNotOptimize(sig.data());
        }
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * total_bytes(docs)));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * docs.size()));
}
BENCHMARK(BM_OphText)->Arg(128)->Unit(benchmark::kMillisecond);

// Densifying an oph sketch with `filled` of 128 bins filled (a short text or
// a small array), as every comparison of such a sketch does: arg 1 = 0 by
// the definition (each empty bin probes its sequence), 1 as oph_densify
// does it (a table of first arrivals while fewer than k / 8 bins are filled).
void BM_OphDensify(benchmark::State &state) {
    const int k = 128;
    const int filled = static_cast<int>(state.range(0));
    minhash::OphFamily family;
    minhash::init_oph_family(&family, k, minhash::kDefaultSeed);
    std::mt19937_64 rng(1);
    std::vector<int> bins(k);
    for (int i = 0; i < k; ++i)
        bins[i] = i;
    std::shuffle(bins.begin(), bins.end(), rng);
    std::vector<uint32_t> sketch(k, minhash::kEmptyValue), sig(k);
    for (int b = 0; b < filled; ++b)
        sketch[bins[b]] = static_cast<uint32_t>(rng() >> 40);
    for (auto _ : state) {
        if (state.range(1) == 0)
            minhash::detail::oph_densify_by_probing(family, sketch.data(), sig.data());
        else
            minhash::oph_densify(family, sketch.data(), sig.data());
        benchmark::DoNotOptimize(sig.data());
    }
}
BENCHMARK(BM_OphDensify)->ArgsProduct({{1, 3, 7, 15, 21, 40}, {0, 1}})->Unit(benchmark::kNanosecond);

// Stage 1 alone: normalise, cut into 5-word shingles, XXH3 each.
void BM_ShingleAndHash(benchmark::State &state) {
    const auto &docs = documents();
    if (docs.empty()) return state.SkipWithError("set MINHASH_BENCH_DOCS");
    for (auto _ : state) {
        uint64_t acc = 0;
        for (const auto &d : docs) {
            const auto norm = minhash::normalize(d, minhash::ShingleUnit::Word);
            minhash::for_each_shingle(norm, 5, [&](std::string_view s) { acc ^= minhash::hash_bytes(s); });
        }
        benchmark::DoNotOptimize(acc);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * total_bytes(docs)));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * docs.size()));
}
BENCHMARK(BM_ShingleAndHash)->Unit(benchmark::kMillisecond);

// Stage 2 alone: k permutations over precomputed shingle hashes
// (items = shingles here, not documents).
void BM_PermutationMin(benchmark::State &state) {
    const auto &docs = documents();
    if (docs.empty()) return state.SkipWithError("set MINHASH_BENCH_DOCS");
    const int k = static_cast<int>(state.range(0));
    const auto family = family_for(k);
    std::vector<std::vector<uint64_t>> hashes;
    size_t shingles = 0, bytes = 0;
    for (const auto &d : docs) {
        std::vector<uint64_t> h;
        minhash::for_each_shingle(minhash::normalize(d, minhash::ShingleUnit::Word), 5,
                                  [&](std::string_view s) { h.push_back(minhash::hash_bytes(s)); });
        shingles += h.size();
        bytes += d.size();
        hashes.push_back(std::move(h));
    }
    std::vector<uint32_t> sig(k);
    for (auto _ : state) {
        for (const auto &h : hashes) {
            minhash::signature_init(sig.data(), k);
            minhash::signature_update(*family, h.data(), h.size(), sig.data());
            benchmark::DoNotOptimize(sig.data());
        }
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * shingles));
}
BENCHMARK(BM_PermutationMin)->Arg(128)->Unit(benchmark::kMillisecond);

// The minima kernels side by side on the same shingle hashes (stage 2 as
// above): 0 portable, 1 AVX2, 2 AVX-512; a kernel the CPU lacks is skipped.
void BM_MinimaKernel(benchmark::State &state) {
    const auto &docs = documents();
    if (docs.empty()) return state.SkipWithError("set MINHASH_BENCH_DOCS");
    using Kernel = void (*)(const minhash::PermutationFamily &, const uint64_t *, size_t, uint32_t *) noexcept;
    const int which = static_cast<int>(state.range(0));
    Kernel kernel = minhash::detail::signature_update_portable;
    if (which == 1) {
        if (!minhash::detail::cpu_has_avx2()) return state.SkipWithError("no AVX2");
        kernel = minhash::detail::signature_update_avx2;
    } else if (which == 2) {
        if (!minhash::detail::cpu_has_avx512()) return state.SkipWithError("no AVX-512");
        kernel = minhash::detail::signature_update_avx512;
    }
    state.SetLabel(which == 0 ? "portable" : which == 1 ? "avx2" : "avx512");
    const int k = 128;
    const auto family = family_for(k);
    std::vector<std::vector<uint64_t>> hashes;
    size_t shingles = 0, bytes = 0;
    for (const auto &d : docs) {
        std::vector<uint64_t> h;
        minhash::for_each_shingle(minhash::normalize(d, minhash::ShingleUnit::Word), 5,
                                  [&](std::string_view s) { h.push_back(minhash::hash_bytes(s)); });
        shingles += h.size();
        bytes += d.size();
        hashes.push_back(std::move(h));
    }
    std::vector<uint32_t> sig(k);
    for (auto _ : state) {
        for (const auto &h : hashes) {
            minhash::signature_init(sig.data(), k);
            kernel(*family, h.data(), h.size(), sig.data());
            benchmark::DoNotOptimize(sig.data());
        }
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * shingles));
}
BENCHMARK(BM_MinimaKernel)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// What minhash(anyarray) does per row: hash each element's text form, fold.
void BM_SignatureBasket(benchmark::State &state) {
    const auto &sets = baskets();
    if (sets.empty()) return state.SkipWithError("set MINHASH_BENCH_BASKETS");
    const int k = static_cast<int>(state.range(0));
    const auto family = family_for(k);
    std::vector<uint32_t> sig(k);
    std::vector<uint64_t> h;
    size_t bytes = 0;  // of the element text forms hashed
    for (const auto &s : sets)
        for (const auto &e : s) bytes += e.size();
    for (auto _ : state) {
        for (const auto &s : sets) {
            h.clear();
            for (const auto &e : s) h.push_back(minhash::hash_bytes(e));
            minhash::signature_init(sig.data(), k);
            minhash::signature_update(*family, h.data(), h.size(), sig.data());
            benchmark::DoNotOptimize(sig.data());
        }
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * sets.size()));
}
BENCHMARK(BM_SignatureBasket)->Arg(128)->Unit(benchmark::kMillisecond);

// The lsh index's band-entry sort (core/entry_sort.h) beside the sorts it
// replaced, on the inputs the index sorts: range(0) the input, 0 a leaf in
// build order (in order), 1 a leaf with 10% appended (a sorted prefix and
// an unsorted tail: VACUUM's rewrite, a split, the pairs walk), 2 a leaf in
// no order, 3 a pending list's 8,000 rows of 30 bands in row order (the
// merge); range(1) the sort, 0 qsort, 1 std::sort, 2 sort_entries.
struct BenchEntry {
    uint32_t key;
    uint32_t value;
};

std::vector<BenchEntry> sort_input(int kind) {
    std::mt19937 rng(7);
    std::vector<BenchEntry> v;
    if (kind == 3) {
        for (uint32_t row = 0; row < 8000; row++)
            for (uint32_t band = 0; band < 30; band++)
                v.push_back({(band << 27) | (uint32_t(rng()) & 0x7FFFFFF), row * 3});
        return v;
    }
    // a full narrow leaf: 1165 entries, keys within 24 bits of its low key
    for (int i = 0; i < 1165; i++) v.push_back({0x5A000000u | (uint32_t(rng()) & 0xFFFFFF), uint32_t(rng() % 5000000)});
    const size_t in_order = kind == 0 ? v.size() : kind == 1 ? v.size() * 9 / 10 : 0;
    std::sort(v.begin(), v.begin() + in_order, minhash::entry_before<BenchEntry>);
    return v;
}

void BM_SortEntries(benchmark::State &state) {
    const int kind = static_cast<int>(state.range(0));
    const int sort = static_cast<int>(state.range(1));
    const std::vector<BenchEntry> input = sort_input(kind);
    std::vector<BenchEntry> v(input.size()), scratch(input.size());
    state.SetLabel(std::string(kind == 0 ? "leaf in order" : kind == 1 ? "leaf, 10% appended" : kind == 2 ? "leaf, no order" : "pending, row order") +
                   (sort == 0 ? ", qsort" : sort == 1 ? ", std::sort" : ", sort_entries"));
    for (auto _ : state) {
        state.PauseTiming();
        v = input;
        state.ResumeTiming();
        if (sort == 0)
            qsort(v.data(), v.size(), sizeof(BenchEntry), [](const void *a, const void *b) {
                const BenchEntry *x = static_cast<const BenchEntry *>(a);
                const BenchEntry *y = static_cast<const BenchEntry *>(b);
                return x->key != y->key ? (x->key < y->key ? -1 : 1) : x->value != y->value ? (x->value < y->value ? -1 : 1) : 0;
            });
        else if (sort == 1)
            std::sort(v.begin(), v.end(), minhash::entry_before<BenchEntry>);
        else
            minhash::sort_entries(v.data(), v.size(), scratch.data());
        benchmark::DoNotOptimize(v.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * input.size()));
}
BENCHMARK(BM_SortEntries)->ArgsProduct({{0, 1, 2, 3}, {0, 1, 2}})->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
