/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_verbs_emu.c: an RDMA device emulated in the test process (see
 * srd_verbs_emu.h).  Each QP is a UDP socket on 127.0.0.1 whose port is
 * its QP number, so emulated endpoints in different processes reach each
 * other (the provider built with it, libsrdemu-fi.so, runs the whole
 * loopback suite over the verbs wire); a datagram lands in a posted
 * receive when the receiver polls its CQ, or when its QP changes state.
 * A completion channel's fd is an epoll set of its QPs' sockets.  Test
 * code only: never linked into the provider that is installed.
 */
#include "config.h"
#include "srd_verbs_emu.h"
#include "srd_list.h"

#ifdef HAVE_VERBS

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <unistd.h>

#define EMU_DEV_MAX	4
#define EMU_MAX_INLINE	128
#define EMU_EVQ		64

struct emu_dev {
	struct ibv_device dev;
	struct srd_emu_dev_attr attr;
	uint8_t gid[16];
	bool removed;
};

struct emu_ctx {
	struct ibv_context ctx;
	struct emu_dev *dev;
	int async_pipe[2];
	struct ibv_async_event evq[EMU_EVQ];
	int ev_head, ev_count;
};

struct emu_mr {
	struct ibv_mr mr;
	struct emu_mr *next;
};

struct emu_cqe {
	struct ibv_wc wc;
	struct emu_qp *qp;	/* send completions: whose queue they free */
	uint32_t retire;	/* send requests they complete */
};

struct emu_cq {
	struct ibv_cq cq;
	struct emu_cqe *ring;
	int cap, head, count;
	bool armed;
	struct emu_cq *next;
};

struct emu_rwr {
	uint64_t wr_id, addr;
	uint32_t len, lkey;
};

struct emu_qp {
	struct ibv_qp qp;
	struct emu_ctx *ctx;
	int sock;			/* bound to 127.0.0.1:qp_num */
	uint32_t qkey;
	struct emu_rwr *rq;
	uint32_t rq_cap, rq_head, rq_count;
	uint32_t sq_cap, sq_out, unsignaled;
	struct emu_qp *next;
};

struct emu_ah {
	struct ibv_ah ah;
	struct ibv_ah_attr attr;
};

static pthread_mutex_t emu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_dev emu_devs[EMU_DEV_MAX];
static int emu_ndev;
static struct emu_mr *emu_mrs;
static struct emu_qp *emu_qps;
static struct emu_cq *emu_cqs;
static struct srd_emu_stats emu_st;
static int emu_live;

void srd_emu_init(int ndev, const struct srd_emu_dev_attr *devs)
{
	pthread_mutex_lock(&emu_lock);
	memset(emu_devs, 0, sizeof(emu_devs));
	memset(&emu_st, 0, sizeof(emu_st));
	emu_ndev = ndev > EMU_DEV_MAX ? EMU_DEV_MAX : ndev;
	for (int i = 0; i < emu_ndev; i++) {
		struct emu_dev *d = &emu_devs[i];

		d->attr = devs[i];
		strncpy(d->dev.name, devs[i].name, sizeof(d->dev.name) - 1);
		if (devs[i].roce_v2_ipv4) {
			d->gid[10] = d->gid[11] = 0xff;
			d->gid[12] = 127;
			d->gid[15] = devs[i].host;
		} else {
			d->gid[0] = 0xfe;
			d->gid[1] = 0x80;
			d->gid[15] = devs[i].host;
		}
	}
	pthread_mutex_unlock(&emu_lock);
	srd_verbs_ops_set(&srd_emu_ops);
}

void srd_emu_fini(void)
{
	srd_verbs_ops_set(NULL);
}

SRD_EMU_API void srd_emu_get_stats(struct srd_emu_stats *stats)
{
	pthread_mutex_lock(&emu_lock);
	*stats = emu_st;
	pthread_mutex_unlock(&emu_lock);
}

int srd_emu_live_objects(void)
{
	return emu_live;
}

/* --- devices, async events -------------------------------------------- */

static struct ibv_device **emu_get_device_list(int *num)
{
	struct ibv_device **list = calloc(EMU_DEV_MAX + 1, sizeof(*list));
	int n = 0;

