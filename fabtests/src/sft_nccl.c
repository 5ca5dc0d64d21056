/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_nccl: the libfabric call sequence of aws-ofi-nccl's SENDRECV
 * protocol (as read at the plugin's commit 2daf7d30), replayed by a
 * server and a client, so that a provider meets the calls NCCL makes
 * through the plugin on a host without GPUs.  Written from reading the
 * plugin, none of its code.
 *
 *  1. fi_getinfo with the plugin's hints, in its order: API 1.20, 1.18
 *     and 1.6 asking FI_HMEM, then 1.6 without; the first that answers
 *     (after the plugin's filters: provider name, TCP interfaces, IPv4
 *     for TCP, entries like the first) is used, and printed.
 *  2. One domain, one FI_CQ_FORMAT_TAGGED CQ read 4 entries at a time,
 *     two endpoints on it: the data endpoint and the connection
 *     manager's (CM), each with its own AV; fi_setopt
 *     FI_OPT_SHARED_MEMORY_PERMITTED=false on both (refusals tolerated
 *     as the plugin tolerates them).
 *  3. Listen: the data endpoint inserts its own address into its AV; the
 *     handle (CM endpoint name in 56 bytes + listener id) goes over the
 *     OOB socket, as NCCL's bootstrap carries it.
 *  4. Connect/accept (-W communicators each way): untagged CM messages
 *     (fi_send/fi_recv, receives kept posted from FI_ADDR_UNSPEC) carry
 *     the data endpoint names; the acceptor gives each receive
 *     communicator its own tag.  Addresses must fit 56 bytes.
 *  5. Data: fi_tsend to the peer's data endpoint with the communicator's
 *     tag, fi_trecv from FI_ADDR_UNSPEC with that tag (no ignore bits),
 *     sizes -S (default 0,1,4k,64k,1m,4m) on every communicator at once,
 *     -I rounds (default 4): receives posted first or sends first,
 *     buffers of the message size or larger.  Buffers registered with
 *     fi_mr_regattr (FI_HMEM_SYSTEM; fi_mr_bind + fi_mr_enable under
 *     FI_MR_ENDPOINT).
 *
 * Checks: every call's return, every byte received, nothing written past
 * the message in its buffer, every completion (op_context known and seen
 * once, flags, len and tag of receives, the fi_context2 kept within its
 * bounds, at most 4 entries per read), the CM messages' fields.  Exit 0
 * pass, 1 fail (a FAIL line naming the call; also when no query
 * answers: the plugin would find no provider).
 *
 * This file owns the getinfo fallbacks, the objects, the CQ loop and the
 * data rounds; sft_nccl_cm.c the connection manager.  Must not touch:
 * anything the plugin does not do (no provider name in the hints, no
 * extra options), so that a failure here is one NCCL would meet.
 */
#include "sft_nccl.h"

#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* ------------------------------------------------------------------ */
/* fi_getinfo as the plugin does it                                     */

static const struct nc_query {
	uint32_t version;
	int hmem;
	const char *name;
} nc_queries[] = {
	{ FI_VERSION(1, 20), 1, "API 1.20 with FI_HMEM (DMA-BUF)" },
	{ FI_VERSION(1, 18), 1, "API 1.18 with FI_HMEM" },
	{ FI_VERSION(1, 6), 1, "API 1.6 with FI_HMEM" },
	{ FI_VERSION(1, 6), 0, "API 1.6 without FI_HMEM" },
};

/* The plugin's hints; one fi_info reused for every query, as it does.
 * It leaves the provider name, resource management and AV type unset;
 * progress is its OFI_NCCL_PROGRESS_MODEL default, UNSPEC. */
static void nc_hints(struct fi_info *h, int hmem)
{
	h->caps = FI_LOCAL_COMM | FI_REMOTE_COMM | FI_TAGGED | FI_MSG;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ENDPOINT;
	h->domain_attr->mr_key_size = NC_MR_KEY_SIZE;
	if (hmem) {
		/* FI_RMA | FI_READ: its GPU flush reads back with fi_read */
		h->caps |= FI_HMEM | FI_RMA | FI_READ;
		h->domain_attr->mr_mode |= FI_MR_HMEM;
	}
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->domain_attr->threading = FI_THREAD_SAFE;
	h->domain_attr->control_progress = FI_PROGRESS_UNSPEC;
	h->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
	h->domain_attr->mr_mode |= FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				   FI_MR_PROV_KEY;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->msg_order = FI_ORDER_SAS;
}

static int nc_in_list(const char *item, const char *list)
{
	size_t n = strlen(item);
	const char *p = list;

	while (p && *p) {
		if (!strncmp(p, item, n) && (p[n] == ',' || !p[n]))
			return 1;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

/* Which entries the plugin keeps: those of the provider it is told to
 * use (its platform's filter; here -p), for "tcp..." providers not on
 * an interface in OFI_NCCL_EXCLUDE_TCP_IF (default "lo,docker0") and
 * IPv4 only (OFI_NCCL_USE_IPV6_TCP unset), then those like the first. */
static int nc_keep(const struct fi_info *i, const struct fi_info *first,
		   const char *prov)
{
	const char *ex = getenv("OFI_NCCL_EXCLUDE_TCP_IF");
	int tcp = !strncmp(i->fabric_attr->prov_name, "tcp", 3);

	if (!nc_in_list(i->fabric_attr->prov_name, prov))
		return 0;
	if (tcp && nc_in_list(i->domain_attr->name, ex ? ex : "lo,docker0"))
		return 0;
	if (tcp && !getenv("OFI_NCCL_USE_IPV6_TCP") &&
	    i->addr_format != FI_SOCKADDR_IN)
		return 0;
	if (!first)
		return 1;
	return i->caps == first->caps && i->mode == first->mode &&
	       i->addr_format == first->addr_format &&
	       i->ep_attr->type == first->ep_attr->type &&
	       i->ep_attr->protocol == first->ep_attr->protocol &&
	       i->ep_attr->protocol_version == first->ep_attr->protocol_version &&
	       !strcmp(i->fabric_attr->prov_name, first->fabric_attr->prov_name) &&
	       !strcmp(i->fabric_attr->name, first->fabric_attr->name);
}

static struct fi_info *nc_filter(struct fi_info *list, const char *prov)
{
	struct fi_info *keep = NULL, **tail = &keep, *i, *next;

	for (i = list; i; i = next) {
		next = i->next;
		i->next = NULL;
		if (nc_keep(i, keep, prov)) {
			*tail = i;
			tail = &i->next;
		} else {
			fi_freeinfo(i);
		}
	}
	return keep;
}

static int nc_query_one(struct nc *n, struct fi_info *h,
			const struct nc_query *q)
{
	struct fi_info *list = NULL;
	int ret;

	nc_hints(h, q->hmem);
	ret = fi_getinfo(q->version, NULL, NULL, 0, h, &list);
	if (!ret && FI_VERSION_LT(fi_version(), q->version))
		sft_die("fi_getinfo(%s) answered by a %u.%u library: it must "
			"refuse a newer API", q->name, FI_MAJOR(fi_version()),
			FI_MINOR(fi_version()));
	if (!ret) {
		list = nc_filter(list, n->c.opts->prov);
		if (!list)
			printf("fi_getinfo %s: answered, but no entry passed "
			       "the plugin's filters (provider '%s'; for tcp: "
			       "OFI_NCCL_EXCLUDE_TCP_IF, default lo,docker0, "
			       "and IPv4)\n", q->name, n->c.opts->prov);
		ret = list ? 0 : -FI_ENODATA;
	}
	printf("fi_getinfo %s: %d (%s)%s\n", q->name, ret,
	       ret ? fi_strerror(-ret) : "answered",
	       ret ? ", next query" : "");
	if (ret)
		return ret;
	n->info = list;
	n->query = q->name;
	n->gdr = q->hmem;
	return 0;
}

/* The four queries; any failure moves to the next, as in the plugin. */
static void nc_getinfo(struct nc *n)
{
	struct fi_info *h = fi_allocinfo();
	size_t k;

	if (!h)
		sft_die("fi_allocinfo failed");
	printf("libfabric %u.%u, provider wanted '%s'\n",
	       FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
	       n->c.opts->prov);
	for (k = 0; k < sizeof(nc_queries) / sizeof(nc_queries[0]); k++)
		if (!nc_query_one(n, h, &nc_queries[k]))
			break;
	fi_freeinfo(h);
	if (!n->info)	/* the plugin's SENDRECV protocol would not start */
		sft_die("no fi_getinfo query of the plugin's answered for "
			"'%s'", n->c.opts->prov);
}

/* After selection: the plugin's tcp (pre-2.2) FI_RMA workaround, its
 * MR key and tag rules, what it reads of the entry. */
static void nc_selected(struct nc *n)
{
	struct fi_info *i = n->info;
	uint64_t fmt = i->ep_attr->mem_tag_format;
	int bits = fmt ? 64 - __builtin_clzll(fmt) : 0;

	if (FI_VERSION_LT(fi_version(), FI_VERSION(2, 2)) &&
	    !strcmp(i->fabric_attr->prov_name, "tcp"))
		for (; i; i = i->next)
			i->caps |= FI_RMA;
	i = n->info;
	n->rma = !!(i->caps & FI_RMA);
	n->ep_mr = !!(i->domain_attr->mr_mode & FI_MR_ENDPOINT);
	n->own_keys = !(i->domain_attr->mr_mode & FI_MR_PROV_KEY);
	n->auto_progress = i->domain_attr->data_progress == FI_PROGRESS_AUTO;
	if (n->own_keys && i->domain_attr->mr_key_size < NC_MR_KEY_SIZE)
		sft_die("provider takes application MR keys of %zu bytes, the "
			"plugin needs %d", i->domain_attr->mr_key_size,
			NC_MR_KEY_SIZE);
	if (bits < NC_MIN_TAG_BITS)
		sft_die("mem_tag_format 0x%llx gives %d tag bits, the plugin "
			"needs %d", (unsigned long long)fmt, bits,
			NC_MIN_TAG_BITS);
	n->max_tag = (1ull << (bits - 1)) - 1;	/* top bit: control */
	printf("selected: %s: %s, fabric %s, domain %s, mr_mode 0x%x, "
	       "caps %s, %s progress\n", n->query, i->fabric_attr->prov_name,
	       i->fabric_attr->name, i->domain_attr->name,
	       i->domain_attr->mr_mode, n->rma ? "with FI_RMA" : "no FI_RMA",
	       n->auto_progress ? "auto" : "manual");
}

/* ------------------------------------------------------------------ */
/* objects                                                              */

/* (Re)initialise a request that is not posted; listed once. */
void nc_track(struct nc *n, struct nc_req *r, enum nc_kind kind,
	      void *owner)
{
	int tracked = r->tracked;

	memset(r, 0, sizeof(*r));
	r->guard_lo = r->guard_hi = NC_GUARD;
	r->kind = kind;
	r->owner = owner;
	r->tracked = 1;
	if (tracked)
		return;
	if (n->nreqs == n->reqs_cap) {
		n->reqs_cap = n->reqs_cap ? 2 * n->reqs_cap : 256;
		n->reqs = realloc(n->reqs, n->reqs_cap * sizeof(*n->reqs));
		if (!n->reqs)
			sft_die("out of memory");
	}
	n->reqs[n->nreqs++] = r;
}

/* The plugin's endpoint: bound to the shared CQ (both directions) and an
 * AV, shared memory refused where the provider knows the option. */
static struct fid_ep *nc_ep_open(struct nc *n, struct fid_av *av,
				 const char *what)
{
	struct fid_ep *ep;
	bool off = false;
	int ret;

	SFT_TRY(fi_endpoint(n->domain, n->info, &ep, NULL));
	SFT_TRY(fi_ep_bind(ep, &n->cq->fid, FI_TRANSMIT | FI_RECV));
	SFT_TRY(fi_ep_bind(ep, &av->fid, 0));
	ret = fi_setopt(&ep->fid, FI_OPT_ENDPOINT, NC_OPT_SHM_PERMITTED,
			&off, sizeof(off));
	if (ret && ret != -FI_EOPNOTSUPP && ret != -FI_ENOPROTOOPT)
		sft_die("%s: fi_setopt(FI_OPT_SHARED_MEMORY_PERMITTED = %d, "
			"false) = %d (%s); the plugin accepts 0, "
			"-FI_EOPNOTSUPP or -FI_ENOPROTOOPT", what,
			NC_OPT_SHM_PERMITTED, ret, fi_strerror(-ret));
	sft_log("%s: FI_OPT_SHARED_MEMORY_PERMITTED: %d", what, ret);
	SFT_TRY(fi_enable(ep));
	return ep;
}

static void nc_open(struct nc *n)
{
	struct fi_cq_attr cq_attr;
	struct fi_av_attr av_attr;

	SFT_TRY(fi_fabric(n->info->fabric_attr, &n->fabric, NULL));
	SFT_TRY(fi_domain(n->fabric, n->info, &n->domain, NULL));
	memset(&cq_attr, 0, sizeof(cq_attr));
	cq_attr.format = FI_CQ_FORMAT_TAGGED;
	cq_attr.size = NC_CQ_SIZE;
	SFT_TRY(fi_cq_open(n->domain, &cq_attr, &n->cq, NULL));
	memset(&av_attr, 0, sizeof(av_attr));
	SFT_TRY(fi_av_open(n->domain, &av_attr, &n->av, NULL));
	n->ep = nc_ep_open(n, n->av, "data endpoint");
	/* the connection manager: same domain and CQ, its own AV */
	SFT_TRY(fi_av_open(n->domain, &av_attr, &n->cm_av, NULL));
	n->cm_ep = nc_ep_open(n, n->cm_av, "CM endpoint");
}

/* fi_mr_regattr as the plugin calls it for host memory. */
struct fid_mr *nc_mr_reg(struct nc *n, void *buf, size_t len,
			 uint64_t access, struct fid_ep *ep)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_mr_attr attr;
	struct fid_mr *mr;

	memset(&attr, 0, sizeof(attr));
	attr.mr_iov = &iov;
	attr.iov_count = 1;
	attr.access = access;
	attr.iface = FI_HMEM_SYSTEM;
	if (n->own_keys)
		attr.requested_key = n->next_key++;
	SFT_TRY(fi_mr_regattr(n->domain, &attr, 0, &mr));
	if (n->ep_mr) {
		SFT_TRY(fi_mr_bind(mr, &ep->fid, 0));
		SFT_TRY(fi_mr_enable(mr));
	}
	return mr;
}

uint64_t nc_data_access(const struct nc *n)
{
	return FI_SEND | FI_RECV | (n->rma ? FI_READ : 0);
}

void *nc_alloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len))
		sft_die("out of memory (%zu bytes)", len);
	return p;
}

