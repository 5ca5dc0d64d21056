/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_nccl_cm.c - sft_nccl's connection manager, after the plugin's
 * src/cm: its CM buffers (registered in blocks of 16, 32 receives kept
 * posted from FI_ADDR_UNSPEC and re-posted), listen (own address into
 * the data AV, the handle), connect and accept (untagged messages on
 * the CM endpoint, a tag per receive communicator) and the checks of
 * every CM message.  Must not touch: the data path and the CQ loop
 * (sft_nccl.c), which hand it its completions.
 */
#include "sft_nccl.h"

#include <stdlib.h>
#include <string.h>

/* A free CM buffer; a new registered block of 16 when none is. */
static struct nc_cm_buf *nc_cm_alloc(struct nc *n)
{
	int k, b = n->ncm_blocks;
	size_t sz = NC_CM_BLOCK * sizeof(struct nc_cm_msg);

	for (k = 0; k < b * NC_CM_BLOCK; k++)
		if (!n->cm[k].used)
			goto found;
	if (b == NC_CM_BLOCKS)
		sft_die("more than %d CM buffers in use", k);
	n->cm_mem[b] = nc_alloc(sz);
	memset(n->cm_mem[b], 0, sz);
	n->cm_mr[b] = nc_mr_reg(n, n->cm_mem[b], sz, FI_SEND | FI_RECV,
				n->cm_ep);
	for (k = 0; k < NC_CM_BLOCK; k++) {
		struct nc_cm_buf *c = &n->cm[b * NC_CM_BLOCK + k];

		c->msg = (struct nc_cm_msg *)n->cm_mem[b] + k;
		c->desc = fi_mr_desc(n->cm_mr[b]);
	}
	n->ncm_blocks++;
	k = b * NC_CM_BLOCK;
found:
	n->cm[k].used = 1;
	return &n->cm[k];
}

/* Post (or re-post) a CM operation; -FI_EAGAIN leaves it for the
 * progress loop, as the plugin's pending queue does. */
static void nc_cm_post(struct nc *n, struct nc_cm_buf *b)
{
	ssize_t ret;

	if (b->req.kind == NC_CM_RX)
		ret = fi_recv(n->cm_ep, b->msg, sizeof(*b->msg), b->desc,
			      FI_ADDR_UNSPEC, &b->req.ctx);
	else
		ret = fi_send(n->cm_ep, b->msg, sizeof(*b->msg), b->desc,
			      b->req.dest, &b->req.ctx);
	b->req.retry = ret == -FI_EAGAIN;
	if (ret && ret != -FI_EAGAIN)
		sft_die("CM %s = %zd (%s)", b->req.kind == NC_CM_RX ?
			"fi_recv" : "fi_send", ret, fi_strerror((int)-ret));
	if (!ret)
		b->req.posted = 1;
}

static void nc_cm_post_rx(struct nc *n, struct nc_cm_buf *b)
{
	memset(b->msg, 0, sizeof(*b->msg));
	nc_track(n, &b->req, NC_CM_RX, NULL);
	nc_cm_post(n, b);
}

static void nc_cm_send(struct nc *n, struct nc_cm_buf *b, void *owner,
		       fi_addr_t dest)
{
	nc_track(n, &b->req, NC_CM_TX, owner);
	b->req.dest = dest;
	nc_cm_post(n, b);
}

void nc_retry(struct nc *n)
{
	int k;

	for (k = 0; k < n->ncm_blocks * NC_CM_BLOCK; k++)
		if (n->cm[k].used && n->cm[k].req.retry)
			nc_cm_post(n, &n->cm[k]);
}

/* Listen: own data address into the data AV (the plugin's flush reads
 * target it); the handle names the CM endpoint. */
void nc_listen(struct nc *n, struct nc_handle *h)
{
	char name[NC_ADDR_MAX];
	size_t len, cm_len;
	int k;

	for (k = 0; k < NC_CM_NRX; k++)
		nc_cm_post_rx(n, nc_cm_alloc(n));
	nc_getname(n->ep, name, &len, "data endpoint");
	n->self = nc_av_insert(n->av, name, "own data endpoint");
	n->listener_id = n->next_cm_id++;
	memset(h, 0, sizeof(*h));
	nc_getname(n->cm_ep, h->cm_name, &cm_len, "CM endpoint");
	h->comm_id = n->listener_id;
	printf("addresses: data endpoint %zu bytes, CM endpoint %zu bytes "
	       "(<= %d); own address inserted as fi_addr %llu\n", len, cm_len,
	       NC_ADDR_MAX, (unsigned long long)n->self);
}

static void nc_cm_fill(struct nc *n, struct nc_cm_msg *m, uint32_t type,
		       uint64_t local_id, uint64_t remote_id)
{
	size_t len;

	memset(m, 0, sizeof(*m));
	m->type = type;
	m->local_id = local_id;
	m->remote_id = remote_id;
	nc_getname(n->cm_ep, m->cm_name, &len, "CM endpoint");
	m->cm_namelen = len;
	nc_getname(n->ep, m->info.ep_name, &len, "data endpoint");
	m->info.ep_namelen = len;
}