	if (!list)
		return NULL;
	pthread_mutex_lock(&emu_lock);
	for (int i = 0; i < emu_ndev; i++)
		if (!emu_devs[i].removed)
			list[n++] = &emu_devs[i].dev;
	pthread_mutex_unlock(&emu_lock);
	if (num)
		*num = n;
	return list;
}

static void emu_free_device_list(struct ibv_device **list)
{
	free(list);
}

static const char *emu_get_device_name(struct ibv_device *dev)
{
	return dev->name;
}

static struct emu_dev *dev_of(struct ibv_context *ctx)
{
	return ((struct emu_ctx *)ctx)->dev;
}

static struct ibv_context *emu_open_device(struct ibv_device *dev)
{
	struct emu_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (pipe(c->async_pipe)) {
		free(c);
		return NULL;
	}
	c->ctx.device = dev;
	c->ctx.async_fd = c->async_pipe[0];
	c->ctx.cmd_fd = -1;
	c->dev = srd_container_of(dev, struct emu_dev, dev);
	__atomic_add_fetch(&emu_live, 1, __ATOMIC_RELAXED);
	return &c->ctx;
}

static int emu_close_device(struct ibv_context *ctx)
{
	struct emu_ctx *c = (struct emu_ctx *)ctx;

	close(c->async_pipe[0]);
	close(c->async_pipe[1]);
	free(c);
	__atomic_sub_fetch(&emu_live, 1, __ATOMIC_RELAXED);
	return 0;
}

/* under emu_lock */
static void async_raise(struct emu_ctx *c, enum ibv_event_type type,
			struct ibv_qp *qp)
{
	struct ibv_async_event *ev;

	if (c->ev_count == EMU_EVQ)
		return;
	ev = &c->evq[(c->ev_head + c->ev_count++) % EMU_EVQ];
	memset(ev, 0, sizeof(*ev));
	ev->event_type = type;
	ev->element.qp = qp;
	if (write(c->async_pipe[1], "e", 1) != 1)
		c->ev_count--;
}

static int emu_get_async_event(struct ibv_context *ctx,
			       struct ibv_async_event *ev)
{
	struct emu_ctx *c = (struct emu_ctx *)ctx;
	char b;

	if (read(c->async_pipe[0], &b, 1) != 1)
		return -1;
	pthread_mutex_lock(&emu_lock);
	*ev = c->evq[c->ev_head];
	c->ev_head = (c->ev_head + 1) % EMU_EVQ;
	c->ev_count--;
	pthread_mutex_unlock(&emu_lock);
	return 0;
}

static void emu_ack_async_event(struct ibv_async_event *ev)
{
	(void)ev;
}

static int emu_query_device(struct ibv_context *ctx,
			    struct ibv_device_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->phys_port_cnt = 1;
	attr->max_qp_wr = 8192;
	attr->max_cqe = 65536;
	(void)ctx;
	return 0;
}

static enum ibv_mtu mtu_enum(uint32_t mtu)
{
	return mtu >= 4096 ? IBV_MTU_4096 : mtu >= 2048 ? IBV_MTU_2048 :
	       mtu >= 1024 ? IBV_MTU_1024 : mtu >= 512 ? IBV_MTU_512 :
	       IBV_MTU_256;
}

static int emu_query_port(struct ibv_context *ctx, uint8_t port,
			  struct ibv_port_attr *attr)
{
	struct emu_dev *d = dev_of(ctx);

	if (port != 1)
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->state = d->attr.down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
	attr->active_mtu = mtu_enum(d->attr.mtu);
	attr->max_mtu = IBV_MTU_4096;
	attr->gid_tbl_len = 2;
	attr->lid = d->attr.roce_v2_ipv4 ? 0 : d->attr.host;
	attr->link_layer = d->attr.roce_v2_ipv4 ? IBV_LINK_LAYER_ETHERNET :
			   IBV_LINK_LAYER_INFINIBAND;
	return 0;
}

