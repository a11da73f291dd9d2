/*
 * The metapage and the index's parameters: page and metapage initialisation,
 * where a threshold (or explicit bands and rows) becomes the bands and rows
 * of an index once k is known, and a query's threshold the depth its probes
 * go to; the parameters readers take from the metapage, and what they
 * define: a signature's band keys.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

#include <cmath>

#include "core/bbit.h"
#include "core/lsh_params.h"
#include "core/signature.h"

extern "C" {
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"
}

void
lsh_init_page(Page page, uint16 type, uint16 level)
{
	LshPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(LshPageOpaqueData));
	opaque = LshPageGetOpaque(page);
	opaque->low = 0;
	opaque->high = 0;
	opaque->next = InvalidBlockNumber;
	opaque->count = 0;
	opaque->level = level;
	opaque->flags = type;
	opaque->page_id = LSH_PAGE_ID;
}

/* An empty data page: every slot FREE, pd_lower at the end of the last slot. */
void
lsh_init_data_page(Page page, int num_perm, int slot_width)
{
	lsh_init_page(page, LSH_PAGE_DATA, 0);
	((PageHeader) page)->pd_lower = LSH_CONTENT_START +
		lsh_slots_per_page(num_perm, slot_width) * lsh_slot_size(num_perm, slot_width);
}

void
lsh_init_metapage(Page page, const LshOptions *opts)
{
	LshMetaPage meta;

	lsh_init_page(page, LSH_PAGE_META, 0);
	meta = LshPageGetMeta(page);
	memset(meta, 0, sizeof(LshMetaPageData));
	meta->magic = LSH_MAGIC;
	meta->version = LSH_VERSION;
	meta->root = InvalidBlockNumber;
	meta->leftmost = InvalidBlockNumber;
	meta->free_head = InvalidBlockNumber;
	meta->pending_head = InvalidBlockNumber;
	meta->pending_tail = InvalidBlockNumber;
	meta->pending_free = InvalidBlockNumber;
	meta->merge_upto = InvalidBlockNumber;
	meta->opt_threshold = opts ? opts->threshold : -1;
	meta->opt_bands = opts ? opts->bands : 0;
	meta->opt_rows = opts ? opts->rows : 0;
	meta->opt_fp_weight = opts ? opts->fp_weight : -1;
	meta->opt_fn_weight = opts ? opts->fn_weight : -1;
	meta->opt_verify_bits = opts ? opts->verify_bits : 0;
	/* GenericXLog zeroes what lies between pd_lower and pd_upper */
	((PageHeader) page)->pd_lower = ((char *) meta + sizeof(LshMetaPageData)) - (char *) page;
}

/*
 * A new page at the end of the index, returned pinned and exclusively locked.
 * Pages are never freed (leaves do not merge; data slots are reused), so there
 * is nothing to recycle.
 */
Buffer
lsh_new_buffer(Relation index)
{
	bool		need_lock = !RELATION_IS_LOCAL(index);
	Buffer		buf;

	if (need_lock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (need_lock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

void
lsh_meta_params(const LshMetaPageData *meta, LshIndexParams *params)
{
	params->num_perm = meta->num_perm;
	params->seed = meta->seed;
	params->family = meta->family;
	params->bands = meta->bands;
	params->rows = meta->rows;
	params->slots_per_page = meta->slots_per_page;
	params->version = meta->version;
	if (meta->num_perm > 0)
		params->layout = minhash::prefix_layout(meta->bands, meta->rows);
	else
		memset(&params->layout, 0, sizeof(params->layout));
	/* lsh_read_meta has checked the widths of a version-5 metapage */
	params->sig_width = LSH_HAS_WIDTHS(meta->version) ? meta->sig_width : MINHASH_WIDTH_32;
	params->slot_width = LSH_HAS_WIDTHS(meta->version) ? meta->slot_width : MINHASH_WIDTH_32;
	params->slot_size = lsh_slot_size(meta->num_perm, params->slot_width);
}

/*
 * The bands and rows the options of meta (opt_*) give at num_perm: explicit
 * bands and rows, or the threshold (default 0.5) through the core's
 * optimiser with the index's weights. *threshold is the design threshold.
 * False, without an error, when explicit bands * rows exceed num_perm. The
 * one place a threshold becomes bands and rows: an index resolves its
 * parameters here, and the cost estimate of an index without parameters yet
 * assumes what it will resolve.
 */
bool
lsh_choose_bands(const LshMetaPageData *meta, int num_perm, int *bands, int *rows, double *threshold)
{
	if (meta->opt_bands > 0)
	{
		*bands = meta->opt_bands;
		*rows = meta->opt_rows;
		*threshold = pow(1.0 / *bands, 1.0 / *rows);
		return (int64) *bands * *rows <= num_perm;
	}
	else
	{
		double		fp = meta->opt_fp_weight >= 0 ? meta->opt_fp_weight : LSH_DEFAULT_FP_WEIGHT;
		double		fn = meta->opt_fn_weight >= 0 ? meta->opt_fn_weight : LSH_DEFAULT_FN_WEIGHT;
		minhash::LshParams p;

		*threshold = meta->opt_threshold > 0 ? meta->opt_threshold : 0.5;
		p = minhash::choose_lsh_params(*threshold, num_perm, fp, fn);
		*bands = p.bands;
		*rows = p.rows;
		if (p.bands < 1 || p.rows < 1 || (int64) p.bands * p.rows > num_perm)
			elog(ERROR, "band optimiser returned bands = %d, rows = %d for num_perm = %d",
				 p.bands, p.rows, num_perm);
		return true;
	}
}

/*
 * The width code of the values the slots keep for signatures of this width:
 * the option verify_bits, or by default 8 bits for compact signatures (the
 * executor rechecks 16-bit ones against the table: a slot a quarter the
 * size of a 32-bit one, bench/notes/2026-11-27-compact-index-built.md) and
 * every bit of 32-bit ones (no recheck, as always).
 */
static int
lsh_slot_width(const LshMetaPageData *meta, int width)
{
	minhash::ValueWidth w;

	if (meta->opt_verify_bits <= 0)
		return width == MINHASH_WIDTH_32 ? MINHASH_WIDTH_32 : (int) minhash::ValueWidth::Bits8;
	if (!minhash::width_of_bits(meta->opt_verify_bits, &w))
		elog(ERROR, "lsh option verify_bits = %d in the metapage", meta->opt_verify_bits);
	if ((int) w < width)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lsh option verify_bits = %d exceeds the %d bits of the signatures",
						meta->opt_verify_bits, MINHASH_WIDTH_BITS(width)),
				 errhint("An index keeps at most the bits its signatures have: give verify_bits = %d or less.",
						 MINHASH_WIDTH_BITS(width))));
	return (int) w;
}

