/*
 * Exact verification of candidate pairs (exact => true): the distinct
 * shingles of each row's text, as 64-bit hashes, and their Jaccard
 * similarity.
 *
 * The shingles are those of minhash_shingles(text, k, unit) and the hash is
 * the one minhash() folds into signatures (XXH3-64 of the shingle's UTF-8
 * bytes), so the result equals
 *     jaccard(minhash_shingles(a, k, unit), minhash_shingles(b, k, unit))
 * up to a 64-bit hash collision between two distinct shingles of the pair
 * (probability about n^2 / 2^64 for n shingles: 10^-11 at n = 10^4).
 * Comparing hashes instead of strings keeps a cached row at 8 bytes a
 * shingle and the comparison a merge of two sorted arrays. For an index on
 * minhash(text, config, k, ...) the shingles are those of
 * minhash_shingles(text, k, config): k consecutive lexemes.
 */
#include <algorithm>
#include <string_view>

#include "core/hash.h"
#include "core/shingle.h"
#include "pg/lsh/pairs.h"

extern "C" {
#include "miscadmin.h"
}

/* how one pass of shingle_hashes ended */
enum ShinglePass
{
	SHINGLES_DONE,				/* out[0..*count) holds the distinct hashes, sorted */
	SHINGLES_FULL,				/* more distinct shingles than fit out: retry with more room */
	SHINGLES_INTERRUPTED		/* InterruptPending: service it, then retry */
};

/* where the streamed hashes go (a plain struct: it crosses the core's callback) */
struct HashBuffer
{
	uint64	   *out;
	size_t		cap;
	size_t		n;
	bool		at_limit;
};

/*
 * The hashes stream into out; when it fills, it is sorted and deduplicated
 * in place and the stream goes on, so the room needed is the number of
 * distinct shingles, not of shingles (a repetitive text needs little). The
 * pass gives up when out stays nearly full after deduplication (entirely
 * full, at the caller's limit).
 */
static bool
take_hashes(void *ctx, const uint64_t *hashes, size_t count)
{
	HashBuffer *b = (HashBuffer *) ctx;

	for (size_t i = 0; i < count; i++)
	{
		if (b->n == b->cap)
		{
			std::sort(b->out, b->out + b->n);
			b->n = std::unique(b->out, b->out + b->n) - b->out;
			if (b->n == b->cap || (!b->at_limit && b->n > b->cap - b->cap / 8))
				return false;
		}
		b->out[b->n++] = hashes[i];
	}
	return true;
}

/*
 * The distinct shingle hashes of doc, sorted, into out[0..cap): the shingles
 * of minhash_shingles(doc, k, unit), streamed by the core without recording
 * its units, and polled for interrupts as they go.
 */
static bool
shingle_hashes(const char *doc, size_t len, const minhash::ShingleSpec *spec, uint64 *out,
			   size_t cap, bool at_limit, minhash::InterruptFlag interrupt, size_t *count,
			   ShinglePass *pass, CoreError *err) noexcept
{
	try
	{
		HashBuffer	b = {out, cap, 0, at_limit};
		minhash::Status st = minhash::for_each_shingle_hash(std::string_view(doc, len), *spec,
															interrupt, take_hashes, &b);

		if (st == minhash::Status::Ok)
		{
			std::sort(out, out + b.n);
			b.n = std::unique(out, out + b.n) - out;
			*pass = SHINGLES_DONE;
		}
		else
			*pass = st == minhash::Status::Interrupted ? SHINGLES_INTERRUPTED : SHINGLES_FULL;
		*count = b.n;
		return true;
	}
	catch (...)
	{
		minhash_core_error_from_current(err);
		return false;
	}
}