static int emu_query_gid_ex(struct ibv_context *ctx, uint32_t port,
			    uint32_t index, struct ibv_gid_entry *entry)
{
	struct emu_dev *d = dev_of(ctx);

	if (port != 1 || index > 1)
		return EINVAL;
	memset(entry, 0, sizeof(*entry));
	entry->gid_index = index;
	entry->port_num = port;
	/* entry 0 is the link-local one a RoCE port always has (v1);
	 * entry 1 the address */
	if (d->attr.roce_v2_ipv4 && index == 0) {
		entry->gid.raw[0] = 0xfe;
		entry->gid.raw[1] = 0x80;
		entry->gid.raw[15] = d->attr.host;
		entry->gid_type = IBV_GID_TYPE_ROCE_V1;
		return 0;
	}
	if (!d->attr.roce_v2_ipv4 && index == 1)
		return 0;			/* empty entry */
	memcpy(entry->gid.raw, d->gid, 16);
	entry->gid_type = d->attr.roce_v2_ipv4 ? IBV_GID_TYPE_ROCE_V2 :
			  IBV_GID_TYPE_IB;
	return 0;
}

/* --- PD, MR, CQ, channel ----------------------------------------------- */

static struct ibv_pd *emu_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (pd) {
		pd->context = ctx;
		__atomic_add_fetch(&emu_live, 1, __ATOMIC_RELAXED);
	}
	return pd;
}

static int emu_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	__atomic_sub_fetch(&emu_live, 1, __ATOMIC_RELAXED);
	return 0;
}

static struct ibv_mr *emu_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				 int access)
{
	static uint32_t next_key = 0x1000;
	struct emu_mr *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	(void)access;
	pthread_mutex_lock(&emu_lock);
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = len;
	m->mr.lkey = m->mr.rkey = next_key++;
	m->next = emu_mrs;
	emu_mrs = m;
	emu_live++;
	pthread_mutex_unlock(&emu_lock);
	return &m->mr;
}

static int emu_dereg_mr(struct ibv_mr *mr)
{
	pthread_mutex_lock(&emu_lock);
	for (struct emu_mr **p = &emu_mrs; *p; p = &(*p)->next)
		if (&(*p)->mr == mr) {
			struct emu_mr *m = *p;

			*p = m->next;
			free(m);
			emu_live--;
			break;
		}
	pthread_mutex_unlock(&emu_lock);
	return 0;
}

/* under emu_lock: does a registered region with this key cover it? */
static bool lkey_covers(uint32_t lkey, uint64_t addr, uint32_t len)
{
	for (struct emu_mr *m = emu_mrs; m; m = m->next)
		if (m->mr.lkey == lkey && addr >= (uintptr_t)m->mr.addr &&
		    addr + len <= (uintptr_t)m->mr.addr + m->mr.length)
			return true;
	return false;
}

static struct ibv_comp_channel *emu_create_comp_channel(struct ibv_context *c)
{
	struct ibv_comp_channel *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	ch->fd = epoll_create1(EPOLL_CLOEXEC);
	if (ch->fd < 0) {
		free(ch);
		return NULL;
	}
	ch->context = c;
	__atomic_add_fetch(&emu_live, 1, __ATOMIC_RELAXED);
	return ch;
}

static int emu_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	close(ch->fd);
	free(ch);
	__atomic_sub_fetch(&emu_live, 1, __ATOMIC_RELAXED);
	return 0;
}

static struct ibv_cq *emu_create_cq(struct ibv_context *ctx, int cqe,
				    void *cq_ctx, struct ibv_comp_channel *ch,
				    int vector)
{
	struct emu_cq *q = calloc(1, sizeof(*q));

	(void)vector;
	if (!q || cqe < 1 || !(q->ring = calloc((size_t)cqe, sizeof(*q->ring)))) {
		free(q);
		return NULL;
	}
	q->cap = cqe;
	q->cq.context = ctx;
	q->cq.channel = ch;
	q->cq.cq_context = cq_ctx;
	q->cq.cqe = cqe;
	pthread_mutex_lock(&emu_lock);
	q->next = emu_cqs;
	emu_cqs = q;
	emu_live++;
	pthread_mutex_unlock(&emu_lock);
	return &q->cq;
}

static int emu_destroy_cq(struct ibv_cq *cq)
{
	pthread_mutex_lock(&emu_lock);
	for (struct emu_cq **p = &emu_cqs; *p; p = &(*p)->next)
		if (&(*p)->cq == cq) {
			struct emu_cq *q = *p;

			*p = q->next;
			free(q->ring);
			free(q);
			emu_live--;
			break;
		}
	pthread_mutex_unlock(&emu_lock);
	return 0;
}