/* fi_getname into a 56-byte field: a longer address fails the plugin. */
void nc_getname(struct fid_ep *ep, void *buf, size_t *len,
		const char *what)
{
	int ret;

	memset(buf, 0, NC_ADDR_MAX);
	*len = NC_ADDR_MAX;
	ret = fi_getname(&ep->fid, buf, len);
	if (ret == -FI_ETOOSMALL)
		sft_die("%s: fi_getname needs %zu bytes, the plugin's address "
			"fields hold %d", what, *len, NC_ADDR_MAX);
	if (ret)
		sft_die("%s: fi_getname = %d (%s)", what, ret,
			fi_strerror(-ret));
	if (*len == 0 || *len > NC_ADDR_MAX)
		sft_die("%s: fi_getname length %zu (must be 1..%d)", what,
			*len, NC_ADDR_MAX);
}

/* One address from a 56-byte field (its length is not passed). */
fi_addr_t nc_av_insert(struct fid_av *av, const void *name,
		       const char *what)
{
	fi_addr_t a = FI_ADDR_NOTAVAIL;
	int ret = fi_av_insert(av, name, 1, &a, 0, NULL);

	if (ret != 1)
		sft_die("fi_av_insert of %s = %d (%s)", what, ret,
			ret < 0 ? fi_strerror(-ret) : "not inserted");
	if (a == FI_ADDR_NOTAVAIL)
		sft_die("fi_av_insert of %s gave FI_ADDR_NOTAVAIL", what);
	return a;
}

