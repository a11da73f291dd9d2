// Exact and estimated Jaccard similarity, and the cardinality estimate.
#include "core/jaccard.h"

#include <algorithm>
#include <cstring>

#include "core/hash.h"
#include "core/jaccard_impl.h"
#include "core/signature.h"

namespace minhash {

namespace {

// Sorts and deduplicates both, then counts the intersection by merging.
template <class T>
double jaccard_sorted(std::vector<T> &a, std::vector<T> &b) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    if (a.empty() && b.empty())
        return 1.0;
    size_t common = 0;
    auto i = a.begin();
    auto j = b.begin();
    while (i != a.end() && j != b.end()) {
        if (*i < *j) {
            ++i;
        } else if (*j < *i) {
            ++j;
        } else {
            ++common;
            ++i;
            ++j;
        }
    }
    const size_t uni = a.size() + b.size() - common;
    return static_cast<double>(common) / static_cast<double>(uni);
}

}  // namespace

namespace detail {

namespace {

// Counts units of work and polls every `every` of them (a power of 2).
class Poller {
  public:
    Poller(PollFn fn, void *context, size_t every)
        : fn_(fn), context_(context), mask_(every > 0 ? every - 1 : 0) {}
    bool tick() { return (++count_ & mask_) == 0 && now(); }
    bool now() { return fn_ != nullptr && fn_(context_); }

  private:
    PollFn fn_;
    void *context_;
    size_t mask_;
    size_t count_ = 0;
};

bool by_hash(const HashedElement &x, const HashedElement &y) { return x.hash < y.hash; }

bool same_bytes(const HashedElement &x, const HashedElement &y) {
    return x.len == y.len && (x.len == 0 || std::memcmp(x.data, y.data, x.len) == 0);
}

// Sorts v[0..n) by hash: std::sort on runs, then bottom-up merge passes
// between v and scratch, polling between runs and while merging. A pass only
// reads its source, so when interrupted the source holds every element; it is
// copied back to v if it is the scratch. Returns false when interrupted.
bool sort_by_hash(HashedElement *v, size_t n, HashedElement *scratch, Poller &poll,
                  size_t run) {
    for (size_t lo = 0; lo < n; lo += run) {
        if (poll.now())
            return false;
        std::sort(v + lo, v + std::min(n, lo + run), by_hash);
    }
    HashedElement *src = v;
    HashedElement *dst = scratch;
    for (size_t width = run; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            const size_t mid = std::min(n, lo + width);
            const size_t hi = std::min(n, lo + 2 * width);
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                if (poll.tick()) {
                    if (src != v)
                        std::copy(src, src + n, v);
                    return false;
                }
                dst[o++] = by_hash(src[j], src[i]) ? src[j++] : src[i++];
            }
            o = std::copy(src + i, src + mid, dst + o) - dst;
            std::copy(src + j, src + hi, dst + o);
        }
        std::swap(src, dst);
    }
    if (src != v)
        std::copy(src, src + n, v);
    return true;
}

// g[0..n), n ≥ 1, share one hash. Moves its distinct elements (by bytes) to
// the front by swaps and sets *distinct to their number. A group is nearly
// always one element or copies of one, so each element is compared with the
// group's first; only a 64-bit hash collision makes a group hold several.
bool distinct_front(HashedElement *g, size_t n, Poller &poll, size_t *distinct) {
    size_t d = 1;
    for (size_t i = 1; i < n; ++i) {
        bool seen = false;
        for (size_t j = 0; j < d && !seen; ++j) {
            if (poll.tick())
                return false;
            seen = same_bytes(g[i], g[j]);
        }
        if (!seen)
            std::swap(g[i], g[d++]);
    }
    *distinct = d;
    return true;
}

size_t group_end(const HashedElement *v, size_t n, size_t i) {
    const uint64_t h = v[i].hash;
    while (++i < n && v[i].hash == h) {
    }
    return i;
}

}  // namespace