static int emu_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	(void)solicited_only;
	pthread_mutex_lock(&emu_lock);
	((struct emu_cq *)cq)->armed = true;
	pthread_mutex_unlock(&emu_lock);
	return 0;
}

static int emu_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			    void **cq_ctx)
{
	/* The fd stays readable while datagrams wait (level-triggered):
	 * there are no events to hand out and acknowledge. */
	(void)ch;
	(void)cq;
	(void)cq_ctx;
	errno = EAGAIN;
	return -1;
}

static void emu_ack_cq_events(struct ibv_cq *cq, unsigned int n)
{
	(void)cq;
	(void)n;
}

/* under emu_lock */
static void cq_push(struct emu_cq *q, const struct ibv_wc *wc,
		    struct emu_qp *qp, uint32_t retire)
{
	struct emu_cqe *e;

	if (q->count == q->cap) {
		emu_st.cq_overruns++;
		async_raise((struct emu_ctx *)q->cq.context, IBV_EVENT_CQ_ERR,
			    NULL);
		return;
	}
	e = &q->ring[(q->head + q->count++) % q->cap];
	e->wc = *wc;
	e->qp = qp;
	e->retire = retire;
}

static void rx_drain(struct emu_qp *qp);

static int emu_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct emu_cq *q = (struct emu_cq *)cq;
	int got = 0;

	pthread_mutex_lock(&emu_lock);
	for (struct emu_qp *qp = emu_qps; qp; qp = qp->next)
		if (qp->qp.recv_cq == cq)
			rx_drain(qp);
	while (got < n && q->count) {
		struct emu_cqe *e = &q->ring[q->head];

		wc[got++] = e->wc;
		if (e->qp)
			e->qp->sq_out -= e->retire;
		q->head = (q->head + 1) % q->cap;
		q->count--;
	}
	pthread_mutex_unlock(&emu_lock);
	return got;
}

/* --- QPs ---------------------------------------------------------------- */

/* The QP's socket: its port is the QP number (below 2^24); a QP whose
 * receive CQ has a channel joins the channel's epoll set. */
static int qp_socket(struct emu_qp *qp, struct ibv_comp_channel *ch)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(sin);
	int bytes = 8 << 20;

	qp->sock = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			  0);
	if (qp->sock < 0)
		return -1;
	setsockopt(qp->sock, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes));
	if (bind(qp->sock, (struct sockaddr *)&sin, sizeof(sin)) ||
	    getsockname(qp->sock, (struct sockaddr *)&sin, &len))
		goto err;
	qp->qp.qp_num = ntohs(sin.sin_port);
	if (ch) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = qp };

		if (epoll_ctl(ch->fd, EPOLL_CTL_ADD, qp->sock, &ev))
			goto err;
	}
	return 0;
err:
	close(qp->sock);
	return -1;
}

static struct ibv_qp *emu_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *ia)
{
	struct emu_qp *qp;

	if (ia->qp_type != IBV_QPT_UD || !ia->send_cq || !ia->recv_cq ||
	    !ia->cap.max_send_wr || ia->cap.max_send_sge > 1 ||
	    ia->cap.max_recv_sge > 1) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp || !(qp->rq = calloc(ia->cap.max_recv_wr + 1,
				     sizeof(*qp->rq)))) {
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	if (ia->cap.max_inline_data > EMU_MAX_INLINE)
		ia->cap.max_inline_data = EMU_MAX_INLINE;
	if (qp_socket(qp, ia->recv_cq->channel)) {
		free(qp->rq);
		free(qp);
		return NULL;
	}
	qp->ctx = (struct emu_ctx *)pd->context;
	qp->qp.context = pd->context;
	qp->qp.pd = pd;
	qp->qp.send_cq = ia->send_cq;
	qp->qp.recv_cq = ia->recv_cq;
	qp->qp.qp_type = IBV_QPT_UD;
	qp->qp.state = IBV_QPS_RESET;
	qp->rq_cap = ia->cap.max_recv_wr;
	qp->sq_cap = ia->cap.max_send_wr;
	pthread_mutex_lock(&emu_lock);
	qp->next = emu_qps;
	emu_qps = qp;
	emu_live++;
	pthread_mutex_unlock(&emu_lock);
	return &qp->qp;
}

