// libFuzzer target: arbitrary bytes (any UTF-8 validity) through
// normalization, shingling and signatures. Checks, besides "no crash, no
// sanitizer report", the invariants the SQL surface relies on:
//  - every unit is a non-empty range inside the normalized text, in order;
//  - the fast normalizer (ASCII 64 bytes at a time) writes the same text and
//    units as the general one, code point by code point, under the ignore
//    flags of the input;
//  - under ignore flags the text normalizes as the plain normalizer
//    normalizes the text rewritten (each code point's NFD, by libunistring's
//    u32_normalize, with nonspacing marks, or punctuation and symbols, taken
//    out);
//  - the streamed distinct shingles (minhash_shingles) equal every window of
//    the recorded units, deduplicated in order of first appearance;
//  - minhash(doc) equals the signature of minhash_shingles(doc);
//  - the estimate of a signature with itself is 1;
//  - the streamed shingle hashes (for_each_shingle_hash, exact pairs) equal
//    the hash of every window of the recorded units, in order;
//  - the oph family's sketch of the text (units hashed where the normalizer
//    wrote them, 16 bytes at a time) equals its definition
//    (oph_element_hashes of the recorded units).
// The first input byte picks unit, k and the ignore flags, the rest is the
// document.
#include <unictype.h>
#include <uninorm.h>
#include <unistr.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/hash.h"
#include "core/jaccard.h"
#include "core/oph.h"
#include "core/shingle.h"
#include "core/signature.h"

using namespace minhash;

