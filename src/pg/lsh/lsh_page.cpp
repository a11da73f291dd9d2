/*
 * The on-disk format's checks (lsh_page.h): what is wrong with a page, a
 * pending page or a data slot, for a reader that is about to trust it. The
 * checked walk (lsh_access.cpp) and the whole-index passes raise XX002 on
 * any problem; minhash_lsh_check lists it as a row instead.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

extern "C" {
#include "access/htup_details.h"
}

#define LSH_KNOWN_FLAGS (LSH_PAGE_TYPE_MASK | LSH_HAS_HIGH | LSH_IN_FREELIST | LSH_NARROW | LSH_PENDING_CLOSED | \
						 LSH_PENDING_KEYED)

/*
 * What is wrong with page (NULL: nothing) for a reader that expects one of
 * the page types in types (a mask of LSH_PAGE_*) at level (-1: any level its
 * type allows). params is needed to check a data page; NULL skips that part.
 * An all-zero page is never acceptable here: callers that may meet one (the
 * whole-index passes) test PageIsNew first. The message may be palloc'd.
 */
const char *
lsh_page_problem(Page page, uint16 types, int level, const LshIndexParams *params)
{
	PageHeader	ph = (PageHeader) page;
	LshPageOpaque opaque;
	uint16		type;

	if (PageIsNew(page))
		return "unexpected all-zero page";
	if (PageGetPageSize(page) != BLCKSZ || PageGetPageLayoutVersion(page) != PG_PAGE_LAYOUT_VERSION ||
		ph->pd_special != BLCKSZ - MAXALIGN(sizeof(LshPageOpaqueData)))
		return "not an lsh page (page size, layout version or special space)";
	opaque = LshPageGetOpaque(page);
	if (opaque->page_id != LSH_PAGE_ID)
		return "not an lsh page (page id)";
	if (ph->pd_upper != ph->pd_special || ph->pd_lower > ph->pd_upper)
		return psprintf("invalid pd_lower %d or pd_upper %d", ph->pd_lower, ph->pd_upper);
	if (opaque->flags & ~LSH_KNOWN_FLAGS)
		return "unknown page flags";
	if ((opaque->flags & (LSH_PENDING_CLOSED | LSH_PENDING_KEYED)) &&
		(opaque->flags & LSH_PAGE_TYPE_MASK) != LSH_PAGE_PENDING)
		return "pending page flag on another page type";
	type = opaque->flags & LSH_PAGE_TYPE_MASK;
	if (type != LSH_PAGE_META && type != LSH_PAGE_DATA && type != LSH_PAGE_INTERNAL &&
		type != LSH_PAGE_LEAF && type != LSH_PAGE_PENDING)
		return "unknown page type";
	if ((type & types) == 0)
		return type == LSH_PAGE_META ? "unexpected metapage" :
			type == LSH_PAGE_DATA ? "unexpected data page" :
			type == LSH_PAGE_PENDING ? "unexpected pending list page" :
			type == LSH_PAGE_LEAF ? "unexpected leaf" : "unexpected internal page";

	if (type == LSH_PAGE_LEAF || type == LSH_PAGE_INTERNAL)
	{
		int			esize = type == LSH_PAGE_LEAF ? lsh_leaf_entry_size(page) : (int) sizeof(LshEntry);
		bool		has_high = (opaque->flags & LSH_HAS_HIGH) != 0;

		if (opaque->flags & LSH_IN_FREELIST)
			return "tree page marked as on the free list";
		if (type == LSH_PAGE_LEAF ? opaque->level != 0 : opaque->level == 0)
			return "tree page with a level that does not match its type";
		if (level >= 0 && opaque->level != level)
			return psprintf("tree page at level %d, expected level %d", opaque->level, level);
		if (!minhash::lsh_layout::entries_end_ok(ph->pd_lower, LSH_CONTENT_START, LSH_CONTENT_SIZE, esize))
			return psprintf("tree page with invalid pd_lower %d", ph->pd_lower);
		if (type == LSH_PAGE_INTERNAL && ph->pd_lower == LSH_CONTENT_START)
			return "empty internal page";
		/* a leaf's sorted prefix (lsh_leaf_sorted) is among its entries */
		if (type == LSH_PAGE_LEAF && opaque->count > lsh_count_entries(page, esize))
			return psprintf("leaf with %d entries in key order but %d entries", opaque->count,
							lsh_count_entries(page, esize));
		if (type == LSH_PAGE_INTERNAL && (opaque->flags & LSH_NARROW))
			return "internal page marked narrow";
		if (has_high != (opaque->next != InvalidBlockNumber))
			return "tree page with a right link but no high key, or a high key but no right link";
		if (has_high && opaque->high < opaque->low)
			return "tree page with a high key below its low key";
		if ((opaque->flags & LSH_NARROW) &&
			!minhash::lsh_layout::narrow_range_ok(has_high, opaque->low, opaque->high))
			return "narrow leaf whose key range needs more than 24 bits";
	}
	else if (type == LSH_PAGE_PENDING)
		return lsh_pending_page_problem(page);
	else if (type == LSH_PAGE_DATA)
	{
		if (opaque->flags & (LSH_HAS_HIGH | LSH_NARROW))
			return "data page with tree page flags";
		if (opaque->level != 0)
			return "data page with a level";
		if (params != NULL && params->num_perm > 0 &&
			(!minhash::lsh_layout::data_lower_ok(ph->pd_lower, LSH_CONTENT_START, LSH_CONTENT_SIZE,
												 params->num_perm, 4 >> params->slot_width) ||
			 opaque->count > params->slots_per_page))
			return psprintf("data page with invalid pd_lower %d or slot count %d",
							ph->pd_lower, opaque->count);
		if (params != NULL && params->num_perm == 0)
			return "data page in an index without parameters";
	}
	if (ph->pd_lower < SizeOfPageHeaderData)
		return psprintf("invalid pd_lower %d", ph->pd_lower);
	return NULL;
}

/* What is wrong with a data slot: an unknown state, or an allocated slot without a valid heap TID. */
const char *
lsh_slot_problem(const LshSlotHeader *slot)
{
	if (slot->state == LSH_SLOT_FREE)
		return NULL;
	if (slot->state != LSH_SLOT_LIVE && slot->state != LSH_SLOT_DEAD)
		return "data slot with an invalid state";
	if (!ItemPointerIsValid(&slot->tid) ||
		ItemPointerGetOffsetNumberNoCheck(&slot->tid) > MaxHeapTuplesPerPage)
		return "data slot with an invalid heap TID";
	return NULL;
}

const char *
lsh_pending_page_problem(Page page)
{
	PageHeader	ph = (PageHeader) page;
	LshPageOpaque opaque = LshPageGetOpaque(page);

	if (opaque->flags & (LSH_HAS_HIGH | LSH_NARROW | LSH_IN_FREELIST))
		return "pending list page with tree or data page flags";
	if (opaque->level != 0)
		return "pending list page with a level";
	if ((opaque->flags & LSH_PENDING_KEYED) ? (opaque->count < 1 || opaque->count > LSH_PENDING_MAX_BANDS)
		: opaque->count != 0)
		return psprintf("pending list page with %d band keys a row", opaque->count);
	if (ph->pd_lower < LSH_CONTENT_START || ph->pd_lower > LSH_CONTENT_START + LSH_CONTENT_SIZE ||
		(ph->pd_lower - LSH_CONTENT_START) % lsh_pending_row_size(page) != 0)
		return psprintf("pending list page with invalid pd_lower %d", ph->pd_lower);
	return NULL;
}
