/*
 * The signature store: row ids (block * slots per page + slot), the slot
 * reader every path that reads a stored signature by row id goes through,
 * and the allocation of a slot for a new signature (the free-slot list).
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"
#include "pg/lsh/lsh_wal.h"

uint32
lsh_rowid(const LshIndexParams *params, BlockNumber blkno, int slot)
{
	uint64		id = (uint64) blkno * params->slots_per_page + slot;

	if (id > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("lsh index is too large: row ids are 32 bits"),
				 errdetail("Data block %u, slot %d.", blkno, slot)));
	return (uint32) id;
}

BlockNumber
lsh_rowid_block(const LshIndexParams *params, uint32 rowid)
{
	return rowid / params->slots_per_page;
}

int
lsh_rowid_slot(const LshIndexParams *params, uint32 rowid)
{
	return (int) (rowid % params->slots_per_page);
}

/*
 * lsh_check_signature for an insert. An index built on a table without
 * signatures takes its parameters from the first one inserted and keeps them
 * even if that insert rolls back or its row is deleted later (build_entries
 * = 0 tells such an index: a build that saw rows records them), so "the
 * index holds" would mislead: say where the parameters came from and how to
 * start afresh.
 */
static void
check_inserted_signature(Relation index, const LshMetaPageData *meta, const LshIndexParams *params,
						 const MinHashSig *sig)
{
	if (meta->build_entries == 0 && !lsh_signature_matches(params, sig))
	{
		/* wider values of the same family, k and seed: an explicit cast narrows them */
		bool		castable = MinHashSigFamily(sig) == params->family &&
			sig->num_perm == params->num_perm && sig->seed == params->seed &&
			MinHashSigWidth(sig) < params->sig_width;

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("signature does not match lsh index \"%s\"", RelationGetRelationName(index)),
				 errdetail("The index was built without rows and took family %s, num_perm = %d, seed = %lld "
						   "and %d-bit values from the first signature inserted into it, and keeps them even "
						   "if that insert was rolled back or its row deleted; "
						   "this one has family %s, num_perm = %d, seed = %lld and %d-bit values.",
						   minhash_family_name(params->family), params->num_perm,
						   (long long) params->seed, MINHASH_WIDTH_BITS(params->sig_width),
						   minhash_family_name(MinHashSigFamily(sig)), (int) sig->num_perm,
						   (long long) sig->seed, MINHASH_WIDTH_BITS(MinHashSigWidth(sig))),
				 castable ?
				 errhint("Cast the signature to minhash(%d, %d) (an explicit cast keeps the low bits of each "
						 "value), or, if the table holds no such signature, REINDEX the index: it takes its "
						 "parameters anew from the rows the table holds.",
						 params->num_perm, MINHASH_WIDTH_BITS(params->sig_width)) :
				 errhint("If the table holds no such signature, REINDEX the index: it takes its parameters "
						 "anew from the rows the table holds.")));
	}
	lsh_check_signature(index, params, sig, "signature");
}

/*
 * Put data page page (block blkno), which has a free slot, on the free-slot
 * list whose head is *head (the metapage's free_head, changed in the same WAL
 * record), unless it is on it already.
 */
void
lsh_free_list_push(BlockNumber *head, Page page, BlockNumber blkno)
{
	LshPageOpaque opaque = LshPageGetOpaque(page);

	if (opaque->flags & LSH_IN_FREELIST)
		return;
	opaque->flags |= LSH_IN_FREELIST;
	opaque->next = *head;
	*head = blkno;
}

/*
 * The slot reader: slot `slot` of data page `page` (block blkno of index,
 * read through a checked walk or checked by the caller), itself checked: an
 * invalid state or heap TID is damage (XX002). Every reader of stored
 * signatures -- scans, VACUUM, the all-pairs walk, minhash_lsh_check --
 * takes slots through here. The check passes problem: then damage is not
 * reported but returned in *problem (NULL if none), for it to list.
 */
LshSlotHeader *
lsh_slot_read(Relation index, Page page, const LshIndexParams *params, int slot, BlockNumber blkno,
			  const char **problem)
{
	LshSlotHeader *s = LshDataSlot(page, slot, params->slot_size);
	const char *what = lsh_slot_problem(s);

	if (problem != NULL)
		*problem = what;
	else if (what != NULL)
		lsh_corrupted(index, what, blkno);
	return s;
}

/*
 * A slot for a new signature, found under the metapage's EXCLUSIVE lock
 * (metabuf) through the insert's walk w: the head of the free-slot list's
 * first free slot, or slot 0 of a new page. On an empty index the
 * signature's k fixes the parameters (into t->meta_first, written by
 * lsh_slot_store). Everything that can fail happens here, before the
 * caller's WAL record; t->buf is returned EXCLUSIVE.
 */