/* ------------------------------------------------------------------ */
/* completions                                                          */

static void nc_send_done(struct nc *n, struct nc_xfer *x,
			 const struct fi_cq_tagged_entry *e)
{
	struct sft_expect ex = { .ctx = &x->req.ctx,
				 .flags = FI_SEND | FI_TAGGED };

	sft_check_entry(e, &ex, "data send");
	n->inflight--;
	n->msgs_sent++;
}

static void nc_recv_done(struct nc *n, struct nc_xfer *x,
			 const struct fi_cq_tagged_entry *e)
{
	struct nc_rcomm *r = x->req.owner;
	struct sft_expect ex = { .ctx = &x->req.ctx,
				 .flags = FI_RECV | FI_TAGGED, .check_len = 1,
				 .len = x->len, .check_tag = 1, .tag = r->tag };
	char what[96];
	size_t k;

	snprintf(what, sizeof(what), "receive of %zu bytes (posted %zu) on "
		 "tag %llu", x->len, x->posted, (unsigned long long)r->tag);
	sft_check_entry(e, &ex, what);
	if (sft_verify(x->buf, x->len, x->seed, what))
		sft_die("%s: data differ", what);
	for (k = x->len; k < x->cap + NC_CANARY; k++)
		if (x->buf[k] != NC_POISON)
			sft_die("%s: byte %zu past the message changed "
				"(0x%02x)", what, k, x->buf[k]);
	n->inflight--;
	n->msgs_recvd++;
}

