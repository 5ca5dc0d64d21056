/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_log.c: what an operator reads in the log (fi_srd(7),
 * LOGGING).  A peer process killed mid-job is named in the warning that
 * fails the operations sent to it: its address as srd prints addresses
 * (ip:port), its incarnation and the reason; at info level the session
 * it had started is logged with the same incarnation; at debug level a
 * refused fi_getinfo says which field of the hints it refused.
 *
 * Each test sets FI_LOG_LEVEL and FI_SRD_PEER_TIMEOUT before its first
 * fi_getinfo (Criterion runs each test in a process of its own, where
 * libfabric reads them once) and sends its stderr, where libfabric
 * logs, to a file it reads back.  Bounded: the dead peer is declared
 * dead after 300 ms; every wait has a deadline.
 */
#include "config.h"
#include "srd_test_common.h"
#include "srd_test_host.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>

#define MSG_LEN 64

/* stderr into a fresh file until log_end; returns the file's fd. */
struct log_capture {
	char path[64];
	int fd, saved;
};

static void log_begin(struct log_capture *c)
{
	snprintf(c->path, sizeof(c->path), "/tmp/srd_test_log.XXXXXX");
	c->fd = mkstemp(c->path);
	cr_assert_geq(c->fd, 0);
	fflush(stderr);
	c->saved = dup(STDERR_FILENO);
	cr_assert_geq(c->saved, 0);
	cr_assert_geq(dup2(c->fd, STDERR_FILENO), 0);
}

/* Restores stderr; returns what was logged (malloc'd, NUL-ended). */
static char *log_end(struct log_capture *c)
{
	off_t len;
	char *text;

	fflush(stderr);
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	len = lseek(c->fd, 0, SEEK_END);
	cr_assert_geq(len, 0);
	text = calloc(1, (size_t)len + 1);
	cr_assert_not_null(text);
	cr_assert_eq(pread(c->fd, text, (size_t)len, 0), len);
	close(c->fd);
	unlink(c->path);
	/* SRD_TEST_LOG_SHOW=1: srd's own lines on stdout, to read them */
	if (getenv("SRD_TEST_LOG_SHOW"))
		for (char *p = text, *e; *p; p = e + 1) {
			e = strchrnul(p, '\n');
			if (memmem(p, (size_t)(e - p), ":srd:", 5) &&
			    !memmem(p, (size_t)(e - p), "param_get", 9))
				printf("%.*s\n", (int)(e - p), p);
			if (!*e)
				break;
		}
	return text;
}

/* The line of text containing every one of the NULL-ended needles (the
 * first such line), copied into line; false if none. */
static bool log_find(const char *text, char *line, size_t len, ...)
{
	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		bool all = true;
		va_list ap;

		snprintf(line, len, "%.*s", (int)n, p);
		va_start(ap, len);
		for (const char *s; (s = va_arg(ap, const char *));)
			all = all && strstr(line, s);
		va_end(ap);
		if (all)
			return true;
		p += n + (end ? 1 : 0);
	}
	line[0] = '\0';
	return false;
}

/* The 8 hex digits after "(incarnation " in line, or "". */
static void log_incarnation(const char *line, char out[9])
{
	const char *p = strstr(line, "(incarnation ");

	out[0] = '\0';
	if (p && strspn(p + 13, "0123456789abcdef") >= 8)
		snprintf(out, 9, "%.8s", p + 13);
}

/* "ip:port", as srd_wire_addr_str writes an IPv4 address. */
static void addr_str(const void *sin_bytes, char *out, size_t len)
{
	struct sockaddr_in sin;
	char ip[INET_ADDRSTRLEN];

	memcpy(&sin, sin_bytes, sizeof(sin));
	inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof(ip));
	snprintf(out, len, "%s:%u", ip, (unsigned)ntohs(sin.sin_port));
}

static bool read_full(int fd, void *buf, size_t len)
{
	return read(fd, buf, len) == (ssize_t)len;
}

/* The peer process: an endpoint that answers one message with one
 * message, then waits to be killed (at most 60 s).  Its log goes
 * nowhere.  Exit codes say which step failed. */