/*
 * Fix the index's parameters once k and the signatures' width are known:
 * from explicit bands and rows, or from the threshold (default 0.5) through
 * the core's optimiser; the slots' width from verify_bits.
 */
void
lsh_resolve_params(LshMetaPage meta, int num_perm, uint64 seed, int family, int width)
{
	int			bands;
	int			rows;
	double		threshold;
	int			slot_width = MINHASH_WIDTH_32;

	if (num_perm < minhash::kMinNumPerm || num_perm > minhash::kMaxNumPerm)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_perm %d is out of range for an lsh index", num_perm)));
	if (width < 0 || width >= MINHASH_NUM_WIDTHS)
		elog(ERROR, "invalid minhash width code %d", width);
	if (LSH_HAS_WIDTHS(meta->version))
		slot_width = lsh_slot_width(meta, width);
	else if (width != MINHASH_WIDTH_32)
		/* an index built empty by an earlier build, whose format has no widths */
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lsh index has on-disk version %u, which holds 32-bit signatures only",
						meta->version),
				 errhint("REINDEX the index: this build writes version %d, which takes %d-bit signatures.",
						 LSH_VERSION, MINHASH_WIDTH_BITS(width))));
	if (!lsh_choose_bands(meta, num_perm, &bands, &rows, &threshold))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lsh options bands * rows must not exceed num_perm"),
				 errdetail("bands = %d, rows = %d, but the signatures have num_perm = %d.",
						   bands, rows, num_perm),
				 errhint("Choose bands and rows with bands * rows <= %d, or give a threshold.",
						 num_perm)));
	meta->num_perm = (uint16) num_perm;
	meta->seed = seed;
	meta->family = (uint16) family;
	meta->bands = (uint16) bands;
	meta->rows = (uint16) rows;
	meta->threshold = threshold;
	meta->slots_per_page = (uint16) lsh_slots_per_page(num_perm, slot_width);
	if (LSH_HAS_WIDTHS(meta->version))
	{
		meta->sig_width = (uint16) width;
		meta->slot_width = (uint16) slot_width;
	}
}

/* Whether lsh_check_signature would take sig */
bool
lsh_signature_matches(const LshIndexParams *params, const MinHashSig *sig)
{
	return MinHashSigFamily(sig) == params->family && sig->num_perm == params->num_perm &&
		sig->seed == params->seed && MinHashSigWidth(sig) == params->sig_width;
}