static struct nc_req *nc_req_of(struct nc *n, void *ctx)
{
	size_t k;

	for (k = 0; k < n->nreqs; k++)
		if ((void *)&n->reqs[k]->ctx == ctx)
			return n->reqs[k];
	sft_die("completion with op_context %p, which no operation had", ctx);
}

static void nc_dispatch(struct nc *n, const struct fi_cq_tagged_entry *e)
{
	struct nc_req *r = nc_req_of(n, e->op_context);

	if (r->guard_lo != NC_GUARD || r->guard_hi != NC_GUARD)
		sft_die("memory beside the fi_context2 at %p changed",
			e->op_context);
	if (!r->posted)
		sft_die("completion for op_context %p, which is not posted "
			"(a second completion?)", e->op_context);
	r->posted = 0;
	switch (r->kind) {
	case NC_CM_RX:
		nc_cm_rx_done(n, (struct nc_cm_buf *)r, e);
		break;
	case NC_CM_TX:
		nc_cm_tx_done(n, (struct nc_cm_buf *)r, e);
		break;
	case NC_SEND:
		nc_send_done(n, (struct nc_xfer *)r, e);
		break;
	case NC_RECV:
		nc_recv_done(n, (struct nc_xfer *)r, e);
		break;
	}
}

static const char *nc_kind_str(enum nc_kind k)
{
	static const char *names[] = { "CM fi_recv", "CM fi_send",
				       "data fi_tsend", "data fi_trecv" };

	return names[k];
}

