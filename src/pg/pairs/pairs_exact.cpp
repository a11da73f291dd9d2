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
#include "pg/pg_prelude.h"

#include "core/shingle.h"
#include "pg/core_call.h"
#include "pg/pairs/pairs.h"

static PairsShingles *
alloc_shingles(size_t cap)
{
	return (PairsShingles *) palloc_extended(offsetof(PairsShingles, h) + sizeof(uint64) * cap,
											 MCXT_ALLOC_HUGE);
}

/* the most distinct shingle hashes of one row: a quarter of work_mem (at least 1024) */
size_t
pairs_shingle_limit(void)
{
	return Max((size_t) work_mem * 1024 / 4 / sizeof(uint64), (size_t) 1024);
}

/*
 * palloc'd in the current memory context, or NULL when the document has
 * more distinct shingles than a quarter of work_mem holds (the row cache's
 * arena, pairs_rows.cpp): such a row is verified by its estimate instead
 * (pairs_emit_verified), never an allocation of any size. The same holds
 * for the lexemes of a text search configuration.
 *
 * The core (shingle_hash_set) streams the shingle hashes into a buffer and
 * deduplicates it in place whenever it fills, polling for interrupts. A
 * shingle starts at a unit, a unit at a byte: len + 1 (or the number of
 * lexemes + 1) is always enough room (unless case folding grows the text).
 * But a buffer that never fills is sorted once, at the end, which cannot be
 * interrupted: start at most at 2^20 hashes (8 MB), so a long text is
 * deduplicated in steps of that size, and grow fourfold when mostly
 * distinct, up to the limit.
 */
PairsShingles *
pairs_shingles(text *doc, const minhash::ShingleSpec *spec, Oid config)
{
	size_t		limit = pairs_shingle_limit();
	int			k = minhash::clamp_shingle_size(*spec);
	bool		lexemes = OidIsValid(config);
	LexemeText	lx = {NULL, NULL, NULL, 0};
	minhash::UnitText units = {NULL, NULL, NULL, 0};
	const char *utf8 = NULL;
	size_t		len = 0;
	size_t		cap;
	PairsShingles *s;
	minhash::ShingleHashSet set;

	if (lexemes)
	{
		minhash_lexemes(config, doc, &lx);
		units = {lx.text, lx.starts, lx.ends, (size_t) lx.count};
		cap = units.count + 1;
	}
	else
	{
		utf8 = minhash_doc_utf8(doc, &len);
		cap = len + 1;
	}
	cap = Min(Min(cap, (size_t) 1 << 20), limit);
	s = alloc_shingles(cap);
	set = {s->h, cap, cap == limit, 0};

	if (call_core_until_done(
			[&](minhash::InterruptFlag interrupt) noexcept {
				return lexemes
					? minhash::shingle_hash_set(units, k, interrupt, &set)
					: minhash::shingle_hash_set(std::string_view(utf8, len), *spec, interrupt, &set);
			},
			[&]() {
				if (cap == limit)
					return false;
				pfree(s);
				cap = Min(cap * 4, limit);
				s = alloc_shingles(cap);
				set = {s->h, cap, cap == limit, 0};
				return true;
			}) != minhash::Status::Ok ||
		set.count > (size_t) PG_INT32_MAX)
	{
		pfree(s);
		s = NULL;
	}
	else
	{
		s->n = (int32) set.count;
		/* give back the unused tail */
		if (set.count + 64 < cap)
			s = (PairsShingles *) repalloc(s, offsetof(PairsShingles, h) + sizeof(uint64) * set.count);
	}
	if (lexemes)
	{
		pfree(lx.text);
		pfree(lx.starts);
		pfree(lx.ends);
	}
	return s;
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