static void peer_main(int to_test, int from_test)
{
	static uint8_t buf[MSG_LEN];
	struct fi_cq_tagged_entry e;
	char test_addr[64];
	struct bhost b;
	fi_addr_t to;
	double end;
	ssize_t n;
	int got = 0, sent = 0;

	alarm(60);
	freopen("/dev/null", "w", stderr);
	if (bhost_try_open(&b, FI_VERSION(1, 17), FI_MSG, 0, 0))
		_exit(2);
	if (write(to_test, b.addr, sizeof(b.addr)) != sizeof(b.addr) ||
	    !read_full(from_test, test_addr, sizeof(test_addr)) ||
	    fi_av_insert(b.av, test_addr, 1, &to, 0, NULL) != 1 ||
	    fi_recv(b.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, NULL))
		_exit(3);
	for (end = now_s() + 20 * time_scale(); !got && now_s() < end;)
		got = fi_cq_read(b.cq, &e, 1) == 1;
	if (!got || fi_send(b.ep, buf, sizeof(buf), NULL, to, NULL))
		_exit(4);
	for (end = now_s() + 20 * time_scale(); !sent && now_s() < end;) {
		n = fi_cq_read(b.cq, &e, 1);
		if (n != -FI_EAGAIN && n != 1)
			_exit(5);
		sent = n == 1;
	}
	if (!sent || write(to_test, "k", 1) != 1)
		_exit(6);
	for (;;)
		pause();
}

/* Waits for one completion on a; false on timeout. */
static bool wait_one(struct bhost *a)
{
	struct fi_cq_tagged_entry e;
	double end = now_s() + 20 * time_scale();

	while (now_s() < end)
		if (bpoll(a, &e))
			return true;
	return false;
}

/* The error completion of a send to the dead peer: its err. */
static int wait_error(struct bhost *a)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	double end = now_s() + 20 * time_scale();
	ssize_t n;

	while (now_s() < end) {
		n = fi_cq_read(a->cq, &e, 1);
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			cr_assert_eq(fi_cq_readerr(a->cq, &err, 0), 1);
			return err.err;
		}
		cr_assert(n == -FI_EAGAIN, "send to a dead peer completed (%zd)",
			  n);
	}
	return 0;
}

/*
 * The peer-death scenario at log level `level`: this process exchanges
 * one message each way with a peer process, kills it (SIGKILL), sends
 * to it again and gets the error completion.  Returns the log; peer
 * gets the dead peer's "ip:port".
 */
static char *peer_death(const char *level, char *peer, size_t peer_len)
{
	static uint8_t out[MSG_LEN], in[MSG_LEN];
	int p2t[2], t2p[2], status;
	struct log_capture cap;
	char peer_addr[64], k;
	struct bhost a;
	fi_addr_t to;
	pid_t pid;

	setenv("FI_LOG_LEVEL", level, 1);
	setenv("FI_SRD_PEER_TIMEOUT", "300", 1);
	cr_assert_eq(pipe(p2t), 0);
	cr_assert_eq(pipe(t2p), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid)
		peer_main(p2t[1], t2p[0]);
	log_begin(&cap);
	bhost_open_v(&a, FI_VERSION(1, 17), FI_MSG, 0, 0);
	cr_assert(read_full(p2t[0], peer_addr, sizeof(peer_addr)),
		  "no address from the peer process");
	cr_assert_eq(write(t2p[1], a.addr, sizeof(a.addr)),
		     (ssize_t)sizeof(a.addr));
	addr_str(peer_addr, peer, peer_len);
	cr_assert_eq(fi_av_insert(a.av, peer_addr, 1, &to, 0, NULL), 1);
	memset(out, 0x5a, sizeof(out));
	cr_assert_eq(fi_recv(a.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, NULL),
		     0);
	cr_assert_eq(fi_send(a.ep, out, sizeof(out), NULL, to, NULL), 0);
	cr_assert(wait_one(&a) && wait_one(&a), "no exchange with the peer");
	cr_assert_arr_eq(in, out, sizeof(out));
	cr_assert(read_full(p2t[0], &k, 1), "the peer's reply did not complete");

	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status), "peer exited by itself (%d)",
		  WEXITSTATUS(status));
	cr_assert_eq(fi_send(a.ep, out, sizeof(out), NULL, to, NULL), 0);
	cr_assert_eq(wait_error(&a), FI_EHOSTUNREACH);
	bhost_close(&a);
	return log_end(&cap);
}

