/*
 * Checked access to the pages of an lsh index.
 *
 * Every path that follows a block number found on disk (the metapage's root,
 * leftmost leaf and free-list head, an internal page's children, a right
 * link, a free-list link, an entry's row id) reads the page through here:
 *  - the block number must name an existing page other than the metapage,
 *    and not a page the caller already holds locked (locking it again would
 *    wait on ourselves forever);
 *  - the page must be an lsh page of the expected type and level, with a
 *    sound header (pd_lower, pd_upper, special size, flags) for its type;
 *  - a chain (right links, the free list) is at most as long as the index
 *    has blocks, so a cycle ends in an error instead of a loop that holds
 *    the metapage lock (a content lock holds off interrupts, so a cycle
 *    under it could not even be cancelled).
 * Damage is reported as index_corrupted (XX002) with the index, the block
 * and a hint to REINDEX, as PostgreSQL's own index AMs do. The page checks
 * themselves are the format's (lsh_page.cpp); minhash_lsh_check reports the
 * same page problems as rows, through lsh_page_problem.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

extern "C" {
#include "storage/bufmgr.h"
#include "utils/rel.h"
}

void
lsh_walk_init(LshWalk *w, Relation index, BufferAccessStrategy strategy)
{
	w->index = index;
	w->nblocks = 0;
	w->strategy = strategy;
	w->report = NULL;
	w->report_arg = NULL;
	memset(&w->recent, 0, sizeof(w->recent));
	lsh_walk_chain(w);
}

void
lsh_walk_chain(LshWalk *w)
{
	w->steps = 0;
	w->check_low = false;
	w->low_from_parent = false;
	w->low = 0;
}

/*
 * What is wrong with following a link to blkno (NULL: nothing): it must name
 * an existing page other than the metapage and other than held (a block the
 * caller has locked; InvalidBlockNumber if none). The block count is
 * refreshed only when a block beyond the known one is named: the index may
 * have grown.
 */
static const char *
lsh_walk_block_problem(LshWalk *w, BlockNumber blkno, BlockNumber held)
{
	if (blkno == InvalidBlockNumber || blkno == LSH_METAPAGE_BLKNO)
		return blkno == LSH_METAPAGE_BLKNO ? "link to the metapage" : "invalid link";
	if (blkno == held)
		return "link from a page to itself";
	if (blkno >= w->nblocks)
	{
		w->nblocks = RelationGetNumberOfBlocks(w->index);
		if (blkno >= w->nblocks)
			return "link beyond the end of the index";
	}
	return NULL;
}

/* Report corruption unless blkno is a block a link may name (see lsh_walk_block_problem). */
void
lsh_walk_check_block(LshWalk *w, BlockNumber blkno, BlockNumber held)
{
	const char *problem = lsh_walk_block_problem(w, blkno, held);

	if (problem != NULL)
		lsh_corrupted(w->index, problem, blkno);
}

/* Damage met by a walk: XX002, or in a reporting walk (the check's) a call of its report function. */
static void
lsh_walk_damage(LshWalk *w, const char *problem, BlockNumber blkno)
{
	if (w->report == NULL)
		lsh_corrupted(w->index, problem, blkno);
	w->report(w->report_arg, blkno, problem);
}

/*
 * Pin and lock page blkno and check it (see lsh_page_problem); the next page
 * of a chain counts one step, and a chain longer than the index has blocks
 * is a cycle. Returns the buffer; *pagep is its page.
 *
 * A reporting walk (w->report set: minhash_lsh_check) reports damage and
 * goes on where it can: a page of an expected type is returned even if it
 * has a problem (the caller validates what it reads); a link it cannot
 * follow, a cycle or a page of another kind returns InvalidBuffer.
 */
Buffer
lsh_walk_read(LshWalk *w, BlockNumber blkno, int lockmode, uint16 types, int level,
			  const LshIndexParams *params, BlockNumber held, Page *pagep)
{
	Buffer		buf;
	Page		page;
	const char *problem = lsh_walk_block_problem(w, blkno, held);

	*pagep = NULL;
	if (problem == NULL && ++w->steps > w->nblocks)
	{
		w->nblocks = RelationGetNumberOfBlocks(w->index);
		if (w->steps > w->nblocks)
			problem = "cycle in a chain of pages";
	}
	if (problem != NULL)
	{
		lsh_walk_damage(w, problem, blkno);
		return InvalidBuffer;
	}
	buf = lsh_walk_pin(w, blkno);
	LockBuffer(buf, lockmode);
	page = BufferGetPage(buf);
	problem = lsh_page_problem(page, types, level, params);
	if (problem == NULL && w->check_low && LshPageGetOpaque(page)->low != w->low)
		problem = w->low_from_parent ? "page whose low key is not the one the tree above it implies"
			: "right sibling whose low key is not the high key of its left sibling";
	w->check_low = false;		/* an expectation holds for one read */
	if (problem != NULL)
	{
		bool		usable = w->report != NULL && !PageIsNew(page) && LshPageIsLsh(page) &&
			(LshPageType(page) & types) != 0;

		if (!usable)
			UnlockReleaseBuffer(buf);
		lsh_walk_damage(w, problem, blkno);
		if (!usable)
			return InvalidBuffer;
	}
	*pagep = page;
	return buf;
}

