/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_verbs_sys.c: the verbs calls the provider makes, bound to
 * libibverbs (struct srd_verbs_ops), and the switch a test uses to put
 * its emulated device in their place.  Thin wrappers only: the ones
 * libibverbs defines inline or as macros need a function to point at.
 * Without verbs (--without-verbs, or no libibverbs) the wire's entry
 * points say so and the UDP wire is all there is.
 */
#include "config.h"
#include "srd_verbs.h"

#include <errno.h>
#include <stddef.h>

#ifdef HAVE_VERBS

static const char *sys_get_device_name(struct ibv_device *dev)
{
	return ibv_get_device_name(dev);
}

static int sys_query_port(struct ibv_context *ctx, uint8_t port,
			  struct ibv_port_attr *attr)
{
	return ibv_query_port(ctx, port, attr);
}

static int sys_query_gid_ex(struct ibv_context *ctx, uint32_t port,
			    uint32_t index, struct ibv_gid_entry *entry)
{
	return ibv_query_gid_ex(ctx, port, index, entry, 0);
}

static struct ibv_mr *sys_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				 int access)
{
	return ibv_reg_mr(pd, addr, len, access);
}

static int sys_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_req_notify_cq(cq, solicited_only);
}

static int sys_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq, n, wc);
}

static int sys_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad)
{
	return ibv_post_send(qp, wr, bad);
}

static int sys_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad)
{
	return ibv_post_recv(qp, wr, bad);
}

const struct srd_verbs_ops srd_verbs_sys = {
	.name = "libibverbs",
	.get_device_list = ibv_get_device_list,
	.free_device_list = ibv_free_device_list,
	.get_device_name = sys_get_device_name,
	.open_device = ibv_open_device,
	.close_device = ibv_close_device,
	.query_device = ibv_query_device,
	.query_port = sys_query_port,
	.query_gid_ex = sys_query_gid_ex,
	.alloc_pd = ibv_alloc_pd,
	.dealloc_pd = ibv_dealloc_pd,
	.reg_mr = sys_reg_mr,
	.dereg_mr = ibv_dereg_mr,
	.create_comp_channel = ibv_create_comp_channel,
	.destroy_comp_channel = ibv_destroy_comp_channel,
	.create_cq = ibv_create_cq,
	.destroy_cq = ibv_destroy_cq,
	.req_notify_cq = sys_req_notify_cq,
	.get_cq_event = ibv_get_cq_event,
	.ack_cq_events = ibv_ack_cq_events,
	.poll_cq = sys_poll_cq,
	.create_qp = ibv_create_qp,
	.destroy_qp = ibv_destroy_qp,
	.modify_qp = ibv_modify_qp,
	.post_send = sys_post_send,
	.post_recv = sys_post_recv,
	.create_ah = ibv_create_ah,
	.destroy_ah = ibv_destroy_ah,
	.get_async_event = ibv_get_async_event,
	.ack_async_event = ibv_ack_async_event,
};

static const void *verbs_ops = &srd_verbs_sys;

const void *srd_verbs_ops_get(void)
{
	return verbs_ops;
}

void srd_verbs_ops_set(const void *ops)
{
	verbs_ops = ops ? ops : &srd_verbs_sys;
}

#else /* !HAVE_VERBS */

const void *srd_verbs_ops_get(void)
{
	return NULL;
}

void srd_verbs_ops_set(const void *ops)
{
	(void)ops;
}

int srd_verbs_port_list(const char *allow, int gid_index,
			struct srd_verbs_port **ports, int *count)
{
	(void)allow;
	(void)gid_index;
	*ports = NULL;
	*count = 0;
	return 0;
}

int srd_wire_verbs_open(const struct srd_wire_verbs_attr *attr,
			struct srd_wire **wire)
{
	(void)attr;
	(void)wire;
	return -ENOSYS;
}

#endif /* HAVE_VERBS */