/* The warning that fails the operations: address, incarnation, reason. */
static void assert_death_line(const char *log, const char *peer, char *line,
			      size_t len, char inc[9])
{
	char who[96];

	snprintf(who, sizeof(who), "peer %s (incarnation ", peer);
	cr_assert(log_find(log, line, len, "<warn>", who, ") lost: timed out",
			   "FI_SRD_PEER_TIMEOUT=300", "; 1 operation and ", NULL),
		  "no warning naming %s in:\n%s", peer, log);
	log_incarnation(line, inc);
	cr_assert_eq(strlen(inc), 8, "no incarnation in: %s", line);
}

Test(log, a_dead_peer_is_named_at_warn, .timeout = 60)
{
	char peer[64], line[512], inc[9];
	char *log = peer_death("warn", peer, sizeof(peer));

	assert_death_line(log, peer, line, sizeof(line), inc);
	cr_assert(strstr(line, "No route to host"), "%s", line);
	/* info lines are not there at warn */
	cr_assert(!log_find(log, line, sizeof(line), "session starts", NULL),
		  "%s", line);
	free(log);
}

Test(log, info_names_the_session_and_the_same_incarnation, .timeout = 60)
{
	char peer[64], line[512], inc[9], start_inc[9], who[160];
	char *log = peer_death("info", peer, sizeof(peer));

	assert_death_line(log, peer, line, sizeof(line), inc);
	/* the peer's session toward us: its incarnation from its request,
	 * the death's from its answer to ours (two code paths) */
	snprintf(who, sizeof(who), "peer %s (incarnation ", peer);
	cr_assert(log_find(log, line, sizeof(line), "<info>", who,
			   "its first session starts", NULL),
		  "no session start line for %s in:\n%s", peer, log);
	log_incarnation(line, start_inc);
	cr_assert_str_eq(start_inc, inc);
	snprintf(who, sizeof(who), "peer %s: send session HS_SENT -> ACTIVE "
		 "(incarnation %s)", peer, inc);
	cr_assert(log_find(log, line, sizeof(line), who, NULL),
		  "no '%s' in:\n%s", who, log);
	free(log);
}

/* fi_getinfo with hints for srd, of this endpoint type and caps. */
static int getinfo_with(enum fi_ep_type type, uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	cr_assert_not_null(hints);
	hints->fabric_attr->prov_name = strdup("srd");
	hints->ep_attr->type = type;
	hints->caps = caps;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	fi_freeinfo(info);
	return ret;
}

Test(log, a_refused_getinfo_names_the_field_at_debug, .timeout = 60)
{
	struct log_capture cap;
	char line[512];
	char *log;

	setenv("FI_LOG_LEVEL", "debug", 1);
	log_begin(&cap);
	cr_assert_eq(getinfo_with(FI_EP_MSG, 0), -FI_ENODATA);
	cr_assert_eq(getinfo_with(FI_EP_RDM, FI_MSG | FI_NAMED_RX_CTX),
		     -FI_ENODATA);
	cr_assert_eq(getinfo_with(FI_EP_RDM, FI_MSG), 0);
	log = log_end(&cap);
	cr_assert(log_find(log, line, sizeof(line), ":srd:", "<debug>",
			   "fi_getinfo: domain lo",
			   "refused: ep_attr->type FI_EP_MSG", NULL),
		  "no ep_attr->type refusal in:\n%s", log);
	cr_assert(log_find(log, line, sizeof(line), ":srd:", "<debug>",
			   "refused: caps FI_NAMED_RX_CTX not offered", NULL),
		  "no caps refusal in:\n%s", log);
	free(log);
}