static int
uint64_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* The distinct k-lexeme shingle hashes, sorted */
static PairsShingles *
lexeme_shingle_hashes(text *doc, int k, Oid config)
{
	LexemeText	lx;
	int			n;
	int			m = 0;
	PairsShingles *s;

	minhash_lexemes(config, doc, &lx);
	n = lx.count == 0 ? 0 : (lx.count < k ? 1 : lx.count - k + 1);
	s = (PairsShingles *) palloc_extended(offsetof(PairsShingles, h) + sizeof(uint64) * Max(n, 1),
										  MCXT_ALLOC_HUGE);
	for (int i = 0; i < n; i++)
	{
		int			last = lx.count < k ? lx.count - 1 : i + k - 1;

		s->h[i] = minhash::hash_bytes(lx.text + lx.starts[i], lx.ends[last] - lx.starts[i]);
	}
	qsort(s->h, n, sizeof(uint64), uint64_cmp);
	for (int i = 0; i < n; i++)
		if (m == 0 || s->h[i] != s->h[m - 1])
			s->h[m++] = s->h[i];
	s->n = m;
	pfree(lx.text);
	pfree(lx.starts);
	pfree(lx.ends);
	return s;
}

/*
 * palloc'd in the current memory context. One row's shingles may take a
 * quarter of work_mem (the row cache's arena, pairs_rows.cpp): a document
 * with more distinct shingles is an error, not an allocation of any size.
 */
PairsShingles *
pairs_shingles(text *doc, const minhash::ShingleSpec *spec, Oid config)
{
	size_t		len;
	const char *utf8;
	size_t		limit = Max((size_t) work_mem * 1024 / 4 / sizeof(uint64), (size_t) 1024);
	size_t		cap;

	if (OidIsValid(config))
		return lexeme_shingle_hashes(doc, minhash::clamp_shingle_size(*spec), config);
	utf8 = minhash_doc_utf8(doc, &len);
	/*
	 * A shingle starts at a unit, a unit at a byte: len + 1 is always enough
	 * room (unless lowercasing grows the text). But a buffer that never
	 * fills is sorted once, at the end, which cannot be interrupted: start
	 * at most at 2^20 hashes (8 MB), so a long text is deduplicated in
	 * steps of that size, and grow fourfold when mostly distinct.
	 */
	cap = Min(Min(len + 1, (size_t) 1 << 20), limit);

	for (;;)
	{
		PairsShingles *s = (PairsShingles *)
			palloc_extended(offsetof(PairsShingles, h) + sizeof(uint64) * cap, MCXT_ALLOC_HUGE);
		size_t		n;
		ShinglePass pass;
		CoreError	err;

		if (!shingle_hashes(utf8, len, spec, s->h, cap, cap == limit, minhash_interrupt_flag(),
							&n, &pass, &err))
			minhash_report_core_error(&err);
		if (pass == SHINGLES_DONE)
		{
			if (n > (size_t) PG_INT32_MAX)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("document has too many shingles for exact verification")));
			s->n = (int32) n;
			/* give back the unused tail */
			if (n + 64 < cap)
				s = (PairsShingles *) repalloc(s, offsetof(PairsShingles, h) + sizeof(uint64) * n);
			return s;
		}
		pfree(s);
		if (pass == SHINGLES_INTERRUPTED)
			CHECK_FOR_INTERRUPTS();
		else if (cap == limit)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("document too large for exact verification within work_mem"),
					 errdetail("A row's text has more than %zu distinct shingles; exact verification "
							   "keeps 8 bytes per distinct shingle of a row, at most a quarter of "
							   "work_mem (%d kB).", limit, work_mem),
					 errhint("Raise work_mem for this query, or verify with the estimate (exact => false).")));
		else
			cap = Min(cap * 4, limit);
	}
}

/* |A ∩ B| / |A ∪ B| of two sorted distinct arrays; two empty sets are identical (1) */
double
pairs_exact_jaccard(const PairsShingles *a, const PairsShingles *b)
{
	int32		i = 0;
	int32		j = 0;
	int64		common = 0;
	int64		total;

	if (a->n == 0 && b->n == 0)
		return 1.0;
	while (i < a->n && j < b->n)
	{
		if (a->h[i] < b->h[j])
			i++;
		else if (a->h[i] > b->h[j])
			j++;
		else
		{
			common++;
			i++;
			j++;
		}
	}
	total = (int64) a->n + b->n - common;
	return (double) common / (double) total;
}
