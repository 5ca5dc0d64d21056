/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_auth.c: the job key (fi_srd(7) SECURITY).  Endpoints given
 * the same key, through the domain's or the endpoint's auth_key or
 * FI_SRD_AUTH_KEY_FILE, exchange messages of every protocol byte for
 * byte; a stranger's socket without the key gets no answer at all, not
 * even a cookie; endpoints with another key or none are not heard, and
 * their sends fail with FI_EHOSTUNREACH once the (shortened) peer
 * timeout passes.  fi_getinfo keeps a key of up to 4096 bytes and
 * refuses a longer one.
 *
 * Each test runs in its own process (Criterion), so the FI_SRD_* values
 * it sets before its first fi_getinfo apply to the provider it loads.
 */
#include "config.h"
#include "srd_test_common.h"
#include "srd_test_host.h"
#include "srd_test_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static const char key1[] = "job 4711: 32 bytes of randomness";
static const char key2[] = "job 4712: 32 bytes of randomness";

static uint8_t pat(uint64_t seed, size_t i)
{
	return (uint8_t)(seed * 0x9E3779B1u + i * 7 + (i >> 9));
}

/* Sends len bytes from s to r and checks them at r: both completions
 * within 10 s, no error. */
static void exchange(struct bhost *s, struct bhost *r, size_t len,
		     uint64_t seed)
{
	uint8_t *sbuf = malloc(len), *rbuf = calloc(1, len);
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;
	fi_addr_t to = bhost_insert(s, r);
	int sent = 0, got = 0;
	double end = now_s() + 10 * time_scale();
	ssize_t ret;

	for (size_t i = 0; i < len; i++)
		sbuf[i] = pat(seed, i);
	cr_assert_eq(fi_recv(r->ep, rbuf, len, NULL, FI_ADDR_UNSPEC, &rctx),
		     0);
	do {
		ret = fi_send(s->ep, sbuf, len, NULL, to, &sctx);
		bpoll(s, &e);
	} while (ret == -FI_EAGAIN);
	cr_assert_eq(ret, 0);
	while ((!sent || !got) && now_s() < end) {
		if (bpoll(s, &e) && e.op_context == &sctx)
			sent = 1;
		if (bpoll(r, &e) && e.op_context == &rctx) {
			cr_assert_eq(e.len, len);
			got = 1;
		}
	}
	cr_assert(sent && got, "a %zu-byte message did not complete", len);
	for (size_t i = 0; i < len; i++)
		cr_assert_eq(rbuf[i], pat(seed, i), "byte %zu", i);
	free(sbuf);
	free(rbuf);
}

/* A send from s to r that must fail: r cannot hear s.  Returns the
 * error of the completion; r must receive nothing meanwhile. */
static int unheard_send(struct bhost *s, struct bhost *r)
{
	uint8_t sbuf[64] = { 1 }, rbuf[64];
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	fi_addr_t to = bhost_insert(s, r);
	double end = now_s() + 15 * time_scale();
	ssize_t n;

	cr_assert_eq(fi_recv(r->ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC,
			     &rctx), 0);
	cr_assert_eq(fi_send(s->ep, sbuf, sizeof(sbuf), NULL, to, &sctx), 0);
	for (;;) {
		cr_assert_eq(bpoll(r, &e), 0, "r heard an endpoint without its key");
		n = fi_cq_read(s->cq, &e, 1);
		if (n == -FI_EAVAIL)
			break;
		cr_assert_eq(n, -FI_EAGAIN, "the send completed");
		cr_assert(now_s() < end, "the send never failed");
	}
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_cq_readerr(s->cq, &err, 0), 1);
	cr_assert_eq(err.op_context, &sctx);
	n = err.err;
	/* the receive that nothing reached: cancelled, and said so */
	cr_assert_eq(fi_cancel(&r->ep->fid, &rctx), 0);
	while (fi_cq_read(r->cq, &e, 1) != -FI_EAVAIL)
		cr_assert(now_s() < end, "no cancel completion");
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_cq_readerr(r->cq, &err, 0), 1);
	cr_assert_eq(err.op_context, &rctx);
	cr_assert_eq(err.err, FI_ECANCELED);
	return (int)n;
}

static void key_open(struct bhost *h, const char *key, enum bhost_key_at at)
{
	const char *failed = bhost_try_open_key(h, FI_VERSION(1, 17),
						FI_MSG | FI_TAGGED, 0, 0, key,
						key ? strlen(key) : 0, at);

	cr_assert_null(failed, "%s failed", failed);
}

