/*
 * The one way the glue calls the core (src/core): call_core_until_done().
 *
 * A core entry point the glue uses is noexcept and returns minhash::Status
 * (src/core/status.h). The helper below calls it until it is done:
 *  - Interrupted: the core saw InterruptPending and stopped early; the
 *    helper services the interrupt with CHECK_FOR_INTERRUPTS() here, where no
 *    C++ object of the core is alive (it may longjmp), and calls again;
 *  - TooLarge: the caller's room ran out; grow() may enlarge it (a palloc'd
 *    buffer, a budget) and return true to call again, or return false: the
 *    helper then returns TooLarge and the caller reports its own limit;
 *  - OutOfMemory: ereport(ERROR) with SQLSTATE 53200;
 *  - Failure: ereport(ERROR) with SQLSTATE XX000.
 * It returns Ok or TooLarge.
 *
 * call and grow are lambdas that capture plain pointers or references only
 * (checked: trivially destructible), so nothing needs destroying when
 * PostgreSQL longjmps through this frame; call must be noexcept (checked).
 */
#ifndef MINHASH_PG_CORE_CALL_H
#define MINHASH_PG_CORE_CALL_H

#include "pg/pg_prelude.h"

#include <type_traits>

#include "core/status.h"

extern "C" {
#include "miscadmin.h"
}

/*
 * Interrupt flag for a core loop: InterruptPending when CHECK_FOR_INTERRUPTS
 * is guaranteed to clear it (so a retry makes progress), else none.
 */
const volatile sig_atomic_t *minhash_interrupt_flag(void);

/* ereport(ERROR) for OutOfMemory (53200) or Failure (XX000) */
[[noreturn]] void minhash_report_core_status(minhash::Status status);

template <class Call, class Grow>
minhash::Status
call_core_until_done(Call &&call, Grow &&grow)
{
	static_assert(std::is_trivially_destructible<std::remove_reference_t<Call>>::value &&
				  std::is_trivially_destructible<std::remove_reference_t<Grow>>::value,
				  "a longjmp may leave this frame: no destructor may be pending");
	static_assert(noexcept(call(minhash::InterruptFlag())),
				  "the core is called through noexcept entry points only");

	for (;;)
	{
		minhash::Status status = call(minhash_interrupt_flag());

		switch (status)
		{
			case minhash::Status::Ok:
				return status;
			case minhash::Status::Interrupted:
				CHECK_FOR_INTERRUPTS();
				break;
			case minhash::Status::TooLarge:
				if (!grow())
					return status;
				break;
			case minhash::Status::OutOfMemory:
			case minhash::Status::Failure:
				minhash_report_core_status(status);
		}
	}
}

/* The same for a call whose room cannot grow: TooLarge is returned at once. */
template <class Call>
minhash::Status
call_core_until_done(Call &&call)
{
	return call_core_until_done(call, []() { return false; });
}

#endif
