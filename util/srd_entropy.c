/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_entropy.c: values that must be unguessable (connection ids, MR
 * keys) from the kernel's entropy pool.  Alone in its file on purpose:
 * the fuzzer links its own reproducible srd_random_u64() instead, and
 * an archive member it does not need is never pulled in.
 */
#include "config.h"
#include "srd_rng.h"
#include "srd_clock.h"

#include <errno.h>
#include <unistd.h>
#include <sys/random.h>

uint64_t srd_random_u64(void)
{
	static __thread uint64_t fallback_state;
	uint64_t v = 0;
	ssize_t n;

	do {
		n = getrandom(&v, sizeof(v), 0);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(v)) {
		/* Only when the kernel lacks getrandom: still never repeats. */
		fallback_state ^= srd_clock_now_ns() ^ ((uint64_t)getpid() << 32);
		v = srd_splitmix64(&fallback_state);
	}
	return v ? v : 0x5ad5ad5ad5ad5ad5ULL;
}