Test(auth, getinfo_keeps_a_key_and_refuses_an_oversized_one)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	uint8_t big[4097];	/* one more than a key may have */

	memset(big, 7, sizeof(big));
	hints->fabric_attr->prov_name = strdup("srd");
	hints->domain_attr->auth_key = bhost_dup(key1, sizeof(key1));
	hints->domain_attr->auth_key_size = sizeof(key1);
	hints->ep_attr->auth_key = bhost_dup(key2, sizeof(key2));
	hints->ep_attr->auth_key_size = sizeof(key2);
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				&info), 0);
	cr_assert_eq(info->domain_attr->auth_key_size, sizeof(key1));
	cr_assert_eq(memcmp(info->domain_attr->auth_key, key1, sizeof(key1)),
		     0);
	cr_assert_eq(info->ep_attr->auth_key_size, sizeof(key2));
	cr_assert_eq(memcmp(info->ep_attr->auth_key, key2, sizeof(key2)), 0);
	fi_freeinfo(info);
	info = NULL;
	free(hints->domain_attr->auth_key);
	hints->domain_attr->auth_key = bhost_dup(big, sizeof(big));
	hints->domain_attr->auth_key_size = sizeof(big);
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				&info), -FI_ENODATA);
	cr_assert_null(info);
	fi_freeinfo(hints);
}

Test(auth, holders_of_the_key_talk_and_no_one_else_is_heard, .timeout = 120)
{
	struct bhost a, b, c, d;
	struct fi_srd_ep_stats s0, s1;
	struct tool t;
	struct hs_pkt hs;
	uint8_t in[256];
	int dummy = 0;
	double end;

	setenv("FI_SRD_PEER_TIMEOUT", "1500", 1);
	key_open(&a, key1, BHOST_KEY_DOMAIN);
	key_open(&b, key1, BHOST_KEY_EP);
	/* eager, medium and rendezvous (payload in several iovs) */
	exchange(&a, &b, 64, 1);
	exchange(&b, &a, 64 * 1024, 2);
	exchange(&a, &b, 1 << 20, 3);
	exchange(&b, &a, 1 << 20, 4);

	/* a stranger's honest handshake gets nothing back, not a cookie */
	s0 = bstats(&b);
	tool_open(&t, (const struct sockaddr_in *)b.addr);
	hs_req(&hs, t.port, 0x1111, 0x2222, 1, 0x3333);
	end = now_s() + 0.2;
	for (int k = 0; now_s() < end; k++) {
		if (k % 100 == 0)
			tool_send(&t, &hs, sizeof(hs));
		bpoll(&b, (void *)in);
		while (tool_recv(&t, in, sizeof(in)) > 0)
			;
	}
	s1 = bstats(&b);
	cr_assert_eq(t.rx_bytes, 0, "a stranger got %lu bytes",
		     (unsigned long)t.rx_bytes);
	cr_assert_gt(s1.rx_drop_auth, s0.rx_drop_auth);
	cr_assert_eq(s1.hs_cookies, s0.hs_cookies);
	tool_close(&t);
	(void)dummy;

	/* another key, and none: not heard either way */
	key_open(&c, key2, BHOST_KEY_DOMAIN);
	bhost_open(&d, 0, 0);
	s0 = bstats(&b);
	cr_assert_eq(unheard_send(&c, &b), FI_EHOSTUNREACH);
	cr_assert_eq(unheard_send(&d, &b), FI_EHOSTUNREACH);
	s1 = bstats(&b);
	cr_assert_gt(s1.rx_drop_auth, s0.rx_drop_auth);
	cr_assert_eq(s1.peers, s0.peers, "b keeps state for keyless peers");
	cr_assert_eq(unheard_send(&b, &d), FI_EHOSTUNREACH);
	/* and the pair still talks */
	exchange(&a, &b, 4096, 5);
	bhost_close(&a);
	bhost_close(&b);
	bhost_close(&c);
	bhost_close(&d);
}

Test(auth, a_key_file_sets_the_job_key, .timeout = 60)
{
	char path[] = "/tmp/srd_test_auth_XXXXXX";
	int fd = mkstemp(path);
	struct bhost a, b, c;

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, key1, sizeof(key1)), (ssize_t)sizeof(key1));
	close(fd);
	setenv("FI_SRD_AUTH_KEY_FILE", path, 1);
	setenv("FI_SRD_PEER_TIMEOUT", "1500", 1);
	bhost_open(&a, 0, 0);
	bhost_open(&b, 0, 0);
	exchange(&a, &b, 100 * 1024, 6);
	/* the application's key wins over the file's */
	key_open(&c, key2, BHOST_KEY_DOMAIN);
	cr_assert_eq(unheard_send(&c, &a), FI_EHOSTUNREACH);
	bhost_close(&c);
	bhost_close(&a);
	bhost_close(&b);
	/* a file that cannot be read fails the endpoint, not silently */
	unlink(path);
	cr_assert_str_eq(bhost_try_open(&a, FI_VERSION(1, 17), FI_MSG, 0, 0),
			 "fi_endpoint");
	/* what did open is closed (no leak under ASan) */
	cr_assert_eq(fi_close(&a.cq->fid), 0);
	cr_assert_eq(fi_close(&a.av->fid), 0);
	cr_assert_eq(fi_close(&a.domain->fid), 0);
	cr_assert_eq(fi_close(&a.fabric->fid), 0);
	fi_freeinfo(a.info);
}
