/*
 * The glue's side of call_core_until_done() (pg/core_call.h): which
 * interrupt flag the core polls, and how a core failure is reported.
 */
#include "pg/pg_prelude.h"

#include "pg/core_call.h"

const volatile sig_atomic_t *
minhash_interrupt_flag(void)
{
	return INTERRUPTS_CAN_BE_PROCESSED() ? &InterruptPending : NULL;
}

void
minhash_report_core_status(minhash::Status status)
{
	if (status == minhash::Status::OutOfMemory)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("The minhash core library could not allocate memory.")));
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("internal error in the minhash core library (status %d)", (int) status)));
	pg_unreachable();
}
