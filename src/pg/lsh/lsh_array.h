/*
 * LshArray<T>: the growable array of the lsh glue, in palloc'd memory.
 *
 * A plain struct (no constructor, no destructor): the glue compiles without
 * exceptions, and an object with a destructor must not be alive in a frame
 * that PostgreSQL may longjmp through. Zero-initialise it (= {}, or inside a
 * palloc0'd struct), then push. The memory is allocated in the memory context
 * current at the first push and stays there when it grows (repalloc); free it
 * with free() or with its context. T must be trivially copyable (it is moved
 * with memcpy by repalloc).
 */
#ifndef MINHASH_PG_LSH_ARRAY_H
#define MINHASH_PG_LSH_ARRAY_H

#include "pg/pg_prelude.h"

#include <type_traits>

extern "C" {
#include "utils/memutils.h"
}

template <typename T>
struct LshArray
{
	static_assert(std::is_trivially_copyable<T>::value, "LshArray holds trivially copyable types");

	T		   *data;
	Size		n;
	Size		cap;

	/* room for at least want elements (growing by doubling, 64 at the least) */
	void		reserve(Size want)
	{
		Size		newcap;

		if (want <= cap)
			return;
		newcap = Max(Max(cap * 2, want), (Size) 64);
		data = data == NULL ? (T *) palloc_extended(sizeof(T) * newcap, MCXT_ALLOC_HUGE)
			: (T *) repalloc_huge(data, sizeof(T) * newcap);
		cap = newcap;
	}

	void		push(const T &v)
	{
		if (n == cap)
			reserve(n + 1);
		data[n++] = v;
	}

	/* count more elements at the end, uninitialised; returns the first of them */
	T		   *extend(Size count)
	{
		T		   *first;

		reserve(n + count);
		first = data + n;
		n += count;
		return first;
	}

	void		clear() { n = 0; }

	void		free()
	{
		if (data != NULL)
			pfree(data);
		data = NULL;
		n = cap = 0;
	}
};

#endif