void
lsh_slot_alloc(Relation index, Buffer metabuf, const MinHashSig *sig, LshWalk *w, LshNewSlot *t)
{
	LshMetaPage meta = LshPageGetMeta(BufferGetPage(metabuf));

	/* each round unlinks a full page from the free list: the walk bounds them */
	for (;;)
	{
		Page		page;
		LshPageOpaque opaque;
		BlockNumber blkno;
		LshWalRecord r;
		int			m;
		int			d;

		t->first = meta->num_perm == 0;
		if (t->first)
		{
			/* first signature ever: check the options against its k before any change */
			t->meta_first = *meta;
			lsh_resolve_params(&t->meta_first, sig->num_perm, sig->seed, MinHashSigFamily(sig),
							   MinHashSigWidth(sig));
			lsh_meta_params(&t->meta_first, &t->params);
		}
		else
		{
			lsh_meta_params(meta, &t->params);
			check_inserted_signature(index, meta, &t->params, sig);
		}

		t->slot = -1;
		t->fresh = meta->free_head == InvalidBlockNumber;
		if (!t->fresh)
		{
			/* never block 0, which we hold: lsh_walk_read refuses the metapage */
			t->buf = lsh_walk_read(w, meta->free_head, BUFFER_LOCK_EXCLUSIVE, LSH_PAGE_DATA, 0,
								   &t->params, InvalidBlockNumber, &page);
			if (!(LshPageGetOpaque(page)->flags & LSH_IN_FREELIST))
				lsh_corrupted(index, "free list names a data page not marked as on it",
							  meta->free_head);
			for (int i = 0; i < t->params.slots_per_page; i++)
			{
				if (LshDataSlot(page, i, t->params.slot_size)->state == LSH_SLOT_FREE)
				{
					t->slot = i;
					break;
				}
			}
		}
		else
		{
			t->buf = lsh_new_buffer(index);
			t->slot = 0;
		}
		blkno = BufferGetBlockNumber(t->buf);
		/* fail before logging anything if the row id would not fit */
		(void) lsh_rowid(&t->params, blkno, t->params.slots_per_page - 1);
		if (t->slot >= 0)
		{
			t->rowid = lsh_rowid(&t->params, blkno, t->slot);
			return;
		}

		/*
		 * A listed page without a free slot should not exist; unlink it
		 * rather than fail, and try the next one.
		 */
		lsh_wal_begin(&r, index);
		m = lsh_wal_page(&r, metabuf, false);
		d = lsh_wal_page(&r, t->buf, false);
		opaque = LshPageGetOpaque(BufferGetPage(t->buf));
		meta->free_head = opaque->next;
		opaque->flags &= ~LSH_IN_FREELIST;
		opaque->next = InvalidBlockNumber;
		lsh_wal_changed(&r, m, &meta->free_head, sizeof(meta->free_head));
		lsh_wal_changed(&r, d, opaque, sizeof(LshPageOpaqueData));
		lsh_wal_finish(&r);
		UnlockReleaseBuffer(t->buf);
	}
}

/*
 * Store the signature (and its heap TID) in the slot lsh_slot_alloc found,
 * within the caller's WAL record r (its critical section: nothing here can
 * fail), whose page m is the metapage: the data page is registered next,
 * then the slot, the page's count and the free list (a full page leaves it),
 * the parameters of a first signature and the slot count of the metapage,
 * each byte range named.
 */
void
lsh_slot_store(LshWalRecord *r, int m, LshMetaPage meta, const LshNewSlot *t, const MinHashSig *sig,
			   ItemPointer tid)
{
	int			d = lsh_wal_page(r, t->buf, t->fresh);
	Page		page = BufferGetPage(t->buf);
	int			k = t->params.num_perm;
	LshPageOpaque opaque;
	LshSlotHeader *slot;

	if (t->first)
	{
		*meta = t->meta_first;
		/* the version's fields only: an older metapage ends before the widths */
		lsh_wal_changed(r, m, meta, lsh_meta_size(meta->version));
	}
	if (t->fresh)
	{
		lsh_init_data_page(page, k, t->params.slot_width);
		opaque = LshPageGetOpaque(page);
		opaque->flags |= LSH_IN_FREELIST;
		opaque->next = InvalidBlockNumber;
		meta->free_head = BufferGetBlockNumber(t->buf);
	}
	opaque = LshPageGetOpaque(page);
	slot = LshDataSlot(page, t->slot, t->params.slot_size);
	slot->tid = *tid;
	slot->state = LSH_SLOT_LIVE;
	lsh_pack_values(&t->params, sig->values, LshSlotValues(slot));
	lsh_wal_changed(r, d, slot, t->params.slot_size);
	opaque->count++;
	if (opaque->count >= t->params.slots_per_page)
	{
		/* full: it must be the list head (we took the head or a new page) */
		meta->free_head = opaque->next;
		opaque->flags &= ~LSH_IN_FREELIST;
		opaque->next = InvalidBlockNumber;
	}
	lsh_wal_changed(r, d, opaque, sizeof(LshPageOpaqueData));
	meta->nslots++;
	lsh_wal_changed(r, m, &meta->free_head, sizeof(meta->free_head));
	lsh_wal_changed(r, m, &meta->nslots, sizeof(meta->nslots));
}
