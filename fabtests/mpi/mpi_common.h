/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mpi_common.h - small helpers shared by the MPI test programs in
 * fabtests/mpi: failure reporting, a watchdog, data patterns and
 * size-list parsing.  Header only (everything is static) so that each
 * program builds from a single .c file.
 */
#ifndef MPI_COMMON_H
#define MPI_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int mt_rank = -1;
static int mt_size = 0;
static const char *mt_name = "?";
static char mt_alarm_msg[256];
/* What the program is doing now; the watchdog prints it. */
static char mt_where[160] = "start";

/* Print "FAIL <name> rank R: ..." and take the whole job down. */
__attribute__((format(printf, 1, 2), noreturn))
static inline void mt_fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "FAIL %s rank %d: %s\n", mt_name, mt_rank, msg);
	fflush(stderr);
	fflush(stdout);
	MPI_Abort(MPI_COMM_WORLD, 1);
	_exit(1);
}

static inline const char *mt_errstr(int rc)
{
	static char s[MPI_MAX_ERROR_STRING + 32];
	char e[MPI_MAX_ERROR_STRING];
	int len = 0, cls = -1;

	e[0] = '\0';
	MPI_Error_string(rc, e, &len);
	MPI_Error_class(rc, &cls);
	snprintf(s, sizeof(s), "error %d (class %d): %s", rc, cls, e);
	return s;
}

/* Every MPI call goes through CHK: a failure names the call and line. */
#define CHK(call) do {							\
	int chk_rc_ = (call);						\
	if (chk_rc_ != MPI_SUCCESS)					\
		mt_fail("%s:%d: %s: %s", __FILE__, __LINE__, #call,	\
			mt_errstr(chk_rc_));				\
} while (0)

/* MPI_Waitall that names the failed request and its own error. */
static inline void mt_waitall_(int n, MPI_Request *req, MPI_Status *st,
			       const char *file, int line)
{
	MPI_Status *s = st;
	int rc, i;

	if (st == MPI_STATUSES_IGNORE) {
		s = malloc(sizeof(*s) * (size_t)(n > 0 ? n : 1));
		if (!s)
			mt_fail("out of memory");
	}
	rc = MPI_Waitall(n, req, s);
	if (rc == MPI_ERR_IN_STATUS)
		for (i = 0; i < n; i++)
			if (s[i].MPI_ERROR != MPI_SUCCESS &&
			    s[i].MPI_ERROR != MPI_ERR_PENDING)
				mt_fail("%s:%d: MPI_Waitall: request %d of %d "
					"(source %d, tag %d) failed: %s", file,
					line, i, n, s[i].MPI_SOURCE,
					s[i].MPI_TAG, mt_errstr(s[i].MPI_ERROR));
	if (rc != MPI_SUCCESS)
		mt_fail("%s:%d: MPI_Waitall: %s", file, line, mt_errstr(rc));
	if (s != st)
		free(s);
}

#define WAITALL(n, req, st) mt_waitall_((n), (req), (st), __FILE__, __LINE__)

#define CHECK(cond, ...) do {						\
	if (!(cond))							\
		mt_fail(__VA_ARGS__);					\
} while (0)

static inline void mt_alarm_handler(int sig)
{
	char msg[sizeof(mt_alarm_msg) + sizeof(mt_where) + 2];
	size_t n = strlen(mt_alarm_msg), w = strnlen(mt_where,
						     sizeof(mt_where) - 1);
	ssize_t r;

	(void)sig;
	/* one write, so that the ranks' lines do not interleave */
	memcpy(msg, mt_alarm_msg, n);
	memcpy(msg + n, mt_where, w);
	memcpy(msg + n + w, ")\n", 2);
	r = write(2, msg, n + w + 2);
	(void)r;
	_exit(124);
}

