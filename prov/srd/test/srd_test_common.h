/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_common.h: small helpers shared by the provider's object-level
 * tests: the time scale that stretches every wait under valgrind, and a
 * monotonic clock in seconds.
 */
#ifndef SRD_TEST_COMMON_H
#define SRD_TEST_COMMON_H

#include <stdlib.h>
#include <time.h>

/* Timers fire late under valgrind: SRD_TEST_TIME_SCALE stretches every
 * timeout and wait of these tests (default 1). */
static inline double time_scale(void)
{
	const char *v = getenv("SRD_TEST_TIME_SCALE");
	double k = v ? atof(v) : 1.0;

	return k >= 1.0 ? k : 1.0;
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif /* SRD_TEST_COMMON_H */