static void nc_cq_error(struct nc *n)
{
	struct fi_cq_err_entry err;
	char buf[160];
	const char *s;
	ssize_t ret;

	memset(&err, 0, sizeof(err));
	ret = fi_cq_readerr(n->cq, &err, 0);
	if (ret == -FI_EAGAIN)
		return;
	if (ret != 1)
		sft_die("fi_cq_readerr = %zd (%s)", ret, fi_strerror((int)-ret));
	s = fi_cq_strerror(n->cq, err.prov_errno, err.err_data, buf,
			   sizeof(buf));
	sft_die("error completion for the %s with op_context %p: err %d "
		"(%s), prov_errno %d (%s), len %zu, tag 0x%llx",
		nc_kind_str(nc_req_of(n, err.op_context)->kind),
		err.op_context, err.err, fi_strerror(err.err), err.prov_errno,
		s ? s : "", err.len, (unsigned long long)err.tag);
}

/* The plugin's CQ loop: read 4 at a time until -FI_EAGAIN.  A sentinel
 * entry after the 4 must stay untouched. */
static void nc_progress(struct nc *n)
{
	struct fi_cq_tagged_entry e[NC_CQ_READ + 1], mark;
	ssize_t rc, k;

	nc_retry(n);
	memset(&mark, 0xa5, sizeof(mark));
	for (;;) {
		e[NC_CQ_READ] = mark;
		rc = fi_cq_read(n->cq, e, NC_CQ_READ);
		if (rc == -FI_EAGAIN)
			return;
		if (rc == -FI_EAVAIL) {
			nc_cq_error(n);
			return;
		}
		if (rc <= 0 || rc > NC_CQ_READ)
			sft_die("fi_cq_read(count %d) = %zd (%s)", NC_CQ_READ,
				rc, rc < 0 ? fi_strerror((int)-rc) : "?");
		if (memcmp(&e[NC_CQ_READ], &mark, sizeof(mark)))
			sft_die("fi_cq_read(count %d) wrote past entry %d",
				NC_CQ_READ, NC_CQ_READ);
		n->reads++;
		n->entries += (uint64_t)rc;
		n->full_reads += rc == NC_CQ_READ;
		for (k = 0; k < rc; k++)
			nc_dispatch(n, &e[k]);
	}
}

