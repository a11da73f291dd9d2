// MinHash signatures.
//
// The hash family. Each shingle is hashed once with XXH3-64 and folded to a
// 32-bit key x = lo ^ hi. Function i is Dietzfelbinger's multiply-add-shift
//
//     h_i(x) = ((a_i · x + b_i) mod 2^64) >> 32,     a_i, b_i 64-bit,
//
// which is strongly universal (pairwise independent) from 32-bit keys to
// 32-bit values when a_i, b_i are uniform (Dietzfelbinger 1996; Thorup,
// "High speed hashing for integers and strings"). Why this family rather than
// the ones the seeds compare:
//  - modular ((a·x + b) mod p, p = 2^61−1) has the same guarantee but needs a
//    128-bit product and a reduction per function;
//  - plain multiplicative hashing (a·x >> s) is only universal, not
//    pairwise independent;
//  - Murmur3/Jenkins with k seeds cost a full hash per function (k times the
//    work) and give no stated independence guarantee.
// Here a function costs one multiply-add on 32-bit halves: a·x mod 2^64 =
// lo(a)·x + (hi(a)·x << 32), and only the top 32 bits are kept, so
// hi(a)·x is needed mod 2^32 only. That maps onto vpmuludq (32×32→64) and
// vpmulld (32×32→32) in SIMD lanes, many shingles per pass over the
// signature (see signature_avx2.cpp). The keys themselves are XXH3 outputs,
// so the family is applied to well-spread values and behaves like k random
// permutations for MinHash in practice (the unbiasedness test checks it).
//
// a_i and b_i are outputs 2i and 2i+1 of splitmix64 seeded with `seed`: they
// depend on (seed, i) only, never on k, so a signature's prefix of length j
// is the j-function signature. All arithmetic is integer: bit-identical on
// every machine and in every kernel.
#include "core/signature.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/datasketch.h"
#include "core/guard_impl.h"
#include "core/normalize_impl.h"
#include "core/oph.h"
#include "core/signature_impl.h"

// The shingle hash is hash_bytes (XXH3-64, seed 0); in this hot loop it is
// compiled inline from the same xxhash.h (its documented XXH_INLINE_ALL mode),
// which saves the library call on every short shingle. The tests check that
// both give the same signatures.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace minhash {

namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

// The n-th output (n ≥ 1) of splitmix64 seeded with `seed` (Steele et al.,
// "Fast splittable pseudorandom number generators").
uint64_t splitmix64_nth(uint64_t seed, uint64_t n) {
    uint64_t z = seed + n * kGolden;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int clamp_num_perm(int k) { return std::clamp(k, kMinNumPerm, kMaxNumPerm); }

}  // namespace

namespace detail {

namespace {

// Several shingles per pass: each a_i, b_i and sig[i] is loaded once per
// block instead of once per shingle. A short final block is padded with
// copies of its first key, which cannot change a minimum. key_of turns a
// 64-bit element hash into the family's key, permute_fn is h_i(key).
template <typename Key, typename KeyOf, typename Permute>
void update_in_blocks(const PermutationFamily &family, const uint64_t *hashes, size_t n,
                      uint32_t *sig, KeyOf key_of, Permute permute_fn) noexcept {
    constexpr size_t kBlock = 8;
    const int k = clamp_num_perm(family.num_perm);
    for (size_t done = 0; done < n; done += kBlock) {
        Key x[kBlock];
        const size_t m = std::min(kBlock, n - done);
        for (size_t j = 0; j < kBlock; ++j)
            x[j] = key_of(hashes[done + (j < m ? j : 0)]);
        for (int i = 0; i < k; ++i) {
            const uint64_t a = family.a[i];
            const uint64_t b = family.b[i];
            uint32_t v = sig[i];
            for (size_t j = 0; j < kBlock; ++j)
                v = std::min(v, permute_fn(a, b, x[j]));
            sig[i] = v;
        }
    }
}

}  // namespace

void signature_update_portable(const PermutationFamily &family, const uint64_t *hashes, size_t n,
                               uint32_t *sig) noexcept {
    update_in_blocks<uint32_t>(family, hashes, n, sig, fold64, permute);
}

// The datasketch family: one SHA-1-derived 32-bit key per element, k
// modular permutations, the same blocking; no SIMD (the SHA-1 per element
// costs more than the permutations).
void signature_update_datasketch(const PermutationFamily &family, const uint64_t *hashes,
                                 size_t n, uint32_t *sig) noexcept {
    update_in_blocks<uint64_t>(
        family, hashes, n, sig, [](uint64_t h) { return h & UINT32_MAX; }, datasketch_permute);
}

}  // namespace detail

bool parse_hash_family(std::string_view name, HashFamily *out) noexcept {
    if (name == "native")
        *out = HashFamily::Native;
    else if (name == "datasketch")
        *out = HashFamily::Datasketch;
    else if (name == "oph")
        *out = HashFamily::Oph;
    else
        return false;
    return true;
}

const char *hash_family_name(HashFamily family) noexcept {
    switch (family) {
    case HashFamily::Native:
        return "native";
    case HashFamily::Datasketch:
        return "datasketch";
    case HashFamily::Oph:
        return "oph";
    }
    return "unknown";
}

