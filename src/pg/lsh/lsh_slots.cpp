/*
 * The signature store: row ids (block * slots per page + slot) and the slot
 * reader every path that reads a stored signature by row id goes through.
 */
#include "pg/pg_prelude.h"

#include "pg/lsh/lsh.h"

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
	LshSlotHeader *s = LshDataSlot(page, slot, params->num_perm);
	const char *what = lsh_slot_problem(s);

	if (problem != NULL)
		*problem = what;
	else if (what != NULL)
		lsh_corrupted(index, what, blkno);
	return s;
}