/*
 * Pin and lock block blkno for a pass over every block after the metapage
 * (a scan's verification of every signature, VACUUM's first pass,
 * minhash_lsh_stats) and check it: an all-zero page (left by a crash during
 * relation extension) is returned as it is, any other must be a sound data,
 * tree or pending page; else XX002. Returns the buffer; *pagep is its page.
 */
Buffer
lsh_read_block(Relation index, BlockNumber blkno, int lockmode, BufferAccessStrategy strategy,
			   const LshIndexParams *params, Page *pagep)
{
	Buffer		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
	Page		page;
	const char *problem;

	LockBuffer(buf, lockmode);
	page = BufferGetPage(buf);
	problem = PageIsNew(page) ? NULL : lsh_page_problem(page, LSH_PAGE_ANY & ~LSH_PAGE_META, -1, params);
	if (problem != NULL)
		lsh_corrupted(index, problem, blkno);
	*pagep = page;
	return buf;
}

/*
 * The right sibling of tree page page along its level (InvalidBlockNumber
 * at the end); the next lsh_walk_read checks that its low key continues
 * this page's high key.
 */
BlockNumber
lsh_walk_right(LshWalk *w, Page page)
{
	LshPageOpaque opaque = LshPageGetOpaque(page);

	w->check_low = (opaque->flags & LSH_HAS_HIGH) != 0;
	w->low = opaque->high;
	w->low_from_parent = false;
	return w->check_low ? opaque->next : InvalidBlockNumber;
}

/* The next page read must have this low key (a parent's separator for its child, or 0 for the leftmost leaf). */
void
lsh_walk_expect_low(LshWalk *w, bool has_low, uint32 low)
{
	w->check_low = has_low;
	w->low = low;
	w->low_from_parent = true;
}

/*
 * A descent for key must end in a leaf whose range holds key; else the tree
 * above it is damaged, and an append would write an entry the leaf cannot
 * encode (a narrow entry stores key - low in 24 bits).
 */
void
lsh_check_key_in_leaf(Relation index, Page page, BlockNumber blkno, uint32 key)
{
	LshPageOpaque opaque = LshPageGetOpaque(page);

	if (key < opaque->low || ((opaque->flags & LSH_HAS_HIGH) && key > opaque->high))
		lsh_corrupted(index, "descent reached a leaf whose key range does not hold the key", blkno);
}

/*
 * A slot's heap TID must name a block of the table: the executor (or the
 * pairs functions) would otherwise fail reading past the heap with an I/O
 * error, or worse follow it. *heap_nblocks caches the table's size (0 at
 * first) and is refreshed before a block beyond it is called damage.
 */
void
lsh_check_heap_tid(Relation index, Relation heap, BlockNumber *heap_nblocks,
				   const ItemPointerData *tid, BlockNumber blkno)
{
	BlockNumber hblk = ItemPointerGetBlockNumberNoCheck(tid);

	if (hblk < *heap_nblocks)
		return;
	*heap_nblocks = RelationGetNumberOfBlocks(heap);
	if (hblk >= *heap_nblocks)
		lsh_corrupted(index, "data slot with a heap TID beyond the end of the table", blkno);
}

void
lsh_corrupted(Relation index, const char *what, BlockNumber blkno)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("lsh index \"%s\" is corrupted: %s at block %u",
					RelationGetRelationName(index), what, blkno),
			 errhint("REINDEX the index; minhash_lsh_check() lists what is wrong.")));
}

/*
 * The buffers this backend last found metapages in (shared buffers only), so
 * that reading a metapage again pins it with ReadRecentBuffer: no block-count
 * lookup (an lseek) on every insert, scan and merge step. A hint that still
 * holds block 0 of the relation also proves that the index has a metapage.
 */
#define LSH_META_HINTS 8

static LshBufferHint meta_hints[LSH_META_HINTS];
static int	meta_hints_next;

/* The metapage hint of index: its own, or the next one round the table for it to take. */
static LshBufferHint *
meta_hint(Relation index)
{
	LshBufferHint *h;

	for (int i = 0; i < LSH_META_HINTS; i++)
	{
		if (meta_hints[i].relid == RelationGetRelid(index))
			return &meta_hints[i];
	}
	h = &meta_hints[meta_hints_next];
	meta_hints_next = (meta_hints_next + 1) % LSH_META_HINTS;
	memset(h, 0, sizeof(*h));
	return h;
}

