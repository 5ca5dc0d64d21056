/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_verbs.h: the verbs wire (UD queue pairs) and the libibverbs calls
 * it makes, as a table.
 *
 * The wire calls libibverbs only through struct srd_verbs_ops, so the
 * same wire code runs on a real device (libibverbs, loaded at run time
 * by srd_verbs_sys.c) and on the unit tests' in-process emulation of one
 * (no RDMA device on the build machines).  Every entry has libibverbs' own signature and
 * return convention.
 */
#ifndef SRD_VERBS_H
#define SRD_VERBS_H

#include <stdbool.h>

#include "srd_wire.h"

#ifdef HAVE_VERBS
#include <infiniband/verbs.h>

struct srd_verbs_ops {
	const char *name;
	struct ibv_device **(*get_device_list)(int *num);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *dev);
	struct ibv_context *(*open_device)(struct ibv_device *dev);
	int (*close_device)(struct ibv_context *ctx);
	int (*query_device)(struct ibv_context *ctx,
			    struct ibv_device_attr *attr);
	int (*query_port)(struct ibv_context *ctx, uint8_t port,
			  struct ibv_port_attr *attr);
	/* 0 and the entry; the type tells RoCE v1/v2 and IB apart */
	int (*query_gid_ex)(struct ibv_context *ctx, uint32_t port,
			    uint32_t index, struct ibv_gid_entry *entry);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len,
				 int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *c);
	int (*destroy_comp_channel)(struct ibv_comp_channel *ch);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe,
				    void *cq_ctx, struct ibv_comp_channel *ch,
				    int vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*get_cq_event)(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			    void **cq_ctx);
	void (*ack_cq_events)(struct ibv_cq *cq, unsigned int n);
	int (*poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int mask);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *a);
	int (*destroy_ah)(struct ibv_ah *ah);
	/* the context's async_fd is non-blocking: -1 when none waits */
	int (*get_async_event)(struct ibv_context *ctx,
			       struct ibv_async_event *ev);
	void (*ack_async_event)(struct ibv_async_event *ev);
};

#endif /* HAVE_VERBS */

/* The verbs calls the provider uses: libibverbs' (loaded at the first
 * call, srd_verbs_sys.c), or a test's table (set before any endpoint or
 * fi_getinfo; NULL puts libibverbs' back).  NULL without verbs: a build
 * without them, or libibverbs.so.1 absent or too old (logged at info). */
const void *srd_verbs_ops_get(void);
void srd_verbs_ops_set(const void *ops);
/* Whether SONAME loads and has every function the table needs: 0,
 * -ENOENT (it does not load), -ENOSYS (a function is missing, or a
 * build without verbs).  Changes nothing: for tests. */
int srd_verbs_sys_probe(const char *soname);

/* One usable RDMA port: an active port with a GID srd can use. */
struct srd_verbs_port {
	char dev_name[64];		/* "mlx5_0" */
	uint8_t port;			/* 1-based */
	int gid_index;
	uint8_t gid[16];
	uint16_t lid;			/* InfiniBand: the port's LID */
	bool roce;			/* Ethernet link layer (RoCE) */
	bool roce_v2;			/* UDP-encapsulated: flow labels spray */
	uint32_t mtu;			/* active MTU, bytes */
	char pci_bus_id[32];		/* "0000:17:00.0", or "" */
};

/* Every usable port (active, with a GID) of every device named in the
 * comma-separated allow list (NULL or "": all); gid_index >= 0 forces
 * that GID table entry.  0 and count 0 without verbs or devices.  The
 * caller frees *ports. */
int srd_verbs_port_list(const char *allow, int gid_index,
			struct srd_verbs_port **ports, int *count);

struct srd_wire_verbs_attr {
	const struct srd_verbs_port *port;
	uint16_t npaths;		/* address handles (flow labels) */
	uint16_t nqps;			/* send QPs (1..npaths) */
	uint32_t rx_depth;		/* posted receive buffers */
	uint32_t tx_depth;		/* send slots per QP */
	uint32_t mtu;			/* cap; 0: the port's */
};
/* -ENOSYS in a build without verbs. */
int srd_wire_verbs_open(const struct srd_wire_verbs_attr *attr,
			struct srd_wire **wire);


/* The Q_Key every srd UD QP uses (the high bit clear: not privileged).
 * It only keeps other UD users' datagrams out by mistake: it is public,
 * and any process on the fabric may send with it.  A per-job Q_Key would
 * be no secret either (every peer must know it, and it travels in clear
 * in every packet), so the receiver treats a datagram's source as the
 * device reports it and the transport decides whether to believe it. */
#define SRD_VERBS_QKEY		0x53524400u

#endif /* SRD_VERBS_H */