void
lsh_check_signature(Relation index, const LshIndexParams *params, const MinHashSig *sig,
					const char *what)
{
	if (MinHashSigFamily(sig) != params->family)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s does not match lsh index \"%s\"", what, RelationGetRelationName(index)),
				 errdetail("The index holds %s signatures; this one is of family %s.",
						   minhash_family_name(params->family),
						   minhash_family_name(MinHashSigFamily(sig))),
				 errhint("Signatures are comparable only when built with the same hash family, num_perm and seed.")));
	if (sig->num_perm != params->num_perm || sig->seed != params->seed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s does not match lsh index \"%s\"", what, RelationGetRelationName(index)),
				 errdetail("The index holds signatures with num_perm = %d and seed = %lld; "
						   "this one has num_perm = %d and seed = %lld.",
						   params->num_perm, (long long) params->seed,
						   (int) sig->num_perm, (long long) sig->seed),
				 errhint("Signatures are comparable only when built with the same hash family, num_perm and seed.")));
	/* chance collisions depend on the width: so do estimates and band keys */
	if (MinHashSigWidth(sig) != params->sig_width)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s does not match lsh index \"%s\"", what, RelationGetRelationName(index)),
				 errdetail("The index holds %d-bit signatures; this one keeps %d bits of each value.",
						   MINHASH_WIDTH_BITS(params->sig_width),
						   MINHASH_WIDTH_BITS(MinHashSigWidth(sig))),
				 MinHashSigWidth(sig) < params->sig_width ?
				 errhint("Cast the signature to minhash(%d, %d): an explicit cast keeps the low bits of each value.",
						 params->num_perm, MINHASH_WIDTH_BITS(params->sig_width)) :
				 errhint("A signature cannot be widened: compare with %d-bit signatures.",
						 MINHASH_WIDTH_BITS(params->sig_width))));
}

/*
 * A signature's band keys: from its values at the signatures' width
 * (zero-extended to 32 bits; the index form's values). Not from the slot
 * width: a probe at depth m matches the first m values' keys, and 8-bit
 * values would give the first value's 14 key bits only 8 bits of content
 * (bench/notes/2026-11-27-compact-index-built.md measured 8.5 times the
 * candidates at depth 4).
 */
void
lsh_sig_band_keys(const LshIndexParams *params, const MinHashSig *sig, uint32 *keys)
{
	lsh_band_keys(params, sig->values, keys);
}

void
lsh_slot_values32(const LshIndexParams *params, const LshSlotHeader *slot, uint32 *out)
{
	minhash::widen_values(LshSlotValues(slot), params->num_perm,
						  (minhash::ValueWidth) params->slot_width, out);
}

/* only where the slots keep every bit (lsh_verifies_exactly): else the keys are not in the slot */
void
lsh_slot_band_keys(const LshIndexParams *params, const LshSlotHeader *slot, uint32 *keys)
{
	uint32		values[MINHASH_MAX_NUM_PERM];

	if (!lsh_verifies_exactly(params))
		elog(ERROR, "lsh: band keys of a row whose slot keeps %d of its %d bits",
			 MINHASH_WIDTH_BITS(params->slot_width), MINHASH_WIDTH_BITS(params->sig_width));
	if (params->slot_width == MINHASH_WIDTH_32)
	{
		lsh_band_keys(params, (const uint32 *) LshSlotValues(slot), keys);
		return;
	}
	lsh_slot_values32(params, slot, values);
	lsh_band_keys(params, values, keys);
}

void
lsh_pack_values(const LshIndexParams *params, const uint32 *values32, void *out)
{
	minhash::narrow_values(values32, params->num_perm, (minhash::ValueWidth) params->slot_width, out);
}

int
lsh_matching(const LshIndexParams *params, const void *a, const void *b)
{
	return minhash::matching_packed(a, b, params->num_perm, (minhash::ValueWidth) params->slot_width);
}

/*
 * The 32-bit key of each band (core/lsh_prefix.h, lsh_band_key).
 *
 * Version 2: the prefix-preserving key: band number in the top bits, then a
 * few bits of each of the band's values in order, so that rows agreeing with
 * a query on the first m values of a band lie in one key range. Rows sharing
 * a band share its key; unrelated bands collide with probability
 * 2^-(32 - band bits), and such a false candidate is discarded by
 * verification.
 *
 * Version 1 (minhash 1.0): the band hash (seeded with the band number, so
 * equal values in different bands do not meet) folded to 32 bits.
 */
void
lsh_band_keys(const LshIndexParams *params, const uint32 *values, uint32 *keys)
{
	if (params->version != LSH_VERSION_EXACT)
		minhash::prefix_band_keys(params->layout, values, keys);
	else
		for (int b = 0; b < params->bands; b++)
			keys[b] = minhash::lsh_band_key(params->layout, false, values, b);
}

/*
 * A version-1 index (built by minhash 1.0) probes whole bands only. Say so,
 * once per index per backend, when a scan or pairs run would have probed
 * shorter prefixes: its recall below the design threshold, and ORDER BY
 * ... LIMIT beyond the rows sharing a band, are 1.0's until REINDEX.
 */
void
lsh_notice_format1(Relation index)
{
	static Oid	notified[16];
	static int	nnotified = 0;

	for (int i = 0; i < nnotified; i++)
	{
		if (notified[i] == RelationGetRelid(index))
			return;
	}
	if (nnotified < (int) lengthof(notified))
		notified[nnotified++] = RelationGetRelid(index);
	ereport(NOTICE,
			(errmsg("lsh index \"%s\" was built by minhash 1.0 and matches whole bands only",
					RelationGetRelationName(index)),
			 errdetail("Its recall below its design threshold, and ORDER BY <%%> LIMIT beyond the rows sharing a band, are those of 1.0."),
			 errhint("REINDEX INDEX %s to probe band prefixes.",
					 quote_identifier(RelationGetRelationName(index)))));
}
