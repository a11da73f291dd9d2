// Throughput of signature_of_text on real text, for developing the core
// (the official benchmarks live in bench/). Not a test: built as
// core_throughput, run by hand:
//   build/core/core_throughput [--unit word|char|char_nospace] [--k 5] [--num-perm 128]
//                              [--doc-bytes 2000] [--seconds 2] FILE...
// Splits the files' text into documents of about doc-bytes (at whitespace)
// and reports MB/s of input per core, best of three timed rounds. Time is the
// thread's CPU time, so other load on a shared machine does not count
// (cache and SMT sharing still can).
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/shingle.h"
#include "core/signature.h"
#include "core/signature_impl.h"

using namespace minhash;

static double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    ShingleSpec spec;
    int num_perm = 128;
    size_t doc_bytes = 2000;
    double seconds = 2.0;
    std::string text;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&]() -> const char * {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "missing value for %s\n", arg.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (arg == "--unit") {
            if (!parse_shingle_unit(next(), &spec.unit)) {
                std::fprintf(stderr, "unknown unit\n");
                return 2;
            }
        } else if (arg == "--k") {
            spec.k = std::atoi(next());
        } else if (arg == "--num-perm") {
            num_perm = std::atoi(next());
        } else if (arg == "--doc-bytes") {
            doc_bytes = std::strtoul(next(), nullptr, 10);
        } else if (arg == "--seconds") {
            seconds = std::atof(next());
        } else {
            std::ifstream in(arg, std::ios::binary);
            if (!in) {
                std::fprintf(stderr, "cannot read %s\n", arg.c_str());
                return 2;
            }
            std::stringstream ss;
            ss << in.rdbuf();
            text += ss.str();
            text += '\n';
        }
    }
    if (text.empty()) {
        std::fprintf(stderr, "usage: %s [options] FILE...\n", argv[0]);
        return 2;
    }
    std::vector<std::string_view> docs;
    for (size_t pos = 0; pos < text.size();) {
        size_t end = std::min(text.size(), pos + doc_bytes);
        while (end < text.size() && text[end] != ' ' && text[end] != '\n')
            ++end;
        docs.emplace_back(text.data() + pos, end - pos);
        pos = end;
    }

    static PermutationFamily family;
    init_permutation_family(&family, num_perm, kDefaultSeed);
    std::vector<uint32_t> sig(num_perm);
    uint64_t checksum = 0;
    double best = 0.0;
    for (int round = 0; round < 3; ++round) {
        size_t bytes = 0;
        const double t0 = cpu_seconds();
        double elapsed = 0.0;
        do {
            for (std::string_view d : docs) {
                signature_init(sig.data(), num_perm);
                signature_of_text(family, d, spec, sig.data(), nullptr);
                checksum += sig[0];
                bytes += d.size();
            }
            elapsed = cpu_seconds() - t0;
        } while (elapsed < seconds / 3);
        best = std::max(best, bytes / elapsed / 1e6);
    }
    std::printf("unit=%s k=%d num_perm=%d docs=%zu avg_doc_bytes=%.0f kernel=%s: %.1f MB/s "
                "(checksum %llu)\n",
                shingle_unit_name(spec.unit), spec.k, num_perm, docs.size(),
                double(text.size()) / docs.size(),
                detail::cpu_has_avx2() ? "avx2" : "portable", best,
                static_cast<unsigned long long>(checksum));
    return 0;
}
