/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_common.h - shared helpers for the srd fabtests (sft_*).
 *
 * Provider-agnostic: only the public libfabric API is used.  Every test
 * binary holds both the server and the client; the two processes swap
 * endpoint addresses over a plain TCP socket on loopback, or across
 * hosts on the server's -b address (the "OOB"
 * socket) and then talk over the provider under test.
 *
 * Exit codes: 0 pass, 1 fail, 77 skip.  The last line printed is
 * "PASS <test> ...", "FAIL <test>: reason" or "SKIP: reason".
 */
#ifndef SFT_COMMON_H
#define SFT_COMMON_H

#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define SFT_EXIT_PASS 0
#define SFT_EXIT_FAIL 1
#define SFT_EXIT_SKIP 77

#define SFT_MAX_SIZES 64
#define SFT_KIB ((size_t)1024)
#define SFT_MIB (SFT_KIB * 1024)

/* Default per-completion wait bound (ms); the -t watchdog bounds the run. */
#define SFT_COMP_TIMEOUT_MS 30000

/* Completion flags whose exact value the tests assert. */
#define SFT_FLAG_MASK (FI_SEND | FI_RECV | FI_MSG | FI_TAGGED | \
		       FI_REMOTE_CQ_DATA | FI_MULTI_RECV)

struct sft_opts {
	const char *test;	/* program name used in PASS/FAIL lines */
	const char *prov;	/* -p */
	int port;		/* -P */
	int server;		/* -s */
	const char *dst;	/* positional server address (client) */
	const char *bind;	/* -b: local IPv4 address to bind (OOB socket
				 * and provider endpoint); NULL: loopback
				 * for the server's OOB, the provider's
				 * first interface for the endpoint */
	size_t sizes[SFT_MAX_SIZES];
	int nsizes;
	int sizes_set;
	int iters;		/* -I, 0 = test default */
	int tagged;		/* -m tagged */
	int verbose;		/* -v */
	int timeout;		/* -t seconds for the watchdog */
	int window;		/* -W */
	const char *subtest;	/* sft_api: positional subcommand */
	const char *op;		/* -o: sft_perf's operation */
};

/* One completion, success or error, as read from a CQ. */
struct sft_comp {
	int is_err;
	struct fi_cq_tagged_entry e;	/* success entry */
	struct fi_cq_err_entry err;	/* valid when is_err */
	char errstr[160];		/* fi_cq_strerror() text */
};

/* A CQ plus a queue of completions already read from it. */
struct sft_cq {
	struct fid_cq *cq;
	const char *name;
	struct sft_comp *q;
	size_t head, tail, cap;
};

/* A (possibly registered) buffer. */
struct sft_buf {
	uint8_t *ptr;
	size_t len;
	struct fid_mr *mr;
	void *desc;
};

/* What a test needs from the provider and how its endpoint is built. */
struct sft_params {
	uint64_t caps;
	uint64_t tx_bind_flags;		/* extra flags, e.g. FI_SELECTIVE_COMPLETION */
	size_t min_multi_recv;		/* >0: fi_setopt(FI_OPT_MIN_MULTI_RECV) */
	uint64_t msg_order;		/* required tx/rx msg_order, 0 = any */
};

struct sft_ctx {
	struct sft_opts *opts;
	struct sft_params params;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct sft_cq txcq, rxcq;
	struct fid_ep *ep;
	fi_addr_t peer;
	int oob_fd;
	int need_mr;
	uint64_t next_key;
};