/* Progress until done(n) or the completion timeout. */
static void nc_wait(struct nc *n, int (*done)(struct nc *), const char *what)
{
	uint64_t t0 = sft_now_us();

	sft_step("%s", what);
	while (!done(n)) {
		nc_progress(n);
		if (sft_now_us() - t0 > SFT_COMP_TIMEOUT_MS * 1000ull)
			sft_die("%s: not done after %d ms (%d accepted, %d "
				"operations in flight)", what,
				SFT_COMP_TIMEOUT_MS, n->naccepted, n->inflight);
	}
}

/* OOB sync that keeps the CQ progressing (manual progress providers). */
static void nc_sync(struct nc *n)
{
	struct pollfd p = { .fd = n->c.oob_fd, .events = POLLIN };
	char out = 'N', in = 0;

	sft_oob_send(&n->c, &out, 1);
	while (poll(&p, 1, 0) <= 0)
		nc_progress(n);
	sft_oob_recv(&n->c, &in, 1);
	if (in != 'N')
		sft_die("OOB sync: got 0x%02x", (unsigned char)in);
}

/* ------------------------------------------------------------------ */
/* communicators and data                                               */

static int nc_connected(struct nc *n)
{
	int k;

	if (n->naccepted < n->ncomm)
		return 0;
	for (k = 0; k < n->ncomm; k++)
		if (!n->s[k].delivered || !n->s[k].answered || !n->r[k].ready)
			return 0;
	return 1;
}

static int nc_idle(struct nc *n)
{
	return n->inflight == 0;
}

static void nc_xfers(struct nc *n, struct nc_xfer **xs, enum nc_kind kind,
		     void *owner)
{
	struct nc_xfer *x = calloc((size_t)n->nsizes, sizeof(*x));
	int i;

	if (!x)
		sft_die("out of memory");
	for (i = 0; i < n->nsizes; i++) {
		x[i].len = n->c.opts->sizes[i];
		x[i].cap = x[i].len + NC_SLACK;
		x[i].buf = nc_alloc(x[i].cap + NC_CANARY);
		memset(x[i].buf, NC_POISON, x[i].cap + NC_CANARY);
		x[i].mr = nc_mr_reg(n, x[i].buf, x[i].cap, nc_data_access(n),
				    n->ep);
		nc_track(n, &x[i].req, kind, owner);
	}
	*xs = x;
}

static void nc_check_tags(struct nc *n)
{
	int a, b;

	for (a = 0; a < n->ncomm; a++)
		for (b = a + 1; b < n->ncomm; b++)
			if (n->s[a].tag == n->s[b].tag)
				sft_die("send comms %d and %d got the same tag "
					"%llu", a, b,
					(unsigned long long)n->s[a].tag);
}

