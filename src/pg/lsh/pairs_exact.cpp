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

/*
 * The distinct shingle hashes of doc, sorted, into out[0..cap). Returns the
 * number of distinct hashes, which may exceed cap: then out holds nothing
 * useful and the caller retries with a larger buffer.
 */
static bool
shingle_hashes(const char *doc, size_t len, const minhash::ShingleSpec *spec, uint64 *out,
			   size_t cap, size_t *count, CoreError *err) noexcept
{
	try
	{
		minhash::NormalizedText norm = minhash::normalize(std::string_view(doc, len), spec->unit);
		size_t		n = 0;

		minhash::for_each_shingle(norm, minhash::clamp_shingle_size(*spec),
								  [&](std::string_view s) {
									  if (n < cap)
										  out[n] = minhash::hash_bytes(s);
									  n++;
								  });
		if (n <= cap)
		{
			std::sort(out, out + n);
			n = std::unique(out, out + n) - out;
		}
		*count = n;
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

/* palloc'd in the current memory context */
PairsShingles *
pairs_shingles(text *doc, const minhash::ShingleSpec *spec, Oid config)
{
	size_t		len;
	const char *utf8;
	size_t		cap;

	if (OidIsValid(config))
		return lexeme_shingle_hashes(doc, minhash::clamp_shingle_size(*spec), config);
	utf8 = minhash_doc_utf8(doc, &len);
	/* a shingle starts at a unit, a unit at a byte: len + 1 is enough unless lowercasing grows the text */
	cap = len + 1;

	for (;;)
	{
		PairsShingles *s = (PairsShingles *)
			palloc_extended(offsetof(PairsShingles, h) + sizeof(uint64) * cap, MCXT_ALLOC_HUGE);
		size_t		n;
		CoreError	err;

		if (!shingle_hashes(utf8, len, spec, s->h, cap, &n, &err))
			minhash_report_core_error(&err);
		if (n <= cap)
		{
			if (n > (size_t) PG_INT32_MAX)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("document has too many shingles for exact verification")));
			s->n = (int32) n;
			/* give back the unused tail: most texts have far fewer shingles than bytes */
			if (n + 64 < cap)
				s = (PairsShingles *) repalloc(s, offsetof(PairsShingles, h) + sizeof(uint64) * n);
			return s;
		}
		pfree(s);
		cap = n;
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