namespace {

void check(bool ok) {
    if (!ok)
        std::abort();
}

// The text as ignore flags define it (ignore_test.cpp has the same
// reference): NFD of each code point, ignored code points removed, a
// malformed byte replaced by U+0001 (a separator, as the byte is).
std::string rewrite(std::string_view doc, uint8_t ignore) {
    std::string out;
    const auto *s = reinterpret_cast<const uint8_t *>(doc.data());
    for (size_t i = 0; i < doc.size();) {
        ucs4_t uc;
        const int len = u8_mbtoucr(&uc, s + i, doc.size() - i);
        if (len <= 0) {
            out += '\x01';
            ++i;
            continue;
        }
        i += static_cast<size_t>(len);
        uint32_t buf[32];
        size_t n = 1;
        const uint32_t *d = &uc;
        if (ignore & kIgnoreAccents) {
            n = 32;
            check(u32_normalize(UNINORM_NFD, &uc, 1, buf, &n) == buf);
            d = buf;
        }
        for (size_t j = 0; j < n; ++j) {
            if ((ignore & kIgnoreAccents) && uc_is_general_category(d[j], UC_CATEGORY_Mn))
                continue;
            if ((ignore & kIgnorePunctuation) && (uc_is_general_category(d[j], UC_CATEGORY_P) ||
                                                  uc_is_general_category(d[j], UC_CATEGORY_S)))
                continue;
            uint8_t bytes[4];
            out.append(reinterpret_cast<char *>(bytes),
                       static_cast<size_t>(u8_uctomb(bytes, d[j], 4)));
        }
    }
    return out;
}

// A family's streamed signature of the text (text(a)) equals its fold of
// the hashes of the recorded shingles or units (set(b)), value for value.
template <class Text, class Set>
void check_streamed_equals_set(int n, uint32_t *a, uint32_t *b, Text text, Set set) {
    signature_init(a, n);
    signature_init(b, n);
    check(text(a) == Status::Ok);
    set(b);
    for (int i = 0; i < n; ++i)
        check(a[i] == b[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    static PermutationFamily family, datasketch;
    static bool ready = false;
    if (!ready) {
        init_permutation_family(&family, 24, kDefaultSeed);
        init_permutation_family(&datasketch, 24, kDefaultSeed, HashFamily::Datasketch);
        ready = true;
    }
    const uint8_t ctl = data[0];
    const ShingleUnit unit = static_cast<ShingleUnit>(ctl % 3);
    const int k = 1 + (ctl / 3) % 12;
    const uint8_t ignore = (ctl / 36) & kIgnoreAll;
    const std::string_view doc(reinterpret_cast<const char *>(data + 1), size - 1);

    const NormalizedText norm = normalize(doc, unit, NormalizePath::Fast, ignore);
    check(norm.starts.size() == norm.ends.size());
    const NormalizedText general = normalize(doc, unit, NormalizePath::General, ignore);
    check(norm.text == general.text && norm.starts == general.starts && norm.ends == general.ends);
    if (ignore != 0) {
        const NormalizedText plain = normalize(rewrite(doc, ignore), unit, NormalizePath::General);
        check(norm.text == plain.text && norm.starts == plain.starts && norm.ends == plain.ends);
    }
    // Full case folding turns one code point into at most three times its
    // UTF-8 bytes (U+0390 -> U+03B9 U+0308 U+0301): kMaxExpansion in normalize_impl.h.
    check(norm.text.size() <= 3 * doc.size());
    for (size_t i = 0; i < norm.starts.size(); ++i) {
        check(norm.starts[i] < norm.ends[i]);
        check(norm.ends[i] <= norm.text.size());
        check(i == 0 || norm.ends[i - 1] <= norm.starts[i]);
    }

    const ShingleSpec spec{unit, k, ignore};
    const std::vector<std::string> shingles = distinct_shingles(doc, spec);
    std::vector<std::string> windows;
    std::unordered_set<std::string_view> seen;
    for_each_shingle(norm, k, [&](std::string_view s) {
        if (seen.insert(s).second)
            windows.emplace_back(s);
    });
    check(shingles == windows);
    std::vector<uint64_t> hashes;
    for (const auto &s : shingles) {
        check(!s.empty());
        hashes.push_back(hash_bytes(s));
    }
    uint32_t from_text[24], from_set[24];
    check_streamed_equals_set(
        24, from_text, from_set,
        [&](uint32_t *sig) { return signature_of_text(family, doc, spec, sig, nullptr); },
        [&](uint32_t *sig) { signature_update(family, hashes.data(), hashes.size(), sig); });
    check(jaccard_estimate(from_text, from_set, 24) == 1.0);

    // The datasketch family hashes the same shingle bytes (with SHA-1).
    std::vector<uint64_t> ds_hashes;
    for (const auto &s : shingles)
        ds_hashes.push_back(family_hash(HashFamily::Datasketch, s.data(), s.size()));
    check_streamed_equals_set(
        24, from_text, from_set,
        [&](uint32_t *sig) { return signature_of_text(datasketch, doc, spec, sig, nullptr); },
        [&](uint32_t *sig) { signature_update(datasketch, ds_hashes.data(), ds_hashes.size(), sig); });
    // the streamed hashes of exact pairs verification: every window's hash, in order
    std::vector<uint64_t> all, streamed;
    for_each_shingle(norm, k, [&](std::string_view s) { all.push_back(hash_bytes(s)); });
    check(for_each_shingle_hash(
              doc, spec, nullptr,
              [](void *ctx, const uint64_t *h, size_t n) {
                  auto *v = static_cast<std::vector<uint64_t> *>(ctx);
                  v->insert(v->end(), h, h + n);
                  return true;
              },
              &streamed) == Status::Ok);
    check(streamed == all);

    static OphFamily oph;
    if (oph.num_bins == 0)
        init_oph_family(&oph, 64, kDefaultSeed);
    const std::vector<uint64_t> elems = oph_element_hashes(norm, k);
    uint32_t oph_text[64], oph_set[64];
    check_streamed_equals_set(
        64, oph_text, oph_set,
        [&](uint32_t *sig) { return oph_sketch_of_text(oph, doc, spec, sig, nullptr); },
        [&](uint32_t *sig) { oph_update(oph, elems.data(), elems.size(), sig); });
    return 0;
}
