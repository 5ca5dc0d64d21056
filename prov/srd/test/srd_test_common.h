/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_common.h: small helpers shared by the provider's object-level
 * tests: the time scale that stretches every wait under valgrind, a
 * monotonic clock in seconds, and a window of free UDP ports.
 */
#ifndef SRD_TEST_COMMON_H
#define SRD_TEST_COMMON_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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

/* The first of n consecutive UDP ports on 127.0.0.1 that are free now
 * (bound and let go again; other processes may race for them, hence a
 * window that starts apart per process), or 0 if none is found. */
static inline int free_udp_ports(int n)
{
	int fds[64];

	if (n > 64)
		return 0;
	for (int t = 0; t < 200; t++) {
		int base = 20000 + (int)(((unsigned)getpid() * 131u +
					  (unsigned)t * 64u) % 24000u);
		bool ok = true;
		int k;

		for (k = 0; k < n && ok; k++) {
			struct sockaddr_in sin;

			memset(&sin, 0, sizeof(sin));
			sin.sin_family = AF_INET;
			sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			sin.sin_port = htons((uint16_t)(base + k));
			fds[k] = socket(AF_INET, SOCK_DGRAM, 0);
			ok = fds[k] >= 0 &&
			     !bind(fds[k], (struct sockaddr *)&sin, sizeof(sin));
		}
		while (k--)
			if (fds[k] >= 0)
				close(fds[k]);
		if (ok)
			return base;
	}
	return 0;
}

#endif /* SRD_TEST_COMMON_H */