void nc_connect(struct nc *n, struct nc_scomm *s,
		const struct nc_handle *peer)
{
	struct nc_cm_buf *b = nc_cm_alloc(n);

	s->id = n->next_cm_id++;
	s->cm_dest = nc_av_insert(n->cm_av, peer->cm_name,
				  "peer's listener (CM AV)");
	nc_cm_fill(n, b->msg, NC_CM_CONNECT, s->id, peer->comm_id);
	nc_cm_send(n, b, s, s->cm_dest);
}

/* A connect message for our listener: a receive communicator with the
 * next tag, answered with our data endpoint name and that tag. */
static void nc_accept(struct nc *n, const struct nc_cm_msg *m)
{
	struct nc_cm_buf *b;
	struct nc_rcomm *r;

	if (m->remote_id != n->listener_id)
		sft_die("connect message for listener %llu, ours is %llu",
			(unsigned long long)m->remote_id,
			(unsigned long long)n->listener_id);
	if (n->naccepted == n->ncomm)
		sft_die("connect message %d, expected %d", n->naccepted + 1,
			n->ncomm);
	if (!m->info.ep_namelen || m->info.ep_namelen > NC_ADDR_MAX)
		sft_die("connect message: ep_namelen %llu",
			(unsigned long long)m->info.ep_namelen);
	r = &n->r[n->naccepted++];
	r->sender_id = m->local_id;
	r->cm_dest = nc_av_insert(n->cm_av, m->cm_name,
				  "connector's CM endpoint");
	r->remote = nc_av_insert(n->av, m->info.ep_name,
				 "sender's data endpoint");
	if (n->next_tag + 1 >= n->max_tag)
		sft_die("out of tags (max %llu)",
			(unsigned long long)n->max_tag);
	r->tag = ++n->next_tag;
	if (n->gdr) {	/* the plugin's flush page per receive comm */
		r->flush_buf = nc_alloc(4096);
		r->flush_mr = nc_mr_reg(n, r->flush_buf, 4096,
					nc_data_access(n), n->ep);
	}
	b = nc_cm_alloc(n);
	nc_cm_fill(n, b->msg, NC_CM_RESPONSE, 0, r->sender_id);
	b->msg->info.ep_namelen = NC_ADDR_MAX;	/* the plugin sends 56 */
	b->msg->info.tag = r->tag;
	nc_cm_send(n, b, r, r->cm_dest);
	/* with auto progress the plugin hands the comm out once posted */
	if (n->auto_progress && b->req.posted)
		r->ready = 1;
}

static void nc_answered(struct nc *n, const struct nc_cm_msg *m)
{
	struct nc_scomm *s = NULL;
	int k;

	for (k = 0; k < n->ncomm; k++)
		if (n->s[k].id == m->remote_id)
			s = &n->s[k];
	if (!s)
		sft_die("CM response for connector %llu, which we never had",
			(unsigned long long)m->remote_id);
	if (s->answered)
		sft_die("second CM response for connector %llu",
			(unsigned long long)s->id);
	if (m->local_id != 0 || m->info.ep_namelen != NC_ADDR_MAX ||
	    !m->info.tag || m->info.tag >= n->max_tag)
		sft_die("CM response: local_id %llu, ep_namelen %llu, tag %llu",
			(unsigned long long)m->local_id,
			(unsigned long long)m->info.ep_namelen,
			(unsigned long long)m->info.tag);
	s->tag = m->info.tag;
	s->remote = nc_av_insert(n->av, m->info.ep_name,
				 "receiver's data endpoint");
	s->answered = 1;
}

void nc_cm_rx_done(struct nc *n, struct nc_cm_buf *b,
		   const struct fi_cq_tagged_entry *e)
{
	struct nc_cm_msg m = *b->msg;
	struct sft_expect x = { .ctx = &b->req.ctx, .flags = FI_RECV | FI_MSG,
				.check_len = 1, .len = sizeof(m) };

	sft_check_entry(e, &x, "CM receive");
	if (!m.cm_namelen || m.cm_namelen > NC_ADDR_MAX)
		sft_die("CM message: cm_namelen %llu",
			(unsigned long long)m.cm_namelen);
	nc_cm_post_rx(n, b);	/* re-posted, as the plugin does */
	if (m.type == NC_CM_CONNECT)
		nc_accept(n, &m);
	else if (m.type == NC_CM_RESPONSE)
		nc_answered(n, &m);
	else
		sft_die("CM message of type %u", m.type);
}

void nc_cm_tx_done(struct nc *n, struct nc_cm_buf *b,
		   const struct fi_cq_tagged_entry *e)
{
	struct sft_expect x = { .ctx = &b->req.ctx, .flags = FI_SEND | FI_MSG };
	void *owner = b->req.owner;
	int k;

	sft_check_entry(e, &x, "CM send");
	b->used = 0;
	for (k = 0; k < n->ncomm; k++) {
		if (owner == &n->s[k])
			n->s[k].delivered = 1;
		if (owner == &n->r[k])
			n->r[k].ready = 1;
	}
}

void nc_close_cm_mrs(struct nc *n)
{
	int b;

	for (b = 0; b < n->ncm_blocks; b++) {
		nc_close(&n->cm_mr[b]->fid);
		free(n->cm_mem[b]);
	}
}
