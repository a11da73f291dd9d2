/*
 * Words from PostgreSQL's text search: the lexemes to_tsvector(config, doc)
 * would index, in document order, through the backend's own parser and
 * dictionaries (parsetext, the function behind to_tsvector). Stop words are
 * dropped and words normalized (stemmed, lower-cased, ...) exactly as the
 * configuration says. A token for which a dictionary returns several lexemes
 * (an ispell or synonym dictionary, say) contributes all of them, in the
 * order the dictionary gives them, as to_tsvector keeps all of them at one
 * position. Then they are shingled as words: a shingle is k consecutive
 * lexemes joined by one space, hashed as UTF-8 by the signature's family.
 *
 * The positions of a tsvector are capped (16383) and a lexeme keeps at most
 * 256 of them, so the tsvector itself cannot give the order of a long
 * document; parsetext's word list can, and is what to_tsvector builds on.
 */
#include "core/hash.h"
#include "core/shingle.h"
#include "core/signature.h"
#include "pg/minhash.h"

extern "C" {
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "tsearch/ts_utils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
}

void
minhash_lexemes(Oid cfg, text *doc, LexemeText *out)
{
	ParsedText	prs;
	int32		len = VARSIZE_ANY_EXHDR(doc);
	Size		bytes = 0;
	char	   *pos;

	/* sized as to_tsvector sizes it */
	prs.lenwords = len / 6;
	if (prs.lenwords < 2)
		prs.lenwords = 2;
	else if ((Size) prs.lenwords > MaxAllocSize / sizeof(ParsedWord))
		prs.lenwords = MaxAllocSize / sizeof(ParsedWord);
	prs.curwords = 0;
	prs.pos = 0;
	prs.words = (ParsedWord *) palloc(sizeof(ParsedWord) * prs.lenwords);
	parsetext(cfg, &prs, VARDATA_ANY(doc), len);

	out->count = prs.curwords;
	out->starts = (uint32 *) palloc(sizeof(uint32) * Max(prs.curwords, 1));
	out->ends = (uint32 *) palloc(sizeof(uint32) * Max(prs.curwords, 1));

	/* UTF-8, as the rest of the extension hashes; converted word by word */
	for (int i = 0; i < prs.curwords; i++)
	{
		ParsedWord *w = &prs.words[i];
		char	   *utf8 = pg_server_to_any(w->word, w->len, PG_UTF8);

		if (utf8 != w->word)
		{
			pfree(w->word);
			w->word = utf8;
			w->len = strlen(utf8);
		}
		bytes += (Size) w->len + 1;
		if (bytes > PG_UINT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("document has too many lexemes to shingle")));
	}
	out->text = (char *) MemoryContextAllocHuge(CurrentMemoryContext, Max(bytes, 1));
	pos = out->text;
	for (int i = 0; i < prs.curwords; i++)
	{
		ParsedWord *w = &prs.words[i];

		if (i > 0)
			*pos++ = ' ';
		out->starts[i] = (uint32) (pos - out->text);
		memcpy(pos, w->word, w->len);
		pos += w->len;
		out->ends[i] = (uint32) (pos - out->text);
		pfree(w->word);
	}
	pfree(prs.words);
}

/* Shingle i of k: lexemes i .. i+k-1, or all of them when there are fewer than k. */
static inline void
lexeme_shingle(const LexemeText *lx, int k, int i, const char **start, size_t *len)
{
	int			last = lx->count < k ? lx->count - 1 : i + k - 1;

	*start = lx->text + lx->starts[i];
	*len = lx->ends[last] - lx->starts[i];
}

static inline int
lexeme_shingle_count(const LexemeText *lx, int k)
{
	if (lx->count == 0)
		return 0;
	return lx->count < k ? 1 : lx->count - k + 1;
}

#define HASH_BATCH 256

void
minhash_lexeme_signature(const LexemeText *lx, int k, const minhash::PermutationFamily *family,
						 uint32 *values)
{
	int			n = lexeme_shingle_count(lx, k);
	uint64		hashes[HASH_BATCH];
	int			nb = 0;

	for (int i = 0; i < n; i++)
	{
		const char *s;
		size_t		len;

		lexeme_shingle(lx, k, i, &s, &len);
		hashes[nb++] = minhash::family_hash(family->kind, s, len);
		if (nb == HASH_BATCH)
		{
			minhash::signature_update(*family, hashes, nb, values);
			nb = 0;
			CHECK_FOR_INTERRUPTS();
		}
	}
	if (nb > 0)
		minhash::signature_update(*family, hashes, nb, values);
}

typedef struct ShingleRef
{
	uint64		hash;
	int			index;
} ShingleRef;

static int
shingle_ref_cmp(const void *a, const void *b)
{
	const ShingleRef *x = (const ShingleRef *) a;
	const ShingleRef *y = (const ShingleRef *) b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->index < y->index ? -1 : (x->index > y->index ? 1 : 0);
}

ArrayType *
minhash_lexeme_shingles(const LexemeText *lx, int k)
{
	int			n = lexeme_shingle_count(lx, k);
	ShingleRef *refs;
	bool	   *keep;
	Datum	   *elems;
	int			nkeep = 0;

	if (n == 0)
		return construct_empty_array(TEXTOID);

	/*
	 * Distinct shingles in order of first appearance, as minhash_shingles
	 * lists them: sort by (hash, position), keep the first of every run of
	 * equal strings, then emit the kept ones by position.
	 */
	refs = (ShingleRef *) palloc(sizeof(ShingleRef) * n);
	keep = (bool *) palloc0(sizeof(bool) * n);
	for (int i = 0; i < n; i++)
	{
		const char *s;
		size_t		len;

		lexeme_shingle(lx, k, i, &s, &len);
		refs[i].hash = minhash::hash_bytes(s, len);
		refs[i].index = i;
	}
	qsort(refs, n, sizeof(ShingleRef), shingle_ref_cmp);
	for (int i = 0; i < n; i++)
	{
		const char *s;
		size_t		len;
		bool		seen = false;

		lexeme_shingle(lx, k, refs[i].index, &s, &len);
		/* compare with the kept strings of the same hash (nearly always none or one) */
		for (int j = i - 1; j >= 0 && refs[j].hash == refs[i].hash && !seen; j--)
		{
			const char *t;
			size_t		tlen;

			if (!keep[refs[j].index])
				continue;
			lexeme_shingle(lx, k, refs[j].index, &t, &tlen);
			seen = (tlen == len && memcmp(s, t, len) == 0);
		}
		if (!seen)
		{
			keep[refs[i].index] = true;
			nkeep++;
		}
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}

	elems = (Datum *) palloc(sizeof(Datum) * nkeep);
	nkeep = 0;
	for (int i = 0; i < n; i++)
	{
		const char *s;
		size_t		len;
		char	   *server;

		if (!keep[i])
			continue;
		lexeme_shingle(lx, k, i, &s, &len);
		server = pg_any_to_server(s, (int) len, PG_UTF8);
		elems[nkeep++] = PointerGetDatum(server == s ? cstring_to_text_with_len(s, (int) len)
										 : cstring_to_text(server));
	}
	pfree(refs);
	pfree(keep);
	return construct_array(elems, nkeep, TEXTOID, -1, false, TYPALIGN_INT);
}
