// Signs the first N documents of a minhash-gen COPY file R times with one
// family and prints a checksum of the signatures: a fixed amount of work for
// valgrind to count (bench/experiments/signing_instructions.sh). On a shared
// machine timed rates swing by 20-40% between runs; instruction counts and
// simulated branch mispredictions repeat exactly. Running it with R and
// R + 2 and taking the difference leaves out loading the file.
//
//   build/core/sign_count DOCS.tsv N native|oph [R]
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/oph.h"
#include "core/signature.h"
#include "gen/copy_format.h"

int main(int argc, char **argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: sign_count DOCS.tsv N native|oph [R]\n");
        return 2;
    }
    const size_t rows = std::strtoull(argv[2], nullptr, 10);
    const std::string family_name = argv[3];
    const int repeats = argc > 4 ? std::atoi(argv[4]) : 1;
    if (family_name != "native" && family_name != "oph") {
        std::fprintf(stderr, "sign_count: family is native or oph\n");
        return 2;
    }
    std::ifstream in(argv[1]);
    std::vector<std::string> docs;
    std::string line;
    size_t bytes = 0;
    while (docs.size() < rows && std::getline(in, line)) {
        const size_t t1 = line.find('\t');
        const size_t t2 = line.find('\t', t1 + 1);
        if (t2 == std::string::npos)
            continue;
        docs.push_back(gen::copy_unescape(std::string_view(line).substr(t2 + 1)));
        bytes += docs.back().size();
    }
    constexpr int k = 128;
    const minhash::ShingleSpec spec{minhash::ShingleUnit::Word, 5};
    minhash::OphFamily oph;
    minhash::init_oph_family(&oph, k, minhash::kDefaultSeed);
    minhash::PermutationFamily native;
    minhash::init_permutation_family(&native, k, minhash::kDefaultSeed);
    uint64_t checksum = 0;
    uint32_t sig[k];
    for (int r = 0; r < repeats; ++r)
        for (const std::string &d : docs) {
            minhash::signature_init(sig, k);
            if (family_name == "oph") {
                minhash::oph_sketch_of_text(oph, d, spec, sig, nullptr);
                minhash::oph_densify(oph, sig, sig);
            } else {
                minhash::signature_of_text(native, d, spec, sig, nullptr);
            }
            for (uint32_t v : sig)
                checksum = checksum * 31 + v;
        }
    std::printf("%zu documents, %zu bytes, checksum %016llx\n", docs.size(), bytes,
                static_cast<unsigned long long>(checksum));
    return 0;
}