/* Both sides listen, exchange handles, connect -W times and accept -W
 * connections, all progressed together on the one CQ. */
static void nc_setup_comms(struct nc *n)
{
	struct nc_handle mine, peer;
	int k;

	n->s = calloc((size_t)n->ncomm, sizeof(*n->s));
	n->r = calloc((size_t)n->ncomm, sizeof(*n->r));
	if (!n->s || !n->r)
		sft_die("out of memory");
	nc_listen(n, &mine);
	sft_oob_connect(&n->c);
	sft_oob_send(&n->c, &mine, sizeof(mine));
	sft_oob_recv(&n->c, &peer, sizeof(peer));
	for (k = 0; k < n->ncomm; k++)
		nc_connect(n, &n->s[k], &peer);
	nc_wait(n, nc_connected, "connect/accept");
	nc_check_tags(n);
	for (k = 0; k < n->ncomm; k++) {
		nc_xfers(n, &n->s[k].x, NC_SEND, &n->s[k]);
		nc_xfers(n, &n->r[k].x, NC_RECV, &n->r[k]);
	}
	printf("connected: %d send and %d receive communicators, tags "
	       "1..%llu (max %llu)\n", n->ncomm, n->ncomm,
	       (unsigned long long)n->next_tag,
	       (unsigned long long)n->max_tag);
}

/* Message seed: direction (the sender's role), tag, round, size slot. */
static uint64_t nc_seed(int sender_is_server, uint64_t tag, int round, int i)
{
	return ((uint64_t)sender_is_server << 60) ^ (tag << 32) ^
	       ((uint64_t)round << 16) ^ (uint64_t)i ^ 0x4e43434cull;
}

static void nc_post_sends(struct nc *n, int round)
{
	struct nc_xfer *x;
	uint64_t t0;
	ssize_t ret;
	int i, k;

	for (i = 0; i < n->nsizes; i++) {	/* all comms interleaved */
		for (k = 0; k < n->ncomm; k++) {
			x = &n->s[k].x[i];
			x->seed = nc_seed(n->c.opts->server, n->s[k].tag,
					  round, i);
			sft_fill(x->buf, x->len, x->seed);
			t0 = sft_now_us();
			while ((ret = fi_tsend(n->ep, x->buf, x->len,
					       fi_mr_desc(x->mr),
					       n->s[k].remote, n->s[k].tag,
					       &x->req.ctx)) == -FI_EAGAIN) {
				nc_progress(n);
				if (sft_now_us() - t0 > SFT_COMP_TIMEOUT_MS * 1000ull)
					sft_die("fi_tsend stuck in -FI_EAGAIN");
			}
			if (ret)
				sft_die("fi_tsend(%zu bytes, tag %llu) = %zd "
					"(%s)", x->len,
					(unsigned long long)n->s[k].tag, ret,
					fi_strerror((int)-ret));
			x->req.posted = 1;
			n->inflight++;
		}
	}
}

static void nc_post_recvs(struct nc *n, int round, int larger)
{
	struct nc_xfer *x;
	uint64_t t0;
	ssize_t ret;
	int i, k;

	for (i = 0; i < n->nsizes; i++) {
		for (k = 0; k < n->ncomm; k++) {
			x = &n->r[k].x[i];
			x->seed = nc_seed(!n->c.opts->server, n->r[k].tag,
					  round, i);
			x->posted = larger ? x->cap : x->len;
			memset(x->buf, NC_POISON, x->cap + NC_CANARY);
			t0 = sft_now_us();
			while ((ret = fi_trecv(n->ep, x->buf, x->posted,
					       fi_mr_desc(x->mr), FI_ADDR_UNSPEC,
					       n->r[k].tag, 0,
					       &x->req.ctx)) == -FI_EAGAIN) {
				nc_progress(n);
				if (sft_now_us() - t0 > SFT_COMP_TIMEOUT_MS * 1000ull)
					sft_die("fi_trecv stuck in -FI_EAGAIN");
			}
			if (ret)
				sft_die("fi_trecv(%zu bytes, tag %llu) = %zd "
					"(%s)", x->posted,
					(unsigned long long)n->r[k].tag, ret,
					fi_strerror((int)-ret));
			x->req.posted = 1;
			n->inflight++;
		}
	}
}