static int emu_destroy_qp(struct ibv_qp *ibqp)
{
	pthread_mutex_lock(&emu_lock);
	for (struct emu_qp **p = &emu_qps; *p; p = &(*p)->next)
		if (&(*p)->qp == ibqp) {
			struct emu_qp *qp = *p;

			*p = qp->next;
			for (struct emu_cq *q = emu_cqs; q; q = q->next)
				for (int i = 0; i < q->cap; i++)
					if (q->ring[i].qp == qp)
						q->ring[i].qp = NULL;
			close(qp->sock);	/* leaves the epoll set */
			free(qp->rq);
			free(qp);
			emu_live--;
			break;
		}
	pthread_mutex_unlock(&emu_lock);
	return 0;
}

/* under emu_lock: every queued receive completes with a flush error */
static void qp_flush(struct emu_qp *qp)
{
	while (qp->rq_count) {
		struct emu_rwr *r = &qp->rq[qp->rq_head];
		struct ibv_wc wc = {
			.wr_id = r->wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = qp->qp.qp_num,
		};

		cq_push((struct emu_cq *)qp->qp.recv_cq, &wc, NULL, 0);
		emu_st.flushed++;
		qp->rq_head = (qp->rq_head + 1) % (qp->rq_cap + 1);
		qp->rq_count--;
	}
}

static void qp_set_error(struct emu_qp *qp)
{
	rx_drain(qp);		/* what arrived before the error */
	qp->qp.state = IBV_QPS_ERR;
	emu_st.qp_errors++;
	qp_flush(qp);
}

static int emu_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a,
			 int mask)
{
	struct emu_qp *qp = (struct emu_qp *)ibqp;
	enum ibv_qp_state cur = ibqp->state;
	int ret = 0;

	if (!(mask & IBV_QP_STATE))
		return EINVAL;
	pthread_mutex_lock(&emu_lock);
	/* datagrams that arrived in the old state meet the old state */
	rx_drain(qp);
	switch (a->qp_state) {
	case IBV_QPS_RESET:
		qp->rq_count = 0;	/* discarded, no completions */
		qp->sq_out = 0;
		break;
	case IBV_QPS_INIT:
		if (cur != IBV_QPS_RESET ||
		    (mask & (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)) !=
		    (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) ||
		    a->port_num != 1)
			ret = EINVAL;
		else
			qp->qkey = a->qkey;
		break;
	case IBV_QPS_RTR:
		ret = cur == IBV_QPS_INIT ? 0 : EINVAL;
		break;
	case IBV_QPS_RTS:
		ret = cur == IBV_QPS_RTR && (mask & IBV_QP_SQ_PSN) ? 0 : EINVAL;
		break;
	case IBV_QPS_ERR:
		qp_set_error(qp);
		break;
	default:
		ret = EINVAL;
	}
	if (!ret)
		ibqp->state = a->qp_state;
	pthread_mutex_unlock(&emu_lock);
	return ret;
}

static int emu_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad)
{
	struct emu_qp *qp = (struct emu_qp *)ibqp;
	int ret = 0;

	pthread_mutex_lock(&emu_lock);
	for (; wr; wr = wr->next) {
		struct emu_rwr *r;

		if (ibqp->state == IBV_QPS_RESET || wr->num_sge != 1 ||
		    qp->rq_count == qp->rq_cap) {
			ret = ibqp->state == IBV_QPS_RESET ? EINVAL : ENOMEM;
			break;
		}
		r = &qp->rq[(qp->rq_head + qp->rq_count++) % (qp->rq_cap + 1)];
		r->wr_id = wr->wr_id;
		r->addr = wr->sg_list[0].addr;
		r->len = wr->sg_list[0].length;
		r->lkey = wr->sg_list[0].lkey;
		if (ibqp->state == IBV_QPS_ERR)
			qp_flush(qp);
	}
	*bad = wr;
	pthread_mutex_unlock(&emu_lock);
	return ret;
}

static struct ibv_ah *emu_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a)
{
	struct emu_ah *ah;

	/* InfiniBand may route locally, by LID alone (no GRH is sent);
	 * RoCE always needs one */
	if ((!a->is_global && dev_of(pd->context)->attr.roce_v2_ipv4) ||
	    a->port_num != 1) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	ah->attr = *a;
	__atomic_add_fetch(&emu_live, 1, __ATOMIC_RELAXED);
	return &ah->ah;
}