Status jaccard_exact_polled(HashedElement *a, size_t na, HashedElement *b, size_t nb,
                            HashedElement *scratch, PollFn poll_fn, void *context,
                            const ExactJaccardTuning &tuning, double *result) noexcept {
    Poller poll(poll_fn, context, tuning.poll_every);
    const size_t run = std::max<size_t>(tuning.run, 1);
    if (!sort_by_hash(a, na, scratch, poll, run) || !sort_by_hash(b, nb, scratch, poll, run))
        return Status::Interrupted;

    // Merge the two hash orders group by group. Only swaps within a group
    // happen from here on, so a and b stay permutations of their input.
    size_t distinct_a = 0, distinct_b = 0, common = 0;
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        if (poll.tick())
            return Status::Interrupted;
        const bool take_a = j == nb || (i < na && a[i].hash <= b[j].hash);
        const bool take_b = i == na || (j < nb && b[j].hash <= a[i].hash);
        size_t end_a = i, end_b = j, da = 0, db = 0;
        if (take_a) {
            end_a = group_end(a, na, i);
            if (!distinct_front(a + i, end_a - i, poll, &da))
                return Status::Interrupted;
        }
        if (take_b) {
            end_b = group_end(b, nb, j);
            if (!distinct_front(b + j, end_b - j, poll, &db))
                return Status::Interrupted;
        }
        // Equal hashes: each distinct element of a's group matches at most
        // one of b's.
        for (size_t x = 0; x < da && db > 0; ++x) {
            for (size_t y = 0; y < db; ++y) {
                if (poll.tick())
                    return Status::Interrupted;
                if (same_bytes(a[i + x], b[j + y])) {
                    ++common;
                    break;
                }
            }
        }
        distinct_a += da;
        distinct_b += db;
        i = end_a;
        j = end_b;
    }
    const size_t uni = distinct_a + distinct_b - common;
    *result = uni == 0 ? 1.0 : static_cast<double>(common) / static_cast<double>(uni);
    return Status::Ok;
}

}  // namespace detail

Status jaccard_exact(HashedElement *a, size_t na, HashedElement *b, size_t nb,
                     HashedElement *scratch, InterruptFlag interrupt, double *result) noexcept {
    const detail::PollFn poll = [](void *context) {
        const InterruptFlag flag = *static_cast<const InterruptFlag *>(context);
        return flag != nullptr && *flag != 0;
    };
    return detail::jaccard_exact_polled(a, na, b, nb, scratch, poll, &interrupt,
                                        detail::kExactJaccardTuning, result);
}

double jaccard_exact(const std::vector<std::string> &a, const std::vector<std::string> &b) {
    auto elements = [](const std::vector<std::string> &v) {
        std::vector<HashedElement> e;
        e.reserve(v.size());
        for (const std::string &s : v)
            e.push_back(HashedElement{hash_bytes(s), s.data(), s.size()});
        return e;
    };
    std::vector<HashedElement> ea = elements(a);
    std::vector<HashedElement> eb = elements(b);
    std::vector<HashedElement> scratch(std::max(ea.size(), eb.size()));
    double result = 0.0;
    jaccard_exact(ea.data(), ea.size(), eb.data(), eb.size(), scratch.data(), nullptr, &result);
    return result;
}

double jaccard_exact_hashes(std::vector<uint64_t> a, std::vector<uint64_t> b) {
    return jaccard_sorted(a, b);
}
int matching_values(const uint32_t *a, const uint32_t *b, int num_perm) noexcept {
    int same = 0;
    for (int i = 0; i < num_perm; ++i)
        same += a[i] == b[i];
    return same;
}

double jaccard_estimate(const uint32_t *a, const uint32_t *b, int num_perm) noexcept {
    if (num_perm <= 0)
        return 0.0;
    return static_cast<double>(matching_values(a, b, num_perm)) / num_perm;
}

// Each value is the minimum of n (nearly) independent uniform 32-bit hashes,
// so v/2^32 has mean 1/(n+1): n ≈ k / Σ(v_i / 2^32) − 1. The +0.5 centres
// each integer value in its cell of [0, 2^32).
double cardinality_estimate(const uint32_t *sig, int num_perm) noexcept {
    if (num_perm <= 0)
        return 0.0;
    bool empty = true;
    double sum = 0.0;
    for (int i = 0; i < num_perm; ++i) {
        empty = empty && sig[i] == kEmptyValue;
        sum += (static_cast<double>(sig[i]) + 0.5) / 4294967296.0;
    }
    if (empty)
        return 0.0;
    return std::max(0.0, num_perm / sum - 1.0);
}

}  // namespace minhash