/* options / process */
void sft_init_opts(struct sft_opts *o, const char *test);
void sft_parse_opts(struct sft_opts *o, int argc, char **argv);
void sft_start_watchdog(struct sft_opts *o);
void sft_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void sft_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void sft_pass(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void sft_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* name the current step; the watchdog's FAIL line reports it */
void sft_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern struct sft_opts *sft_cur_opts;
uint64_t sft_now_us(void);
uint64_t sft_now_ns(void);

#define SFT_TRY(expr) do {						\
	long _r = (long)(expr);						\
	if (_r)								\
		sft_die("%s:%d: %s = %ld (%s)", __FILE__, __LINE__,	\
			#expr, _r, fi_strerror((int)-_r));		\
} while (0)

/* Post an operation, progressing both CQs while it returns -FI_EAGAIN. */
#define SFT_POST(c, expr) do {						\
	ssize_t _r;							\
	uint64_t _t0 = sft_now_us();					\
	while ((_r = (expr)) == -FI_EAGAIN) {				\
		sft_progress(c);					\
		if (sft_now_us() - _t0 > SFT_COMP_TIMEOUT_MS * 1000ull)	\
			sft_die("%s:%d: %s stuck in -FI_EAGAIN",	\
				__FILE__, __LINE__, #expr);		\
	}								\
	if (_r)								\
		sft_die("%s:%d: %s = %zd (%s)", __FILE__, __LINE__,	\
			#expr, _r, fi_strerror((int)-_r));		\
} while (0)

/* provider setup */
struct fi_info *sft_hints(const struct sft_opts *o, const struct sft_params *p);
int sft_getinfo(const struct sft_opts *o, const struct sft_params *p,
		struct fi_info **info);
void sft_setup(struct sft_ctx *c, struct sft_opts *o,
	       const struct sft_params *p);
/* fabric, domain, AV and endpoint for c->info (after fi_getinfo) */
void sft_open_objects(struct sft_ctx *c);
void sft_open_ep(struct sft_ctx *c);
void sft_close_ep(struct sft_ctx *c);
void sft_teardown(struct sft_ctx *c);

/* out-of-band socket */
void sft_oob_connect(struct sft_ctx *c);
void sft_oob_send(struct sft_ctx *c, const void *buf, size_t len);
void sft_oob_recv(struct sft_ctx *c, void *buf, size_t len);
void sft_oob_sync(struct sft_ctx *c);
void sft_oob_agree(struct sft_ctx *c);
void sft_exchange_addr(struct sft_ctx *c);

/* buffers */
void sft_buf_alloc(struct sft_ctx *c, struct sft_buf *b, size_t len);
void sft_buf_free(struct sft_buf *b);
void sft_fill(void *buf, size_t len, uint64_t seed);
int sft_verify(const void *buf, size_t len, uint64_t seed, const char *what);
void sft_fill_range(void *msg, size_t off, size_t len, uint64_t seed);
int sft_check_range(const void *msg, size_t off, size_t len, uint64_t seed);

/* completions (sft_cq.c) */
void sft_progress(struct sft_ctx *c);
int sft_get_comp(struct sft_ctx *c, struct sft_cq *cq, struct sft_comp *out,
		 int timeout_ms);
/* sft_wait_ok that calls idle(arg) between polls while nothing has
 * completed: work that must not stop progress for long (idle does a
 * small piece each call). */
void sft_wait_ok_idle(struct sft_ctx *c, struct sft_cq *cq,
		      struct fi_cq_tagged_entry *e, void (*idle)(void *),
		      void *arg);
void sft_wait_ok(struct sft_ctx *c, struct sft_cq *cq,
		 struct fi_cq_tagged_entry *e);
void sft_wait_err(struct sft_ctx *c, struct sft_cq *cq,
		  struct fi_cq_err_entry *err);
void sft_expect_quiet(struct sft_ctx *c, struct sft_cq *cq, int ms);
/* For benchmarks, straight on a CQ (no queue, no other CQ read):
 * sft_cq_try reads at most one entry (1: *e filled, 0: none yet);
 * sft_cq_spin busy-polls for one (SFT_COMP_TIMEOUT_MS at most) and
 * checks its op_context unless ctx is NULL.  An error completion or a
 * failed read ends the test, named what. */
int sft_cq_try(struct fid_cq *cq, const char *what,
	       struct fi_cq_tagged_entry *e);
void sft_cq_spin(struct fid_cq *cq, const char *what, void *ctx);
/* sft_cq_spin for a context's own CQ: first what sft_progress() queued
 * (the OOB waits drive it, so completions that arrive during a sync are
 * in the queue, not in the CQ), then the CQ itself. */
void sft_cq_spin_q(struct sft_cq *cq, void *ctx);
const char *sft_flags_str(uint64_t flags, char *buf, size_t len);

struct sft_expect {
	void *ctx;
	uint64_t flags;		/* exact value of (flags & SFT_FLAG_MASK) */
	int check_len;
	size_t len;
	int check_tag;
	uint64_t tag;
	uint64_t data;		/* checked when flags has FI_REMOTE_CQ_DATA */
};
void sft_check_entry(const struct fi_cq_tagged_entry *e,
		     const struct sft_expect *x, const char *what);

/* plain send / receive of one buffer, msg or tagged, retried on EAGAIN */
void sft_post_recv(struct sft_ctx *c, int tagged, struct sft_buf *b,
		   size_t len, uint64_t tag, void *ctx);
void sft_post_send(struct sft_ctx *c, int tagged, struct sft_buf *b,
		   size_t len, uint64_t tag, void *ctx);
/* wait for the next completion and check it as a send / receive */
void sft_wait_send(struct sft_ctx *c, int tagged, void *ctx, const char *what);
void sft_wait_recv(struct sft_ctx *c, int tagged, void *ctx, size_t len,
		   uint64_t tag, const char *what);
/* the same, calling idle(arg) between polls (sft_wait_ok_idle) */
void sft_wait_send_idle(struct sft_ctx *c, int tagged, void *ctx,
			const char *what, void (*idle)(void *), void *arg);
void sft_wait_recv_idle(struct sft_ctx *c, int tagged, void *ctx, size_t len,
			uint64_t tag, const char *what, void (*idle)(void *),
			void *arg);

/* sizes */
size_t sft_parse_size(const char *s);
void sft_default_sizes(struct sft_opts *o, const size_t *def, int n);
uint64_t sft_cq_data_mask(const struct sft_ctx *c);

#endif /* SFT_COMMON_H */