static int emu_destroy_ah(struct ibv_ah *ah)
{
	free(ah);
	__atomic_sub_fetch(&emu_live, 1, __ATOMIC_RELAXED);
	return 0;
}

/* under emu_lock: the 40 bytes in front of a UD receive */
static void grh_fill(uint8_t *grh, const struct emu_dev *src,
		     const struct emu_dev *dst)
{
	memset(grh, 0xee, 40);
	if (src->attr.roce_v2_ipv4) {
		uint8_t *ip = grh + 20;

		memset(ip, 0, 20);
		ip[0] = 0x45;
		ip[9] = 17;
		memcpy(ip + 12, src->gid + 12, 4);
		memcpy(ip + 16, dst->gid + 12, 4);
	} else {
		grh[0] = 0x60;
		memcpy(grh + 8, src->gid, 16);
		memcpy(grh + 24, dst->gid, 16);
	}
}

/* What travels between emulated QPs: the UD header a device would
 * carry (GIDs, QPN, Q_Key, immediate) and the payload. */
struct emu_pkt {
	uint32_t magic;
	uint32_t src_qpn;
	uint32_t qkey;
	uint32_t imm;			/* network order, as posted */
	uint16_t with_imm;
	uint16_t slid;			/* InfiniBand: source and destination */
	uint16_t dlid;			/* LIDs, as a switch forwards by them */
	uint16_t grh;			/* 1: a GRH travels (the GIDs below) */
	uint32_t len;
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint8_t data[4096];
};
#define EMU_MAGIC 0x454d5531u
#define EMU_HDR offsetof(struct emu_pkt, data)

/* under emu_lock: the datagram reaches the QP in its current state */
static void deliver(struct emu_qp *to, const struct emu_pkt *pkt)
{
	struct emu_dev *dev = to->ctx->dev;
	struct emu_dev src = { .attr.roce_v2_ipv4 = dev->attr.roce_v2_ipv4 };
	struct emu_rwr *r;
	struct ibv_wc wc;

	if (dev->removed || (pkt->grh && memcmp(dev->gid, pkt->dgid, 16)) ||
	    (!dev->attr.roce_v2_ipv4 && pkt->dlid != dev->attr.host)) {
		emu_st.drop_no_qp++;
		return;
	}
	if (to->qp.state != IBV_QPS_RTR && to->qp.state != IBV_QPS_RTS) {
		emu_st.drop_state++;
		return;
	}
	if (to->qkey != pkt->qkey) {
		emu_st.drop_qkey++;
		return;
	}
	if (!to->rq_count) {
		emu_st.drop_no_recv++;
		return;
	}
	r = &to->rq[to->rq_head];
	to->rq_head = (to->rq_head + 1) % (to->rq_cap + 1);
	to->rq_count--;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = r->wr_id;
	wc.opcode = IBV_WC_RECV;
	wc.qp_num = to->qp.qp_num;
	wc.src_qp = pkt->src_qpn;
	wc.slid = pkt->slid;
	if (r->len < 40 + pkt->len || !lkey_covers(r->lkey, r->addr, r->len)) {
		wc.status = r->len < 40 + pkt->len ? IBV_WC_LOC_LEN_ERR :
			    IBV_WC_LOC_PROT_ERR;
		cq_push((struct emu_cq *)to->qp.recv_cq, &wc, NULL, 0);
		qp_set_error(to);
		return;
	}
	/* without a GRH the device leaves the 40 bytes as they were: what
	 * the buffer's last datagram wrote */
	if (pkt->grh) {
		memcpy(src.gid, pkt->sgid, 16);
		grh_fill((uint8_t *)(uintptr_t)r->addr, &src, dev);
		wc.wc_flags = IBV_WC_GRH;
	}
	memcpy((uint8_t *)(uintptr_t)r->addr + 40, pkt->data, pkt->len);
	wc.status = IBV_WC_SUCCESS;
	wc.byte_len = 40 + pkt->len;
	if (pkt->with_imm) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = pkt->imm;
	}
	cq_push((struct emu_cq *)to->qp.recv_cq, &wc, NULL, 0);
	emu_st.delivered++;
}