/*
 * Pin and lock the metapage, checking that it is one and that its parameters
 * and links are sane: every reader sizes slots, band slices and page offsets
 * from them, so a damaged value would send it outside a page or a signature.
 * Links are checked against the block count where they are followed.
 */
Buffer
lsh_read_meta(Relation index, int mode, LshMetaPage *meta)
{
	Buffer		buf;
	Page		page;
	const LshMetaPageData *m;
	const char *problem;
	LshBufferHint *hint;
	int			sig_width;
	int			slot_width;

	hint = RelationUsesLocalBuffers(index) ? NULL : meta_hint(index);
	buf = hint != NULL ? lsh_hint_pin(hint, index, LSH_METAPAGE_BLKNO) : InvalidBuffer;
	if (!BufferIsValid(buf))
	{
		if (RelationGetNumberOfBlocks(index) == 0)
			lsh_corrupted(index, "no metapage", LSH_METAPAGE_BLKNO);
		buf = ReadBuffer(index, LSH_METAPAGE_BLKNO);
		if (hint != NULL)
			lsh_hint_remember(hint, index, LSH_METAPAGE_BLKNO, buf);
	}
	LockBuffer(buf, mode);
	page = BufferGetPage(buf);
	problem = lsh_page_problem(page, LSH_PAGE_META, -1, NULL);
	if (problem != NULL)
		lsh_corrupted(index, problem, LSH_METAPAGE_BLKNO);
	/* the version-1 fields first: magic and version decide how long the rest is */
	if (((PageHeader) page)->pd_lower < (char *) LshPageGetMeta(page) + LSH_META_SIZE_V1 - (char *) page)
		lsh_corrupted(index, "metapage with invalid pd_lower", LSH_METAPAGE_BLKNO);
	*meta = LshPageGetMeta(page);
	m = *meta;
	if (m->magic != LSH_MAGIC)
		lsh_corrupted(index, "bad magic number", LSH_METAPAGE_BLKNO);
	if (!LSH_VERSION_KNOWN(m->version))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lsh index \"%s\" has on-disk version %u, this build reads versions %d to %d",
						RelationGetRelationName(index), m->version, LSH_VERSION_EXACT, LSH_VERSION),
				 errhint("REINDEX the index.")));
	problem = lsh_meta_length_problem(m->version, (long) ((PageHeader) page)->pd_lower -
									  ((char *) LshPageGetMeta(page) - (char *) page));
	if (problem != NULL)
		lsh_corrupted(index, problem, LSH_METAPAGE_BLKNO);
	/*
	 * num_perm = 0: no signature seen yet, and nothing else is in use. The
	 * widths (version 5): known codes, the slots' no wider than the
	 * signatures' (a wider slot width would have readers verify bits the
	 * signatures lack); before version 5 both are 32 bits.
	 */
	sig_width = LSH_HAS_WIDTHS(m->version) ? m->sig_width : MINHASH_WIDTH_32;
	slot_width = LSH_HAS_WIDTHS(m->version) ? m->slot_width : MINHASH_WIDTH_32;
	if (m->num_perm > MINHASH_MAX_NUM_PERM || m->family >= MINHASH_NUM_FAMILIES ||
		sig_width >= MINHASH_NUM_WIDTHS || slot_width >= MINHASH_NUM_WIDTHS || slot_width < sig_width ||
		(m->num_perm != 0 &&
		 (m->bands < 1 || m->rows < 1 || (int) m->bands * m->rows > m->num_perm ||
		  m->slots_per_page != lsh_slots_per_page(m->num_perm, slot_width))))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("lsh index \"%s\" is corrupted: invalid parameters in the metapage at block %u",
						RelationGetRelationName(index), LSH_METAPAGE_BLKNO),
				 errdetail("num_perm = %d, bands = %d, rows = %d, %d slots per page, family %d, width codes %d and %d.",
						   m->num_perm, m->bands, m->rows, m->slots_per_page, (int) m->family,
						   sig_width, slot_width),
				 errhint("REINDEX the index; minhash_lsh_check() lists what is wrong.")));
	if ((m->root == InvalidBlockNumber) != (m->height == 0) ||
		(m->root == InvalidBlockNumber) != (m->leftmost == InvalidBlockNumber) ||
		m->height > LSH_MAX_HEIGHT ||
		m->root == LSH_METAPAGE_BLKNO || m->leftmost == LSH_METAPAGE_BLKNO ||
		m->free_head == LSH_METAPAGE_BLKNO ||
		(m->num_perm == 0 && (m->root != InvalidBlockNumber || m->free_head != InvalidBlockNumber)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("lsh index \"%s\" is corrupted: invalid links in the metapage at block %u",
						RelationGetRelationName(index), LSH_METAPAGE_BLKNO),
				 errdetail("root = %u, leftmost leaf = %u, height = %d, free list head = %u.",
						   m->root, m->leftmost, m->height, m->free_head),
				 errhint("REINDEX the index; minhash_lsh_check() lists what is wrong.")));
	return buf;
}