uint64_t family_hash(HashFamily family, const void *data, size_t len) noexcept {
    switch (family) {
        case HashFamily::Datasketch:
            return sha1_hash32(data, len);
        case HashFamily::Oph:
            return oph_unit_hash(data, len);  // an element is a unit: text with k = 1 is its words
        case HashFamily::Native:
            break;
    }
    return XXH3_64bits(data, len);
}

void init_permutation_family(PermutationFamily *family, int num_perm, uint64_t seed,
                             HashFamily kind) noexcept {
    const int k = clamp_num_perm(num_perm);
    family->num_perm = k;
    family->seed = seed;
    family->kind = kind;
    if (kind == HashFamily::Datasketch) {
        // Interleaved a_0, b_0, a_1, b_1, ... as datasketch's list comprehension draws them.
        Mt19937 rng(static_cast<uint32_t>(seed));
        for (int i = 0; i < k; ++i) {
            family->a[i] = legacy_randint_u64(rng, 1, kMersenne61);
            family->b[i] = legacy_randint_u64(rng, 0, kMersenne61);
        }
    } else {
        for (int i = 0; i < k; ++i) {
            family->a[i] = splitmix64_nth(seed, 2 * uint64_t(i) + 1);
            family->b[i] = splitmix64_nth(seed, 2 * uint64_t(i) + 2);
        }
    }
    // Unused tail zeroed so the struct's bytes are a function of (k, seed, kind).
    for (int i = k; i < kMaxNumPerm; ++i)
        family->a[i] = family->b[i] = 0;
}

void signature_init(uint32_t *sig, int num_perm) noexcept {
    std::fill(sig, sig + clamp_num_perm(num_perm), kEmptyValue);
}

void signature_update(const PermutationFamily &family, const uint64_t *hashes, size_t n,
                      uint32_t *sig) noexcept {
    if (family.kind == HashFamily::Datasketch)
        detail::signature_update_datasketch(family, hashes, n, sig);
    else
        detail::native_kernel()(family, hashes, n, sig);
}

void signature_merge(uint32_t *into, const uint32_t *other, int num_perm) noexcept {
    const int k = clamp_num_perm(num_perm);
    for (int i = 0; i < k; ++i)
        into[i] = std::min(into[i], other[i]);
}

namespace {

// Hashes each shingle (a substring of the text, the window is WindowSink's)
// and folds the hashes into the signature a block at a time. A shingle is
// remembered as a byte range and hashed when its block is full: hashed at
// once, its last bytes would be read straight after the normalizer's 16-byte
// store of its last word, a load the CPU cannot forward from a store it only
// partly overlaps, which stalls until the store completes (about 10% of the
// loop on 2-4 KB documents).
class SignatureConsumer {
  public:
    SignatureConsumer(const PermutationFamily &family, const char *text, uint32_t *sig,
                      InterruptFlag interrupt)
        : family_(family), text_(text), sig_(sig), interrupt_(interrupt) {}

    bool shingle(uint32_t start, uint32_t end) {
        start_[nblock_] = start;
        length_[nblock_] = end - start;
        if (++nblock_ == kBlock)
            flush();
        return true;
    }
    bool poll() {
        if (interrupt_ && *interrupt_)
            interrupted_ = true;
        return !interrupted_;
    }
    void flush() {
        uint64_t hashes[kBlock];
        if (family_.kind == HashFamily::Native)
            for (size_t j = 0; j < nblock_; ++j)
                hashes[j] = XXH3_64bits(text_ + start_[j], length_[j]);
        else
            for (size_t j = 0; j < nblock_; ++j)
                hashes[j] = family_hash(family_.kind, text_ + start_[j], length_[j]);
        signature_update(family_, hashes, nblock_, sig_);
        nblock_ = 0;
    }
    Status status() const { return interrupted_ ? Status::Interrupted : Status::Ok; }

  private:
    static constexpr size_t kBlock = 64;

    const PermutationFamily &family_;
    const char *text_;
    uint32_t *sig_;
    InterruptFlag interrupt_;
    bool interrupted_ = false;
    size_t nblock_ = 0;
    uint32_t start_[kBlock];
    uint32_t length_[kBlock];
};

}  // namespace

Status signature_of_text(const PermutationFamily &family, std::string_view doc,
                         const ShingleSpec &spec, uint32_t *sig, InterruptFlag interrupt) noexcept {
    return detail::guarded([&] {
        if (detail::too_large_to_shingle(doc.size()))
            return Status::TooLarge;
        // The normalized text, hashed in place: on the stack for documents
        // of up to a few KB (most mail and web pages), else the one
        // allocation. A malloc and free of ~10 KB per row cost 5% of the
        // loop (perf, core_bench).
        char local[detail::kStackText];
        std::unique_ptr<char[]> heap;
        char *text = local;
        if (detail::normalized_capacity(doc.size()) > sizeof local) {
            heap.reset(new char[detail::normalized_capacity(doc.size())]);
            text = heap.get();
        }
        SignatureConsumer consumer(family, text, sig, interrupt);
        if (detail::shingle_document(doc, spec, text, consumer))
            consumer.flush();
        return consumer.status();
    });
}

Status signature_of_units(const PermutationFamily &family, const UnitText &units, int k,
                          uint32_t *sig, InterruptFlag interrupt) noexcept {
    SignatureConsumer consumer(family, units.text, sig, interrupt);
    if (detail::shingle_units(units, k, consumer))
        consumer.flush();
    return consumer.status();
}

}  // namespace minhash
