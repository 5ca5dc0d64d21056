/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_api: single-process API checks, no peer.  `sft_api -p PROV [CHECK]`
 * runs one of av, cq, cntr, eq, mr, busy (default: all).  Each check
 * prints "PASS api/NAME", "FAIL api/NAME: reason" or "SKIP api/NAME:
 * reason"; exit 1 if any failed, 77 if all skipped, else 0.
 *
 *  av:   insert 4 endpoint addresses in one call, lookup round trip
 *        (bytes and length, also into a too-small buffer), fi_av_straddr,
 *        fi_av_remove (other entries intact); insertsvc of
 *        127.0.0.1 port 4242 when addr_format is FI_SOCKADDR_IN.
 *  cq:   open with formats CONTEXT/MSG/DATA/TAGGED, read and readerr on an
 *        empty CQ give -FI_EAGAIN; FI_WAIT_UNSPEC: fi_cq_sread times out
 *        with -FI_EAGAIN after about the timeout; fi_cq_signal from a
 *        second thread wakes a blocked fi_cq_sread early.
 *  cntr: set/add/read, seterr/adderr/readerr, fi_cntr_wait satisfied at
 *        once, and timing out with -FI_ETIMEDOUT after about the timeout.
 *  eq:   read on empty gives -FI_EAGAIN, fi_eq_write + fi_eq_read (with
 *        FI_PEEK first) return the event, fi_eq_sread times out.
 *  mr:   fi_mr_reg, fi_mr_regv, fi_mr_regattr: keys valid, non-zero,
 *        distinct (the requested ones without FI_MR_PROV_KEY); close.
 *  busy: fi_close of a domain with an open AV and CQ returns -FI_EBUSY.
 *  av_invalid (only when named): av, plus lookups of FI_ADDR_NOTAVAIL,
 *        a removed and a never-inserted fi_addr must fail (FI_AV_TABLE).
 *  reclose (only when named): busy, then the refused domain must still
 *        close cleanly once the AV and CQ are gone.
 * Each check runs in a forked child, so a crash fails only that check.
 */
#include "sft_common.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

struct api {
	struct sft_opts *o;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	char reason[256];
};

#define FAILIF(cond, ...) do {						\
	if (cond) {							\
		snprintf(a->reason, sizeof(a->reason), __VA_ARGS__);	\
		return SFT_EXIT_FAIL;					\
	}								\
} while (0)

#define CALL(expr) do {							\
	long _r = (long)(expr);						\
	FAILIF(_r, "%s = %ld (%s)", #expr, _r, fi_strerror((int)-_r));	\
} while (0)

#define SKIPIF(cond, ...) do {						\
	if (cond) {							\
		snprintf(a->reason, sizeof(a->reason), __VA_ARGS__);	\
		return SFT_EXIT_SKIP;					\
	}								\
} while (0)

static int open_domain(struct api *a, uint64_t caps)
{
	struct sft_params p = { .caps = caps };
	int ret = sft_getinfo(a->o, &p, &a->info);

	SKIPIF(ret == -FI_ENODATA, "no FI_EP_RDM info for %s", a->o->prov);
	CALL(ret);
	CALL(fi_fabric(a->info->fabric_attr, &a->fabric, NULL));
	CALL(fi_domain(a->fabric, a->info, &a->domain, NULL));
	return 0;
}

static int close_domain(struct api *a)
{
	CALL(fi_close(&a->domain->fid));
	CALL(fi_close(&a->fabric->fid));
	fi_freeinfo(a->info);
	a->info = NULL;
	return 0;
}

static int64_t ms_since(uint64_t t0)
{
	return (int64_t)((sft_now_us() - t0) / 1000);
}

/* ------------------------------------------------------------------ */

#define NEP 4

struct av_state {
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep[NEP];
	char name[NEP][256];
	size_t len[NEP];
	fi_addr_t fa[NEP];
	int table;
};