/* under emu_lock: everything waiting on the QP's socket */
static void rx_drain(struct emu_qp *qp)
{
	static struct emu_pkt pkt;
	ssize_t n;

	while ((n = recv(qp->sock, &pkt, sizeof(pkt), MSG_DONTWAIT)) > 0) {
		if ((size_t)n < EMU_HDR || pkt.magic != EMU_MAGIC ||
		    pkt.len != (size_t)n - EMU_HDR)
			continue;
		deliver(qp, &pkt);
	}
}

/* under emu_lock: out through the sender's socket */
static void wire_send(struct emu_qp *from, const struct ibv_send_wr *wr,
		      const void *data, uint32_t len)
{
	const struct emu_ah *ah = (const struct emu_ah *)wr->wr.ud.ah;
	static struct emu_pkt pkt;
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};

	emu_st.sent++;
	if (wr->wr.ud.remote_qpn > 0xffff) {
		emu_st.drop_no_qp++;
		return;
	}
	to.sin_port = htons((uint16_t)wr->wr.ud.remote_qpn);
	pkt.magic = EMU_MAGIC;
	pkt.src_qpn = from->qp.qp_num;
	pkt.qkey = wr->wr.ud.remote_qkey;
	pkt.imm = wr->imm_data;
	pkt.with_imm = wr->opcode == IBV_WR_SEND_WITH_IMM;
	pkt.slid = from->ctx->dev->attr.roce_v2_ipv4 ? 0 :
		   from->ctx->dev->attr.host;
	pkt.dlid = ah->attr.dlid;
	pkt.grh = ah->attr.is_global;
	pkt.len = len;
	memcpy(pkt.sgid, from->ctx->dev->gid, 16);
	memcpy(pkt.dgid, ah->attr.grh.dgid.raw, 16);
	memcpy(pkt.data, data, len);
	/* a full socket buffer is a loss, as on a wire */
	sendto(from->sock, &pkt, EMU_HDR + len, MSG_DONTWAIT,
	       (struct sockaddr *)&to, sizeof(to));
}

/* under emu_lock: one send request; its completion status */
static enum ibv_wc_status send_one(struct emu_qp *qp,
				   const struct ibv_send_wr *wr)
{
	const struct ibv_sge *sge = wr->sg_list;
	uint32_t mtu = qp->ctx->dev->attr.mtu;

	if (qp->qp.state == IBV_QPS_ERR || qp->ctx->dev->removed)
		return IBV_WC_WR_FLUSH_ERR;
	if (!(wr->send_flags & IBV_SEND_INLINE) &&
	    !lkey_covers(sge->lkey, sge->addr, sge->length))
		return IBV_WC_LOC_PROT_ERR;
	if (sge->length > mtu || sge->length > sizeof(((struct emu_pkt *)0)->data))
		return IBV_WC_LOC_LEN_ERR;
	wire_send(qp, wr, (const void *)(uintptr_t)sge->addr, sge->length);
	return IBV_WC_SUCCESS;
}

static int emu_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad)
{
	struct emu_qp *qp = (struct emu_qp *)ibqp;
	int ret = 0;

	pthread_mutex_lock(&emu_lock);
	for (; wr; wr = wr->next) {
		enum ibv_wc_status status;

		if ((ibqp->state != IBV_QPS_RTS && ibqp->state != IBV_QPS_ERR) ||
		    wr->num_sge != 1 || !wr->wr.ud.ah ||
		    (wr->opcode != IBV_WR_SEND &&
		     wr->opcode != IBV_WR_SEND_WITH_IMM) ||
		    ((wr->send_flags & IBV_SEND_INLINE) &&
		     wr->sg_list[0].length > EMU_MAX_INLINE)) {
			ret = EINVAL;
			break;
		}
		if (qp->sq_out >= qp->sq_cap) {
			ret = ENOMEM;		/* send queue full */
			break;
		}
		qp->sq_out++;
		qp->unsignaled++;
		status = send_one(qp, wr);
		if (status != IBV_WC_SUCCESS ||
		    (wr->send_flags & IBV_SEND_SIGNALED)) {
			struct ibv_wc wc = {
				.wr_id = wr->wr_id,
				.status = status,
				.opcode = IBV_WC_SEND,
				.qp_num = ibqp->qp_num,
			};

			cq_push((struct emu_cq *)ibqp->send_cq, &wc, qp,
				qp->unsignaled);
			qp->unsignaled = 0;
			emu_st.signaled++;
			if (status != IBV_WC_SUCCESS &&
			    status != IBV_WC_WR_FLUSH_ERR)
				qp_set_error(qp);
		}
	}
	*bad = wr;
	pthread_mutex_unlock(&emu_lock);
	return ret;
}

