/*
 * srd_clock.h: monotonic time in nanoseconds.  Only wires read the real
 * clock; everything above them asks the wire, so the in-memory wire can
 * substitute virtual time.
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