static int av_open_eps(struct api *a, struct av_state *s)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int i;

	if (a->info->domain_attr->av_type == FI_AV_MAP)
		av_attr.type = FI_AV_MAP;
	s->table = av_attr.type == FI_AV_TABLE;
	CALL(fi_av_open(a->domain, &av_attr, &s->av, NULL));
	CALL(fi_cq_open(a->domain, &cq_attr, &s->cq, NULL));
	for (i = 0; i < NEP; i++) {
		CALL(fi_endpoint(a->domain, a->info, &s->ep[i], NULL));
		CALL(fi_ep_bind(s->ep[i], &s->av->fid, 0));
		CALL(fi_ep_bind(s->ep[i], &s->cq->fid, FI_TRANSMIT | FI_RECV));
		CALL(fi_enable(s->ep[i]));
		s->len[i] = sizeof(s->name[i]);
		CALL(fi_getname(&s->ep[i]->fid, s->name[i], &s->len[i]));
		FAILIF(i && s->len[i] != s->len[0], "address lengths differ");
	}
	return 0;
}

static int av_lookups(struct api *a, struct av_state *s)
{
	char buf[256], str[256];
	size_t len, slen;
	int i, j, ret;

	for (i = 0; i < NEP; i++) {
		FAILIF(s->fa[i] == FI_ADDR_NOTAVAIL, "fi_addr %d NOTAVAIL", i);
		for (j = 0; j < i; j++)
			FAILIF(s->fa[i] == s->fa[j], "fi_addr %d == %d", i, j);
		len = sizeof(buf);
		CALL(fi_av_lookup(s->av, s->fa[i], buf, &len));
		FAILIF(len != s->len[i] || memcmp(buf, s->name[i], len),
		       "lookup of address %d does not return it (len %zu/%zu)",
		       i, len, s->len[i]);
		slen = sizeof(str);
		FAILIF(!fi_av_straddr(s->av, s->name[i], str, &slen) ||
		       !str[0], "fi_av_straddr gave no string");
	}
	len = 1;
	ret = fi_av_lookup(s->av, s->fa[0], buf, &len);
	FAILIF(ret && ret != -FI_ETOOSMALL, "lookup into 1-byte buffer: %d",
	       ret);
	FAILIF(len != s->len[0], "too-small lookup set addrlen %zu, not %zu",
	       len, s->len[0]);
	return 0;
}

static int av_remove_checks(struct api *a, struct av_state *s)
{
	char buf[256];
	size_t len = sizeof(buf);

	CALL(fi_av_remove(s->av, &s->fa[1], 1, 0));
	len = sizeof(buf);
	CALL(fi_av_lookup(s->av, s->fa[2], buf, &len));
	FAILIF(memcmp(buf, s->name[2], len), "address 2 changed by remove");
	return 0;
}

/*
 * Lookups of invalid fi_addrs (FI_AV_TABLE only: FI_AV_MAP fi_addrs may
 * be pointers).  fi_av_lookup(3) does not spell out that they fail, and
 * libfabric 1.17 ofi_rxm crashes on them, so this runs only as the
 * named check "av_invalid".
 */
static int av_invalid_lookups(struct api *a, struct av_state *s)
{
	char buf[256];
	size_t len;

	SKIPIF(!s->table, "AV is FI_AV_MAP");
	len = sizeof(buf);
	FAILIF(fi_av_lookup(s->av, FI_ADDR_NOTAVAIL, buf, &len) >= 0,
	       "lookup of FI_ADDR_NOTAVAIL succeeded");
	len = sizeof(buf);
	FAILIF(fi_av_lookup(s->av, s->fa[1], buf, &len) >= 0,
	       "lookup of a removed fi_addr succeeded");
	len = sizeof(buf);
	FAILIF(fi_av_lookup(s->av, 1000000, buf, &len) >= 0,
	       "lookup of never-inserted fi_addr 1000000 succeeded");
	return 0;
}

static int av_insertsvc(struct api *a, struct av_state *s)
{
	struct sockaddr_in sin;
	size_t len = sizeof(sin);
	fi_addr_t fa;
	int ret;

	if (a->info->addr_format != FI_SOCKADDR_IN)
		return 0;
	ret = fi_av_insertsvc(s->av, "127.0.0.1", "4242", &fa, 0, NULL);
	FAILIF(ret != 1, "fi_av_insertsvc(127.0.0.1, 4242) = %d", ret);
	CALL(fi_av_lookup(s->av, fa, &sin, &len));
	FAILIF(len != sizeof(sin) || sin.sin_family != AF_INET ||
	       ntohs(sin.sin_port) != 4242 ||
	       sin.sin_addr.s_addr != htonl(INADDR_LOOPBACK),
	       "insertsvc address looks up as something else");
	return 0;
}