/* Round r: bit 0 sends before receives (unexpected messages), bit 1
 * receive buffers larger than the message. */
static void nc_round(struct nc *n, int round)
{
	int send_first = round & 1, larger = (round >> 1) & 1;

	sft_step("round %d: %s first, %s buffers", round,
		 send_first ? "sends" : "receives", larger ? "larger" : "exact");
	if (send_first) {
		nc_post_sends(n, round);
		nc_sync(n);
		nc_post_recvs(n, round, larger);
	} else {
		nc_post_recvs(n, round, larger);
		nc_sync(n);
		nc_post_sends(n, round);
	}
	nc_wait(n, nc_idle, "round completions");
	nc_sync(n);
}

/* ------------------------------------------------------------------ */
/* teardown, in the plugin's order                                      */

void nc_close(struct fid *f)
{
	if (f)
		SFT_TRY(fi_close(f));
}

static void nc_free_xfers(struct nc_xfer *x, int n)
{
	int i;

	for (i = 0; x && i < n; i++) {
		nc_close(&x[i].mr->fid);
		free(x[i].buf);
	}
	free(x);
}

/* NCCL deregisters its buffers, then closes the comms; the CM closes its
 * endpoint before its buffers' MRs unless they are bound to it
 * (FI_MR_ENDPOINT), then the data endpoint and AV, CQ, domain, fabric. */
static void nc_teardown(struct nc *n)
{
	int k;

	for (k = 0; k < n->ncomm; k++) {
		nc_free_xfers(n->s[k].x, n->nsizes);
		nc_free_xfers(n->r[k].x, n->nsizes);
		if (n->r[k].flush_mr)
			nc_close(&n->r[k].flush_mr->fid);
		free(n->r[k].flush_buf);
	}
	if (!n->ep_mr)
		nc_close(&n->cm_ep->fid);
	nc_close_cm_mrs(n);
	if (n->ep_mr)
		nc_close(&n->cm_ep->fid);
	nc_close(&n->cm_av->fid);
	nc_close(&n->ep->fid);
	nc_close(&n->av->fid);
	nc_close(&n->cq->fid);
	nc_close(&n->domain->fid);
	nc_close(&n->fabric->fid);
	fi_freeinfo(n->info);
	free(n->s);
	free(n->r);
	free(n->reqs);
}

int main(int argc, char **argv)
{
	static const size_t def[] = { 0, 1, 4 * SFT_KIB, 64 * SFT_KIB,
				      SFT_MIB, 4 * SFT_MIB };
	static struct nc n;	/* large: the CM buffer table */
	struct sft_opts o;
	int round, rounds;

	sft_init_opts(&o, "sft_nccl");
	o.window = 4;		/* -W: communicators each way */
	sft_parse_opts(&o, argc, argv);
	sft_default_sizes(&o, def, 6);
	rounds = o.iters ? o.iters : 4;
	if (o.nsizes > NC_MAX_REQS)
		sft_die("-S: at most %d sizes (requests per comm)", NC_MAX_REQS);
	n.c.opts = &o;
	n.c.oob_fd = -1;
	n.ncomm = o.window;
	n.nsizes = o.nsizes;
	nc_getinfo(&n);
	nc_selected(&n);
	nc_open(&n);
	nc_setup_comms(&n);
	for (round = 0; round < rounds; round++)
		nc_round(&n, round);
	nc_teardown(&n);
	sft_pass("%s: %d+%d comms, %d sizes x %d rounds, %llu messages sent "
		 "and %llu received, all checked; %llu CQ reads (%llu of 4 "
		 "entries), %llu completions", n.query, n.ncomm, n.ncomm,
		 n.nsizes, rounds, (unsigned long long)n.msgs_sent,
		 (unsigned long long)n.msgs_recvd,
		 (unsigned long long)n.reads,
		 (unsigned long long)n.full_reads,
		 (unsigned long long)n.entries);
}
