/*
 * Words from PostgreSQL's text search: the lexemes to_tsvector(config, doc)
 * would index, in document order, through the backend's own parser and
 * dictionaries (parsetext, the function behind to_tsvector). Stop words are
 * dropped and words normalized (stemmed, lower-cased, ...) exactly as the
 * configuration says. A token for which a dictionary returns several lexemes
 * (an ispell or synonym dictionary, say) contributes all of them, in the
 * order the dictionary gives them, as to_tsvector keeps all of them at one
 * position. Then they are shingled as words by the core's shingle window: a
 * shingle is k consecutive lexemes joined by one space, hashed as UTF-8 by
 * the signature's family.
 *
 * The positions of a tsvector are capped (16383) and a lexeme keeps at most
 * 256 of them, so the tsvector itself cannot give the order of a long
 * document; parsetext's word list can, and is what to_tsvector builds on.
 */
#include "pg/pg_prelude.h"

#include "core/shingle.h"
#include "core/signature.h"
#include "pg/core_call.h"
#include "pg/minhash.h"

extern "C" {
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "tsearch/ts_utils.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
}

/*
 * An integer casts implicitly to regconfig, so minhash(body, 3, bits => 16)
 * (3 meant as k or num_perm) and minhash_shingles(body, 2, 3) reach here
 * with a configuration that does not exist; parsetext would fail with
 * "cache lookup failed" (XX000), an internal error. Say what happened
 * instead, with regconfig's own SQLSTATE.
 */
static void
check_config_exists(Oid cfg)
{
	if (!SearchSysCacheExists1(TSCONFIGOID, ObjectIdGetDatum(cfg)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("text search configuration with OID %u does not exist", cfg),
				 errdetail("A number where the text search configuration goes is read as its OID."),
				 errhint("Name the argument the number is for, such as k => %u; a configuration is given by name, such as config => 'english'.",
						 cfg)));
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
	check_config_exists(cfg);
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

/* The lexemes as units of the core's shingle window */
minhash::UnitText
minhash_lexeme_units(const LexemeText *lx)
{
	minhash::UnitText units = {lx->text, lx->starts, lx->ends, (size_t) lx->count};

	return units;
}

void
minhash_lexeme_signature(const LexemeText *lx, int k, const minhash::PermutationFamily *family,
						 uint32 *values)
{
	minhash::UnitText units = minhash_lexeme_units(lx);

	/* Allocates nothing: Ok, or Interrupted and serviced until Ok. */
	call_core_until_done([&](minhash::InterruptFlag interrupt) noexcept {
		return minhash::signature_of_units(*family, units, k, values, interrupt);
	});
}