static int av_common(struct api *a, int invalid)
{
	struct av_state s;
	char all[NEP * 256];
	int i, ret;

	memset(&s, 0, sizeof(s));
	if ((ret = open_domain(a, FI_MSG)))
		return ret;
	if ((ret = av_open_eps(a, &s)))
		return ret;
	for (i = 0; i < NEP; i++)
		memcpy(all + i * s.len[0], s.name[i], s.len[0]);
	ret = fi_av_insert(s.av, all, NEP, s.fa, 0, NULL);
	FAILIF(ret != NEP, "fi_av_insert of %d addresses = %d", NEP, ret);
	if ((ret = av_lookups(a, &s)) || (ret = av_remove_checks(a, &s)) ||
	    (ret = av_insertsvc(a, &s)))
		return ret;
	if (invalid && (ret = av_invalid_lookups(a, &s)))
		return ret;
	for (i = 0; i < NEP; i++)
		CALL(fi_close(&s.ep[i]->fid));
	CALL(fi_close(&s.cq->fid));
	CALL(fi_close(&s.av->fid));
	return close_domain(a);
}

static int t_av(struct api *a)
{
	return av_common(a, 0);
}

static int t_av_invalid(struct api *a)
{
	return av_common(a, 1);
}

/* ------------------------------------------------------------------ */

struct signaller {
	struct fid_cq *cq;
	int ret;
};

static void *signal_thread(void *arg)
{
	struct signaller *sg = arg;

	usleep(200 * 1000);
	sg->ret = fi_cq_signal(sg->cq);
	return NULL;
}

static int cq_formats(struct api *a)
{
	static const enum fi_cq_format fmt[] = { FI_CQ_FORMAT_CONTEXT,
		FI_CQ_FORMAT_MSG, FI_CQ_FORMAT_DATA, FI_CQ_FORMAT_TAGGED };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct fi_cq_attr attr;
	struct fid_cq *cq;
	ssize_t r;
	int i;

	for (i = 0; i < 4; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.format = fmt[i];
		attr.size = 64;
		CALL(fi_cq_open(a->domain, &attr, &cq, NULL));
		r = fi_cq_read(cq, &e, 1);
		FAILIF(r != -FI_EAGAIN, "read of empty CQ (format %d) = %zd",
		       fmt[i], r);
		memset(&err, 0, sizeof(err));
		r = fi_cq_readerr(cq, &err, 0);
		FAILIF(r != -FI_EAGAIN, "readerr of empty CQ = %zd", r);
		CALL(fi_close(&cq->fid));
	}
	return 0;
}

static int cq_waits(struct api *a)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED,
				   .wait_obj = FI_WAIT_UNSPEC, .size = 64 };
	struct fi_cq_tagged_entry e;
	struct signaller sg;
	pthread_t th;
	uint64_t t0;
	int64_t ms;
	ssize_t r;
	int ret;

	ret = fi_cq_open(a->domain, &attr, &sg.cq, NULL);
	SKIPIF(ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP,
	       "CQ with FI_WAIT_UNSPEC: %s", fi_strerror(-ret));
	CALL(ret);
	t0 = sft_now_us();
	r = fi_cq_sread(sg.cq, &e, 1, NULL, 300);
	ms = ms_since(t0);
	FAILIF(r != -FI_EAGAIN, "sread timeout returned %zd (%s), expected "
	       "-FI_EAGAIN", r, fi_strerror((int)-r));
	FAILIF(ms < 240 || ms > 700, "sread(300 ms) returned after %lld ms",
	       (long long)ms);
	sg.ret = -1;
	FAILIF(pthread_create(&th, NULL, signal_thread, &sg), "pthread");
	t0 = sft_now_us();
	r = fi_cq_sread(sg.cq, &e, 1, NULL, 5000);
	ms = ms_since(t0);
	pthread_join(th, NULL);
	CALL(sg.ret);
	FAILIF(r != -FI_EAGAIN, "signalled sread returned %zd (%s)", r,
	       fi_strerror((int)-r));
	FAILIF(ms > 2500, "fi_cq_signal did not wake sread (%lld ms)",
	       (long long)ms);
	CALL(fi_close(&sg.cq->fid));
	return 0;
}