/* Record the current step for the watchdog message. */
__attribute__((format(printf, 1, 2)))
static inline void mt_at(const char *fmt, ...)
{
	char buf[sizeof(mt_where)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memcpy(mt_where, buf, sizeof(buf));
}

/* Kill this process (and so the job) if it is still running after
 * 'seconds'; 0 disables the watchdog. */
static inline void mt_watchdog(unsigned seconds)
{
	snprintf(mt_alarm_msg, sizeof(mt_alarm_msg),
		 "FAIL %s rank %d: watchdog: not finished within %u s (at: ",
		 mt_name, mt_rank, seconds);
	signal(SIGALRM, mt_alarm_handler);
	alarm(seconds);
}

/* MPI_Init (or MPI_Init_thread when 'required' >= 0), rank/size, errors
 * returned to the caller (and so reported by CHK) instead of aborting
 * inside the library. */
static inline int mt_init(int *argc, char ***argv, const char *name,
			  int required)
{
	int provided = MPI_THREAD_SINGLE;

	mt_name = name;
	if (required >= 0) {
		if (MPI_Init_thread(argc, argv, required, &provided) != MPI_SUCCESS) {
			fprintf(stderr, "FAIL %s: MPI_Init_thread failed\n", name);
			exit(1);
		}
	} else if (MPI_Init(argc, argv) != MPI_SUCCESS) {
		fprintf(stderr, "FAIL %s: MPI_Init failed\n", name);
		exit(1);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	return provided;
}

/* Data pattern: depends on the byte offset (also across 256-byte and
 * 64 KiB boundaries, so shifted or swapped chunks are caught) and on a
 * per-message seed, so that messages are told apart. */
static inline uint8_t mt_pat(uint32_t seed, size_t i)
{
	return (uint8_t)(i + (i >> 8) * 3 + (i >> 16) * 5 + (i >> 24) * 11 +
			 seed * 7 + (seed >> 8) * 13 + (seed >> 16) * 17 + 1);
}

static inline void mt_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = mt_pat(seed, i);
}

/* Byte-for-byte check; fails the job with the first bad offset. */
static inline void mt_verify(const void *buf, size_t len, uint32_t seed,
		      const char *what)
{
	const uint8_t *p = buf;
	size_t i, bad = 0, first = 0;

	for (i = 0; i < len; i++) {
		if (p[i] != mt_pat(seed, i)) {
			if (!bad)
				first = i;
			bad++;
		}
	}
	if (bad)
		mt_fail("%s: %zu of %zu bytes wrong, first at offset %zu "
			"(expected 0x%02x, got 0x%02x)", what, bad, len, first,
			mt_pat(seed, first), p[first]);
}

#define MT_GUARD_BYTE 0xA5
#define MT_GUARD_LEN 64

/* Bytes after a message must be left alone by the receive. */
static inline void mt_guard_set(void *buf, size_t len)
{
	memset(buf, MT_GUARD_BYTE, len);
}

static inline void mt_guard_verify(const void *buf, size_t len, const char *what)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != MT_GUARD_BYTE)
			mt_fail("%s: byte %zu past the message end was "
				"overwritten (0x%02x)", what, i, p[i]);
}

static inline void *mt_malloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p)
		mt_fail("out of memory (%zu bytes)", len);
	return p;
}

/* "8,4k,64K,1m" -> sizes (k/m/g are binary); returns the count. */
static inline int mt_parse_sizes(const char *arg, size_t *out, int max)
{
	const char *s = arg;
	int n = 0;

	while (*s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 0);

		if (end == s)
			return -1;
		switch (*end) {
		case 'k': case 'K': v <<= 10; end++; break;
		case 'm': case 'M': v <<= 20; end++; break;
		case 'g': case 'G': v <<= 30; end++; break;
		default: break;
		}
		if (*end != ',' && *end != '\0')
			return -1;
		if (n == max)
			return -1;
		out[n++] = (size_t)v;
		s = *end ? end + 1 : end;
	}
	return n;
}

static inline size_t mt_parse_size(const char *arg)
{
	size_t v;

	if (mt_parse_sizes(arg, &v, 1) != 1) {
		fprintf(stderr, "bad size '%s'\n", arg);
		exit(2);
	}
	return v;
}

static inline void mt_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

#endif /* MPI_COMMON_H */