/* --- faults ------------------------------------------------------------- */

SRD_EMU_API void srd_emu_qp_error(uint32_t qpn)
{
	pthread_mutex_lock(&emu_lock);
	for (struct emu_qp *qp = emu_qps; qp; qp = qp->next)
		if (qp->qp.qp_num == qpn) {
			qp_set_error(qp);
			async_raise(qp->ctx, IBV_EVENT_QP_FATAL, &qp->qp);
		}
	pthread_mutex_unlock(&emu_lock);
}

SRD_EMU_API uint32_t srd_emu_qpn_sibling(uint32_t qpn, int k)
{
	struct emu_qp *same[64];
	int n = 0, at = -1;
	uint32_t ret = 0;

	pthread_mutex_lock(&emu_lock);
	for (struct emu_qp *qp = emu_qps; qp; qp = qp->next)
		if (qp->qp.qp_num == qpn)
			for (struct emu_qp *o = emu_qps; o && n < 64; o = o->next)
				if (o->ctx == qp->ctx) {
					if (o == qp)
						at = n;
					same[n++] = o;
				}
	/* newest first: the one created k later is k places before */
	if (at >= k)
		ret = same[at - k]->qp.qp_num;
	pthread_mutex_unlock(&emu_lock);
	return ret;
}

SRD_EMU_API void srd_emu_device_remove(const char *name)
{
	pthread_mutex_lock(&emu_lock);
	for (int i = 0; i < emu_ndev; i++) {
		if (strcmp(emu_devs[i].dev.name, name))
			continue;
		emu_devs[i].removed = true;
		for (struct emu_qp *qp = emu_qps; qp; qp = qp->next) {
			if (qp->ctx->dev != &emu_devs[i])
				continue;
			qp_set_error(qp);
		}
		/* one event per open context */
		for (struct emu_qp *qp = emu_qps; qp; qp = qp->next) {
			bool first = true;

			for (struct emu_qp *o = emu_qps; o != qp; o = o->next)
				if (o->ctx == qp->ctx)
					first = false;
			if (first && qp->ctx->dev == &emu_devs[i])
				async_raise(qp->ctx, IBV_EVENT_DEVICE_FATAL,
					    NULL);
		}
	}
	pthread_mutex_unlock(&emu_lock);
}

const struct srd_verbs_ops srd_emu_ops = {
	.name = "srd-test-emulation",
	.get_device_list = emu_get_device_list,
	.free_device_list = emu_free_device_list,
	.get_device_name = emu_get_device_name,
	.open_device = emu_open_device,
	.close_device = emu_close_device,
	.query_device = emu_query_device,
	.query_port = emu_query_port,
	.query_gid_ex = emu_query_gid_ex,
	.alloc_pd = emu_alloc_pd,
	.dealloc_pd = emu_dealloc_pd,
	.reg_mr = emu_reg_mr,
	.dereg_mr = emu_dereg_mr,
	.create_comp_channel = emu_create_comp_channel,
	.destroy_comp_channel = emu_destroy_comp_channel,
	.create_cq = emu_create_cq,
	.destroy_cq = emu_destroy_cq,
	.req_notify_cq = emu_req_notify_cq,
	.get_cq_event = emu_get_cq_event,
	.ack_cq_events = emu_ack_cq_events,
	.poll_cq = emu_poll_cq,
	.create_qp = emu_create_qp,
	.destroy_qp = emu_destroy_qp,
	.modify_qp = emu_modify_qp,
	.post_send = emu_post_send,
	.post_recv = emu_post_recv,
	.create_ah = emu_create_ah,
	.destroy_ah = emu_destroy_ah,
	.get_async_event = emu_get_async_event,
	.ack_async_event = emu_ack_async_event,
};

#endif /* HAVE_VERBS */
