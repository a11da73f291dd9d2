// The core's side of the C++/PostgreSQL seam: every entry point the glue
// calls is noexcept and reports allocation failure and any other exception
// as a Status; the shingle window is one class, so text, recorded units and
// text search lexemes shingle alike; exact mode's hash set is bounded by the
// caller's buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/shingle.h"
#include "core/shingle_window.h"
#include "core/signature.h"

using namespace minhash;

// ---- allocation failure on demand: the test binary's operator new ----

namespace {
std::atomic<bool> g_fail_new{false};
}

void *operator new(size_t n) {
    if (g_fail_new.load(std::memory_order_relaxed))
        throw std::bad_alloc();
    if (void *p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}
void *operator new[](size_t n) { return ::operator new(n); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every
// block the deletes below free must come from malloc, or AddressSanitizer
// reports an alloc-dealloc mismatch in the other tests of this binary.
void *operator new(size_t n, const std::nothrow_t &) noexcept {
    if (g_fail_new.load(std::memory_order_relaxed))
        return nullptr;
    return std::malloc(n ? n : 1);
}
void *operator new[](size_t n, const std::nothrow_t &t) noexcept { return ::operator new(n, t); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }
void operator delete[](void *p, size_t) noexcept { std::free(p); }

namespace {

struct FailAllocations {
    FailAllocations() { g_fail_new = true; }
    ~FailAllocations() { g_fail_new = false; }
};

const char kDoc[] = "It was the best of times, it was the worst of times, it was the age of wisdom";

static_assert(noexcept(signature_of_text(std::declval<const PermutationFamily &>(), "", {},
                                         nullptr, nullptr)),
              "signature_of_text is noexcept");
static_assert(noexcept(distinct_shingles(std::string_view(), ShingleSpec{}, nullptr, 0,
                                         static_cast<DistinctShingles *>(nullptr))),
              "distinct_shingles is noexcept");
static_assert(noexcept(for_each_shingle_hash(std::string_view(), ShingleSpec{}, nullptr, nullptr,
                                             nullptr)),
              "for_each_shingle_hash is noexcept");
static_assert(noexcept(shingle_hash_set(std::string_view(), ShingleSpec{}, nullptr, nullptr)),
              "shingle_hash_set is noexcept");

TEST(Seam, AllocationFailureIsOutOfMemory) {
    static PermutationFamily fam;
    init_permutation_family(&fam, 16, 1);
    uint32_t sig[16];
    signature_init(sig, 16);
    DistinctShingles set;
    DistinctShingles *heap_set = &set;  // not null: the call must reset it
    std::vector<uint64_t> got;
    got.reserve(1024);
    // signature_of_text keeps the normalized text of a document of up to
    // about 5 KB on the stack: only a longer one allocates.
    std::string big;
    while (big.size() < 8192)
        big += kDoc;
    big += ' ';
    {
        FailAllocations fail;
        EXPECT_EQ(signature_of_text(fam, big, {}, sig, nullptr), Status::OutOfMemory);
        EXPECT_EQ(signature_of_text(fam, kDoc, {}, sig, nullptr), Status::Ok);
        EXPECT_EQ(distinct_shingles(kDoc, {}, nullptr, SIZE_MAX, &set), Status::OutOfMemory);
        EXPECT_EQ(new_distinct_shingles(kDoc, {}, nullptr, SIZE_MAX, &heap_set),
                  Status::OutOfMemory);
        EXPECT_EQ(heap_set, nullptr);
        EXPECT_EQ(for_each_shingle_hash(kDoc, {}, nullptr,
                                        [](void *, const uint64_t *, size_t) { return true; },
                                        nullptr),
                  Status::OutOfMemory);
    }
    EXPECT_EQ(set.size(), 0u);
    // and the same calls succeed once memory is there again
    EXPECT_EQ(signature_of_text(fam, kDoc, {}, sig, nullptr), Status::Ok);
    EXPECT_EQ(new_distinct_shingles(kDoc, {}, nullptr, SIZE_MAX, &heap_set), Status::Ok);
    ASSERT_NE(heap_set, nullptr);
    EXPECT_EQ(heap_set->size(), distinct_shingles(kDoc, ShingleSpec{}).size());
    free_distinct_shingles(heap_set);
    free_distinct_shingles(nullptr);
}

TEST(Seam, AnyOtherExceptionIsFailure) {
    const auto throwing = [](void *, const uint64_t *, size_t) -> bool {
        throw std::runtime_error("a bug in a sink");
    };
    EXPECT_EQ(for_each_shingle_hash(kDoc, {ShingleUnit::Word, 1}, nullptr, throwing, nullptr),
              Status::Failure);
}

// ---- one shingle window ----

TEST(ShingleWindow, CompletesShinglesAndShortTexts) {
    ShingleWindow w(3);
    uint32_t first = 99, end = 99;
    EXPECT_FALSE(w.short_text(&first, &end));  // no unit: no shingle
    EXPECT_FALSE(w.push(0, 1, &first));
    EXPECT_FALSE(w.push(2, 3, &first));
    EXPECT_TRUE(w.short_text(&first, &end));  // two units < k: one shingle, all of it
    EXPECT_EQ(first, 0u);
    EXPECT_EQ(end, 3u);
    EXPECT_TRUE(w.push(4, 6, &first));
    EXPECT_EQ(first, 0u);
    EXPECT_TRUE(w.push(7, 8, &first));
    EXPECT_EQ(first, 2u);
    EXPECT_FALSE(w.short_text(&first, &end));  // k units seen: no short-text shingle
    EXPECT_EQ(w.units(), 4u);
}

UnitText units_of(const NormalizedText &norm) {
    return UnitText{norm.text.data(), norm.starts.data(), norm.ends.data(), norm.starts.size()};
}

// The lexeme paths (units given) and the text paths (units found by the
// normalizer) give the same results on the same units: one window.
TEST(ShingleWindow, UnitPathsEqualTextPaths) {
    static PermutationFamily fam, ds;
    init_permutation_family(&fam, 64, 7);
    init_permutation_family(&ds, 64, 7, HashFamily::Datasketch);
    const std::string doc = std::string(kDoc) + " Ça va? Über-Größe, ΣΟΦΙΑΣ";
    for (int k : {1, 2, 3, 5, 40}) {
        const ShingleSpec spec{ShingleUnit::Word, k};
        const NormalizedText norm = normalize(doc, ShingleUnit::Word);
        const UnitText units = units_of(norm);
        for (const PermutationFamily *f : {&fam, &ds}) {
            std::vector<uint32_t> a(64), b(64);
            signature_init(a.data(), 64);
            signature_init(b.data(), 64);
            ASSERT_EQ(signature_of_text(*f, doc, spec, a.data(), nullptr), Status::Ok);
            ASSERT_EQ(signature_of_units(*f, units, k, b.data(), nullptr), Status::Ok);
            EXPECT_EQ(a, b) << "k=" << k;
        }
        DistinctShingles from_units;
        ASSERT_EQ(distinct_shingles(units, k, nullptr, SIZE_MAX, &from_units), Status::Ok);
        std::vector<std::string> got;
        for (size_t i = 0; i < from_units.size(); ++i)
            got.emplace_back(from_units[i]);
        EXPECT_EQ(got, distinct_shingles(doc, spec)) << "k=" << k;
    }
    // no units: no shingle
    UnitText none{"", nullptr, nullptr, 0};
    DistinctShingles empty;
    EXPECT_EQ(distinct_shingles(none, 3, nullptr, SIZE_MAX, &empty), Status::Ok);
    EXPECT_EQ(empty.size(), 0u);
}

// ---- exact mode's bounded hash set ----

std::vector<uint64_t> expected_set(const std::string &doc, const ShingleSpec &spec) {
    std::set<uint64_t> s;
    for (const auto &sh : distinct_shingles(doc, spec))
        s.insert(hash_bytes(sh));
    return std::vector<uint64_t>(s.begin(), s.end());
}

TEST(ShingleHashSet, SortedDistinctWithinTheBuffer) {
    std::string doc;
    for (int i = 0; i < 3000; ++i)
        doc += "w" + std::to_string(i % 700) + ' ';  // 700 distinct 1-shingles, 3000 shingles
    const ShingleSpec spec{ShingleUnit::Word, 1};
    const auto want = expected_set(doc, spec);
    ASSERT_EQ(want.size(), 700u);

    std::vector<uint64_t> buf(800);  // fewer than the shingles: deduplicated as it fills
    ShingleHashSet set{buf.data(), buf.size(), false, 0};
    ASSERT_EQ(shingle_hash_set(doc, spec, nullptr, &set), Status::Ok);
    EXPECT_EQ(std::vector<uint64_t>(buf.begin(), buf.begin() + set.count), want);

    // more than 7/8 full after deduplication: TooLarge unless it is the last try
    std::vector<uint64_t> tight(760);
    ShingleHashSet t{tight.data(), tight.size(), false, 0};
    EXPECT_EQ(shingle_hash_set(doc, spec, nullptr, &t), Status::TooLarge);
    EXPECT_EQ(t.count, 0u);
    t.last_try = true;
    ASSERT_EQ(shingle_hash_set(doc, spec, nullptr, &t), Status::Ok);
    EXPECT_EQ(std::vector<uint64_t>(tight.begin(), tight.begin() + t.count), want);

    // fewer slots than distinct shingles: TooLarge even on the last try
    std::vector<uint64_t> small(699);
    ShingleHashSet s{small.data(), small.size(), true, 0};
    EXPECT_EQ(shingle_hash_set(doc, spec, nullptr, &s), Status::TooLarge);

    // the lexeme path: same units, same set
    const NormalizedText norm = normalize(doc, ShingleUnit::Word);
    ShingleHashSet u{buf.data(), buf.size(), false, 0};
    ASSERT_EQ(shingle_hash_set(units_of(norm), 1, nullptr, &u), Status::Ok);
    EXPECT_EQ(std::vector<uint64_t>(buf.begin(), buf.begin() + u.count), want);

    // interrupted, then called again
    volatile std::sig_atomic_t pending = 1;
    std::string big;
    for (int i = 0; i < 50000; ++i)
        big += "x" + std::to_string(i) + ' ';
    std::vector<uint64_t> room(60000);
    ShingleHashSet b{room.data(), room.size(), true, 0};
    EXPECT_EQ(shingle_hash_set(big, spec, &pending, &b), Status::Interrupted);
    pending = 0;
    EXPECT_EQ(shingle_hash_set(big, spec, &pending, &b), Status::Ok);
    EXPECT_EQ(b.count, 50000u);
}

}  // namespace
