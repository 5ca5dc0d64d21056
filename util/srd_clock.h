/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_clock.h: monotonic time in nanoseconds.  The transport and the
 * message layer never read it: they ask the wire (srd_tp_now), so the
 * in-memory wire can substitute virtual time.  The wires read it, and so
 * do the libfabric objects (fi/), for what is the application's time:
 * blocking reads' timeouts, the progress thread's idle test, statistics
 * intervals.
 */
#ifndef SRD_CLOCK_H
#define SRD_CLOCK_H

#include <stdint.h>
#include <time.h>

#define SRD_NS_PER_US 1000ULL
#define SRD_NS_PER_MS 1000000ULL
#define SRD_NS_PER_S  1000000000ULL

static inline uint64_t srd_clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SRD_NS_PER_S + (uint64_t)ts.tv_nsec;
}

#endif /* SRD_CLOCK_H */