static int t_cq(struct api *a)
{
	int ret, ret2;

	if ((ret = open_domain(a, FI_MSG)))
		return ret;
	if ((ret = cq_formats(a)))
		return ret;
	ret = cq_waits(a);
	if (ret == SFT_EXIT_FAIL)
		return ret;
	ret2 = close_domain(a);
	return ret2 ? ret2 : ret;
}

/* ------------------------------------------------------------------ */

static int t_cntr(struct api *a)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = FI_WAIT_UNSPEC };
	struct fid_cntr *cn;
	uint64_t t0;
	int64_t ms;
	int ret;

	if ((ret = open_domain(a, FI_MSG)))
		return ret;
	ret = fi_cntr_open(a->domain, &attr, &cn, NULL);
	SKIPIF(ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP,
	       "fi_cntr_open: %s", fi_strerror(-ret));
	CALL(ret);
	FAILIF(fi_cntr_read(cn) != 0 || fi_cntr_readerr(cn) != 0,
	       "new counter not zero");
	CALL(fi_cntr_set(cn, 5));
	FAILIF(fi_cntr_read(cn) != 5, "read after set(5) = %llu",
	       (unsigned long long)fi_cntr_read(cn));
	CALL(fi_cntr_add(cn, 3));
	FAILIF(fi_cntr_read(cn) != 8, "read after add(3) = %llu",
	       (unsigned long long)fi_cntr_read(cn));
	CALL(fi_cntr_adderr(cn, 2));
	FAILIF(fi_cntr_readerr(cn) != 2, "readerr after adderr(2) = %llu",
	       (unsigned long long)fi_cntr_readerr(cn));
	CALL(fi_cntr_seterr(cn, 7));
	FAILIF(fi_cntr_readerr(cn) != 7, "readerr after seterr(7)");
	CALL(fi_cntr_seterr(cn, 0));
	FAILIF(fi_cntr_read(cn) != 8, "error ops changed the success count");
	t0 = sft_now_us();
	CALL(fi_cntr_wait(cn, 8, 1000));
	FAILIF(ms_since(t0) > 500, "satisfied wait took %lld ms",
	       (long long)ms_since(t0));
	t0 = sft_now_us();
	ret = fi_cntr_wait(cn, 100, 300);
	ms = ms_since(t0);
	FAILIF(ret != -FI_ETIMEDOUT, "wait(100, 300 ms) = %d (%s), expected "
	       "-FI_ETIMEDOUT", ret, fi_strerror(-ret));
	FAILIF(ms < 240 || ms > 700, "wait(300 ms) returned after %lld ms",
	       (long long)ms);
	FAILIF(fi_cntr_read(cn) != 8 || fi_cntr_readerr(cn) != 0,
	       "timed-out wait changed the counter");
	CALL(fi_close(&cn->fid));
	return close_domain(a);
}

/* ------------------------------------------------------------------ */

