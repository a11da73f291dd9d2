/*
 * The signature store: row ids (block * slots per page + slot) and the slot
 * reader every path that reads a stored signature by row id goes through.
 */
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