static int t_eq(struct api *a)
{
	struct fi_eq_attr attr = { .size = 16, .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_entry in = { 0 }, out;
	uint32_t ev;
	struct fid_eq *eq;
	uint64_t t0;
	int64_t ms;
	ssize_t r;
	int ret, k;

	if ((ret = open_domain(a, FI_MSG)))
		return ret;
	CALL(fi_eq_open(a->fabric, &attr, &eq, NULL));
	r = fi_eq_read(eq, &ev, &out, sizeof(out), 0);
	FAILIF(r != -FI_EAGAIN, "read of empty EQ = %zd", r);
	in.fid = &eq->fid;
	in.context = &in;
	in.data = 0x5eed;
	r = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	FAILIF(r != (ssize_t)sizeof(in), "fi_eq_write = %zd", r);
	for (k = 0; k < 2; k++) {	/* FI_PEEK leaves it, then read */
		memset(&out, 0, sizeof(out));
		ev = 0;
		r = fi_eq_read(eq, &ev, &out, sizeof(out), k ? 0 : FI_PEEK);
		FAILIF(r != (ssize_t)sizeof(in) || ev != FI_NOTIFY ||
		       out.fid != in.fid || out.context != in.context ||
		       out.data != in.data, "%s returned %zd, event %u, data "
		       "0x%llx", k ? "read" : "peek", r, ev,
		       (unsigned long long)out.data);
	}
	r = fi_eq_read(eq, &ev, &out, sizeof(out), 0);
	FAILIF(r != -FI_EAGAIN, "EQ not empty after read: %zd", r);
	t0 = sft_now_us();
	r = fi_eq_sread(eq, &ev, &out, sizeof(out), 300, 0);
	ms = ms_since(t0);
	FAILIF(r != -FI_EAGAIN, "eq sread timeout = %zd (%s), expected "
	       "-FI_EAGAIN", r, fi_strerror((int)-r));
	FAILIF(ms < 240 || ms > 700, "eq sread(300 ms) took %lld ms",
	       (long long)ms);
	CALL(fi_close(&eq->fid));
	return close_domain(a);
}

/* ------------------------------------------------------------------ */

static int check_key(struct api *a, struct fid_mr *mr, uint64_t want,
		     uint64_t *keys, int n)
{
	uint64_t key = fi_mr_key(mr);
	int i;

	(void)fi_mr_desc(mr);
	FAILIF(key == FI_KEY_NOTAVAIL, "fi_mr_key: FI_KEY_NOTAVAIL");
	FAILIF(!key, "MR %d has key 0", n);
	FAILIF(want && key != want, "MR %d key 0x%llx, requested 0x%llx", n,
	       (unsigned long long)key, (unsigned long long)want);
	for (i = 0; i < n; i++)
		FAILIF(keys[i] == key, "MRs %d and %d share key 0x%llx", i, n,
		       (unsigned long long)key);
	keys[n] = key;
	return 0;
}

static int t_mr(struct api *a)
{
	static char buf[3][65536];
	struct fid_mr *mr[3];
	struct iovec iov[2];
	struct fi_mr_attr attr;
	uint64_t keys[3], req[3] = { 0 };
	size_t niov;
	int ret, i;

	if ((ret = open_domain(a, FI_MSG)))
		return ret;
	if (!(a->info->domain_attr->mr_mode & FI_MR_PROV_KEY))
		for (i = 0; i < 3; i++)
			req[i] = 0x51d0 + (uint64_t)i;
	CALL(fi_mr_reg(a->domain, buf[0], sizeof(buf[0]), FI_SEND | FI_RECV,
		       0, req[0], 0, &mr[0], NULL));
	if ((ret = check_key(a, mr[0], req[0], keys, 0)))
		return ret;
	niov = a->info->domain_attr->mr_iov_limit >= 2 ? 2 : 1;
	iov[0].iov_base = buf[1];
	iov[0].iov_len = niov == 2 ? 4096 : sizeof(buf[1]);
	iov[1].iov_base = buf[1] + 8192;
	iov[1].iov_len = 8192;
	CALL(fi_mr_regv(a->domain, iov, niov, FI_SEND | FI_RECV, 0, req[1],
			0, &mr[1], NULL));
	if ((ret = check_key(a, mr[1], req[1], keys, 1)))
		return ret;
	memset(&attr, 0, sizeof(attr));
	iov[0].iov_base = buf[2];
	iov[0].iov_len = sizeof(buf[2]);
	attr.mr_iov = iov;
	attr.iov_count = 1;
	attr.access = FI_SEND | FI_RECV;
	attr.requested_key = req[2];
	attr.context = &attr;
	CALL(fi_mr_regattr(a->domain, &attr, 0, &mr[2]));
	if ((ret = check_key(a, mr[2], req[2], keys, 2)))
		return ret;
	for (i = 0; i < 3; i++)
		CALL(fi_close(&mr[i]->fid));
	return close_domain(a);
}

/* ------------------------------------------------------------------ */

/* Domain with an open AV and CQ: fi_close must say -FI_EBUSY. */
static int busy_open(struct api *a, struct fid_av **av, struct fid_cq **cq)
{
	struct fi_av_attr av_attr = { .type = FI_AV_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	int ret;

	if ((ret = open_domain(a, FI_MSG)))
		return ret;
	av_attr.type = a->info->domain_attr->av_type;
	CALL(fi_av_open(a->domain, &av_attr, av, NULL));
	CALL(fi_cq_open(a->domain, &cq_attr, cq, NULL));
	ret = fi_close(&a->domain->fid);
	FAILIF(ret != -FI_EBUSY, "close of domain with AV+CQ open = %d (%s)",
	       ret, fi_strerror(-ret));
	return 0;
}

/*
 * busy: only the -FI_EBUSY results; the objects are closed afterwards
 * but the refused domain is not closed again (libfabric 1.17 ofi_rxm
 * frees it twice then).  reclose (not run by default) also closes the
 * domain and fabric after the refused close.
 */
static int busy_common(struct api *a, int reclose)
{
	struct fid_av *av;
	struct fid_cq *cq;
	int ret;

	if ((ret = busy_open(a, &av, &cq)))
		return ret;
	CALL(fi_close(&av->fid));
	CALL(fi_close(&cq->fid));
	if (!reclose)
		return 0;
	return close_domain(a);
}

static int t_busy(struct api *a)
{
	return busy_common(a, 0);
}

static int t_reclose(struct api *a)
{
	return busy_common(a, 1);
}

/* ------------------------------------------------------------------ */

static const struct {
	const char *name;
	int (*fn)(struct api *a);
	int by_default;
} checks[] = {
	{ "av", t_av, 1 }, { "cq", t_cq, 1 }, { "cntr", t_cntr, 1 },
	{ "eq", t_eq, 1 }, { "mr", t_mr, 1 }, { "busy", t_busy, 1 },
	{ "av_invalid", t_av_invalid, 0 }, { "reclose", t_reclose, 0 },
};

#define CHILD_CODE 40	/* child exit: 40 pass, 41 fail, 42 skip */

/* Run one check in a child so a provider crash fails only that check. */
static int run_check(struct sft_opts *o, int i)
{
	struct api a;
	int status, ret;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		sft_die("fork failed");
	if (pid == 0) {
		alarm((unsigned)o->timeout);	/* not inherited by fork */
		sft_step("check %s", checks[i].name);
		memset(&a, 0, sizeof(a));
		a.o = o;
		ret = checks[i].fn(&a);
		if (ret == 0)
			printf("PASS api/%s\n", checks[i].name);
		else if (ret == SFT_EXIT_SKIP)
			printf("SKIP api/%s: %s\n", checks[i].name, a.reason);
		else
			printf("FAIL api/%s: %s\n", checks[i].name, a.reason);
		fflush(stdout);
		_exit(CHILD_CODE + (ret == SFT_EXIT_SKIP ? 2 : !!ret));
	}
	if (waitpid(pid, &status, 0) != pid)
		sft_die("waitpid failed");
	ret = WIFEXITED(status) ? WEXITSTATUS(status) - CHILD_CODE : -1;
	if (ret >= 0 && ret <= 2)
		return ret == 2 ? SFT_EXIT_SKIP : ret;
	/* crashed (libfabric's signal handler may turn that into exit()) */
	printf("FAIL api/%s: crashed (%s %d)\n", checks[i].name,
	       WIFEXITED(status) ? "exit code" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return SFT_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	int i, ran = 0, failed = 0, skipped = 0, ret;
	struct sft_opts o;

	sft_init_opts(&o, "sft_api");
	sft_parse_opts(&o, argc, argv);
	for (i = 0; i < (int)(sizeof(checks) / sizeof(checks[0])); i++) {
		if (o.subtest ? strcmp(o.subtest, checks[i].name) :
		    !checks[i].by_default)
			continue;
		ret = run_check(&o, i);
		ran++;
		failed += ret != 0 && ret != SFT_EXIT_SKIP;
		skipped += ret == SFT_EXIT_SKIP;
	}
	if (!ran)
		sft_die("unknown check '%s' (av cq cntr eq mr busy av_invalid reclose)",
			o.subtest);
	if (failed)
		sft_die("%d of %d checks failed", failed, ran);
	if (skipped == ran)
		sft_skip("all %d checks skipped", ran);
	sft_pass("%d checks, %d skipped", ran, skipped);
}
