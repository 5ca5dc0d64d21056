/*
 * srd.h: the provider's objects and their prototypes.
 *
 * Locking: one mutex per domain protects every object of the domain (AV,
 * CQ, counters, endpoints, their transports).  API calls take it; so does
 * the domain's progress thread, which keeps transports alive (acks,
 * retransmits, peer timeouts) while the application is away.  Under
 * FI_THREAD_DOMAIN with the progress thread off, the lock is skipped.
 * The wire format is in srd_proto.h only.
 */
#ifndef SRD_H
#define SRD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include "srd_fi_compat.h"
#include "srd_list.h"
#include "srd_hmap.h"
#include "srd_pool.h"
#include "srd_tp.h"
#include "srd_wire.h"
#include "srd_verbs.h"

#define SRD_PROV_NAME		"srd"
#define SRD_PROV_VERSION	FI_VERSION(0, 1)

#define SRD_IOV_LIMIT		4
#define SRD_MAX_MSG_SIZE	(1ULL << 40)
#define SRD_CQ_DATA_SIZE	8
#define SRD_MR_KEY_SIZE		8
#define SRD_TX_SIZE_DEFAULT	1024
#define SRD_RX_SIZE_DEFAULT	1024
#define SRD_SIZE_MAX		65536	/* largest tx/rx queue accepted */
#define SRD_CQ_SIZE_DEFAULT	1024
/* What an unexpected message costs the store besides its data (the
 * entry, the bookkeeping): a flood of rendezvous requests, which carry
 * no data, is bounded too. */
#define SRD_UNEXP_ENTRY_COST	256
#define SRD_MIN_MULTI_RECV_DEFAULT 64
#define SRD_RMA_IOV_LIMIT	1	/* remote segments per RMA/atomic */
/* Operand bytes per atomic: twice that (compare) plus headers fits in
 * any IPv6 path (1280 bytes), so an atomic is always one packet. */
#define SRD_ATOMIC_MAX_BYTES	512

extern struct fi_provider srd_prov;

#define SRD_WARN(subsys, ...) FI_WARN(&srd_prov, subsys, __VA_ARGS__)
#define SRD_INFO(subsys, ...) FI_INFO(&srd_prov, subsys, __VA_ARGS__)
#define SRD_DBG(subsys, ...)  FI_DBG(&srd_prov, subsys, __VA_ARGS__)

/* Provider parameters (FI_SRD_*), read once at load; see srd_init.c. */
struct srd_params {
	char *iface;			/* comma-separated allow list */
	int paths;
	size_t inject_size;
	size_t eager_max;		/* largest message sent without rendezvous */
	size_t rdv_window;		/* bytes one CTS grants */
	size_t unexp_max_bytes;		/* unexpected store per endpoint */
	int tx_window;			/* packets in flight per peer */
	int rto_min_us;
	int peer_timeout_ms;
	int ack_delay_us;
	int cc_target_us;		/* delay target over base RTT; 0: no CC */
	int cwnd_init;			/* packets */
	int path_step_us;		/* path steering by RTT; 0: off */
	int stats;			/* bool: print counters at close */
	char *stats_dir;		/* snapshot files for srd_stat */
	int stats_interval_ms;
	int progress_thread;		/* bool */
	int progress_idle_us;		/* app silence before the thread acts */
	size_t sockbuf;			/* socket buffer bytes requested */
	int max_peers;			/* transport peers per endpoint */
	char *wire;			/* "auto", "udp" or "verbs" */
	char *verbs_device;		/* comma-separated allow list */
	int verbs_gid_index;		/* -1: srd picks */
	int verbs_qps;			/* send QPs per endpoint */
	int verbs_rx_depth;		/* posted receive buffers */
	int verbs_tx_depth;		/* send slots per QP */
	char *gpu_pci;			/* order domains by distance to it */
};
extern struct srd_params srd_params;

/* --- interfaces (srd_iface.c) ------------------------------------------ */
enum srd_wire_kind {
	SRD_WIRE_UDP,
	SRD_WIRE_VERBS,
};

/* A domain: an IP interface (the UDP wire) or an RDMA port (verbs). */
struct srd_iface {
	char name[64];			/* "eth0", or "mlx5_0:1" */
	enum srd_wire_kind wire;
	struct srd_verbs_port vport;	/* verbs: the port */
	union srd_wire_addr addr;
	union srd_wire_addr netmask;
	char subnet[80];		/* the fabric name: "a.b.c.d/len";
					 * verbs: "verbs:" + subnet or GID
					 * prefix */
	uint32_t mtu;
	bool loopback;
	int locality;			/* 0 = near this process's CPUs */
};
int srd_iface_list(struct srd_iface **ifaces, int *count);
uint32_t srd_domain_atomic_max(const struct srd_iface *iface);
const struct srd_iface *srd_iface_find(const struct srd_iface *ifaces,
				       int count, const char *name, int family);

/* --- attributes and getinfo (srd_attr.c, srd_init.c) ------------------- */
int srd_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
int srd_info_build(uint32_t version, const struct fi_info *hints,
		   const struct srd_iface *iface, struct fi_info **info);
bool srd_progress_auto_ok(void);

/* --- fabric / domain ---------------------------------------------------- */
struct srd_fabric {
	struct fid_fabric fabric_fid;
	char *name;
	uint32_t api_version;
	int refs;
	pthread_mutex_t lock;
};

struct srd_progress;

struct srd_domain {
	struct fid_domain domain_fid;
	struct srd_fabric *fabric;
	struct fi_info *info;
	struct srd_iface iface;
	pthread_mutex_t lock;
	bool use_lock;
	int refs;
	struct srd_dlist eps;		/* enabled endpoints */
	struct srd_hmap mr_map;		/* MR key -> srd_mr */
	struct srd_progress *progress;
	uint32_t api_version;
	/* operand bytes one atomic carries: it is always one packet, so a
	 * small verbs MTU makes it smaller (srd_domain_atomic_max) */
	uint32_t atomic_max_bytes;
};

static inline void srd_domain_lock(struct srd_domain *dom)
{
	if (dom->use_lock)
		pthread_mutex_lock(&dom->lock);
}
static inline void srd_domain_unlock(struct srd_domain *dom)
{
	if (dom->use_lock)
		pthread_mutex_unlock(&dom->lock);
}

int srd_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
int srd_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);

/* --- wait helper (srd_wait.c) ------------------------------------------- */
struct srd_wait {
	int epfd;
	int efd;			/* eventfd: signals and completions */
};
int srd_wait_init(struct srd_wait *wait);
void srd_wait_fini(struct srd_wait *wait);
int srd_wait_add_fd(struct srd_wait *wait, int fd);
void srd_wait_del_fd(struct srd_wait *wait, int fd);
void srd_wait_signal(struct srd_wait *wait);
void srd_wait_drain(struct srd_wait *wait);
/* Sleeps until an fd is readable or deadline_ns (absolute, monotonic;
 * UINT64_MAX: forever).  Returns >0 on events, 0 on timeout. */
int srd_wait_until(int epfd, uint64_t deadline_ns);
/* Absolute deadline for an fi_*_sread-style timeout in ms (-1: none). */
uint64_t srd_wait_deadline_ms(int timeout_ms);
/* FI_GETWAIT / FI_GETWAITOBJ for an object with this wait set. */
int srd_wait_control(struct srd_wait *wait, enum fi_wait_obj obj,
		     int command, void *arg);
/* fi_*_strerror: the text of a (positive or negative) error number. */
const char *srd_strerror_buf(int prov_errno, char *buf, size_t len);

struct srd_ep;
/* The endpoints bound to a CQ or counter: reading it progresses them,
 * and their sockets are in its wait set. */
struct srd_ep_set {
	struct srd_ep **eps;
	int count;
};
int srd_ep_set_add(struct srd_ep_set *set, struct srd_wait *wait,
		   struct srd_ep *ep);
void srd_ep_set_del(struct srd_ep_set *set, struct srd_wait *wait,
		    struct srd_ep *ep);
void srd_ep_set_progress(const struct srd_ep_set *set);
/* One sleep of a blocking read, with the domain lock held on entry and
 * exit (dropped while asleep): until a socket or the signal fd is
 * readable, the transports' next deadline, or deadline_ns. */
void srd_wait_sleep(struct srd_domain *dom, struct srd_wait *wait,
		    int *sleepers, const struct srd_ep_set *set,
		    uint64_t deadline_ns);

/* --- AV ------------------------------------------------------------------ */
struct srd_av {
	struct fid_av av_fid;
	struct srd_domain *dom;
	int addr_family;
	size_t addrlen;
	union srd_wire_addr *table;
	uint8_t *valid;
	size_t count;
	size_t cap;
	struct srd_hmap rev;		/* wire address -> entry (srd_av_node) */
	struct srd_av_node *nodes;
	uint64_t gen;			/* bumped on every insert/remove */
	int refs;
	uint64_t flags;			/* FI_EVENT: inserts report to eq */
	struct fid_eq *eq;
};
int srd_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);
const union srd_wire_addr *srd_av_addr(struct srd_av *av, fi_addr_t addr);
fi_addr_t srd_av_reverse(struct srd_av *av, const union srd_wire_addr *addr);

/* --- CQ / counters / EQ -------------------------------------------------- */
struct srd_ep;

struct srd_cq_comp {
	struct fi_cq_tagged_entry entry;
	fi_addr_t src;
};

struct srd_cq_err {
	struct srd_dlist entry;
	struct fi_cq_err_entry err;
	fi_addr_t src;
};

struct srd_cq {
	struct fid_cq cq_fid;
	struct srd_domain *dom;
	enum fi_cq_format format;
	enum fi_wait_obj wait_obj;
	struct srd_cq_comp *ring;
	size_t ring_cap;		/* a power of two; grows, never drops */
	size_t size;			/* fi_cq_attr size (or the default) */
	size_t head, tail;
	struct srd_dlist errs;
	struct srd_wait wait;
	struct srd_ep_set eps;		/* bound endpoints */
	int refs;
	int sleepers;			/* threads in sread */
	bool fd_exported;		/* FI_GETWAIT: someone polls our fd */
	bool signaled;
};
int srd_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
void srd_cq_write(struct srd_cq *cq, void *context, uint64_t flags,
		  size_t len, void *buf, uint64_t data, uint64_t tag,
		  fi_addr_t src);
void srd_cq_write_err(struct srd_cq *cq, void *context, uint64_t flags,
		      int err, int prov_errno, size_t len, size_t olen,
		      uint64_t data, uint64_t tag, fi_addr_t src);
int srd_cq_trywait(struct srd_cq *cq);
/* Room for a completion that a peer, not a post, causes (a remote write
 * with CQ data): a CQ the application does not read pushes back on the
 * peer (receiver-not-ready) instead of growing without bound.  Local
 * operations' completions always go in: tx_size and rx_size bound them. */
static inline bool srd_cq_has_room(const struct srd_cq *cq)
{
	return cq->tail - cq->head < cq->size;
}

struct srd_cntr {
	struct fid_cntr cntr_fid;
	struct srd_domain *dom;
	uint64_t value;
	uint64_t err;
	enum fi_wait_obj wait_obj;
	struct srd_wait wait;
	struct srd_ep_set eps;		/* bound endpoints */
	int refs;
	int sleepers;			/* threads in fi_cntr_wait */
	bool fd_exported;		/* FI_GETWAIT: someone polls our fd */
};
int srd_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context);
void srd_cntr_inc(struct srd_cntr *cntr);
void srd_cntr_inc_err(struct srd_cntr *cntr);

int srd_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
int srd_eq_report(struct fid_eq *eq, uint32_t event, const void *entry,
		  size_t len, bool is_err);
void srd_eq_ref(struct fid_eq *eq);
void srd_eq_unref(struct fid_eq *eq);

/* --- MR ------------------------------------------------------------------ */
struct srd_mr {
	struct fid_mr mr_fid;
	struct srd_domain *dom;
	struct srd_hnode hnode;
	uint64_t access;
	struct iovec iov[SRD_IOV_LIMIT];
	size_t iov_count;
	struct srd_cntr *cntr_read;	/* fi_mr_bind(FI_REMOTE_READ) */
	struct srd_cntr *cntr_write;	/* fi_mr_bind(FI_REMOTE_WRITE) */
};
int srd_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context);
extern struct fi_ops_mr srd_mr_ops;
/* fi_query_atomic (srd_atomic.c) */
int srd_query_atomic(const struct srd_domain *dom, enum fi_datatype dt,
		     enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags);

/* --- endpoint ------------------------------------------------------------ */
enum srd_cntr_kind {
	SRD_CNTR_SEND,
	SRD_CNTR_RECV,
	SRD_CNTR_READ,
	SRD_CNTR_WRITE,
	SRD_CNTR_REMOTE_READ,
	SRD_CNTR_REMOTE_WRITE,
	SRD_CNTR_KINDS,
};

/* Per-peer message state; the transport's part comes first. */
struct srd_peer {
	struct srd_tp_peer tp;
	uint32_t tx_msg_id;		/* next message number to send */
	uint32_t rx_msg_id;		/* next message number to start */
	struct srd_dlist reorder;	/* held packets of later messages */
	struct srd_dlist txes;		/* live sends to this peer */
	size_t reorder_bytes;
	bool reorder_stalled;		/* a held packet waits for resources */
	bool watch_mark;		/* srd_peer_watch.c: a receive waits on it */
	fi_addr_t fi_addr;		/* cached AV index, see av_gen */
	uint64_t av_gen;
};

struct srd_ep {
	struct fid_ep ep_fid;
	struct srd_domain *dom;
	struct srd_dlist dom_entry;
	uint64_t caps;
	bool directed_msg;		/* receives matched by source: */
	bool directed_tagged;		/*   see ep_init_directed */
	bool directed_exact;		/* FI_ADDR_UNSPEC refused there */
	struct srd_av *av;
	struct srd_cq *tx_cq;
	struct srd_cq *rx_cq;
	bool tx_selective;
	bool rx_selective;
	struct srd_cntr *cntrs[SRD_CNTR_KINDS];
	struct fid_eq *eq;
	uint64_t tx_op_flags;
	uint64_t rx_op_flags;
	size_t tx_size;
	size_t rx_size;
	size_t inject_size;
	size_t min_multi_recv;
	bool enabled;
	uint64_t last_app_ns;		/* the application's last call in */
	bool thread_watch;		/* the progress thread polls our socket */
	union srd_wire_addr src_addr;
	struct srd_wire *wire;
	struct srd_tp tp;
	uint32_t pkt_payload_max;	/* message bytes per MEDIUM/DATA packet */

	struct srd_pool txe_pool;	/* operations, and answers to peers */
	struct srd_pool bounce_pool;	/* inject_size copies (srd_txe_bounce) */
	size_t tx_app;			/* txes the application's posts hold */
	struct srd_pool rxe_pool;
	struct srd_pool pke_pool;
	struct srd_dlist tx_pending;	/* txes waiting for packet entries */
	struct srd_dlist cts_pending;	/* rxes waiting to send a CTS */
	struct srd_dlist posted_msg;
	struct srd_dlist posted_tagged;
	struct srd_dlist unexp_msg;
	struct srd_dlist unexp_tagged;
	struct srd_hmap inprog;		/* (peer, msg_id) -> rxe */
	struct srd_pool tgt_pool;	/* RMA writes arriving (srd_rma_tgt) */
	struct srd_hmap rma_tgts;	/* (peer, tx_id) -> srd_rma_tgt */
	size_t unexp_bytes;		/* unexpected store, entries charged */
	size_t reorder_bytes;		/* packets held for order, all peers */
	size_t unexp_peak;		/* most unexp + reorder bytes seen */
	uint32_t reorder_stalled;	/* peers with reorder_stalled set */
	uint64_t rx_drop_malformed;
	uint64_t watch_next;		/* next look at waiting peers, or MAX */
	uint64_t pings_sent;
	char *stats_path;		/* srd_stats.c: snapshot file, or NULL */
	uint64_t stats_next_ns;
};

static inline void srd_unexp_note_peak(struct srd_ep *ep)
{
	if (ep->unexp_bytes + ep->reorder_bytes > ep->unexp_peak)
		ep->unexp_peak = ep->unexp_bytes + ep->reorder_bytes;
}

static inline struct srd_ep *srd_ep_of(struct fid_ep *ep_fid)
{
	return srd_container_of(ep_fid, struct srd_ep, ep_fid);
}
static inline struct srd_peer *srd_peer_of(struct srd_tp_peer *tp_peer)
{
	return srd_container_of(tp_peer, struct srd_peer, tp);
}

/* Test seam: when set, endpoints open their wire through it instead of
 * UDP sockets (the fuzzer runs whole endpoints over the in-memory
 * network).  NULL in every normal process; nothing sets it at runtime. */
extern int (*srd_wire_open_override)(const struct srd_wire_udp_attr *attr,
				     struct srd_wire **wire);
int srd_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);
/* One progress step for an endpoint; caller holds the domain lock. */
int srd_ep_progress(struct srd_ep *ep);
uint64_t srd_ep_next_deadline(struct srd_ep *ep);
fi_addr_t srd_peer_fi_addr(struct srd_ep *ep, struct srd_peer *peer);
struct srd_peer *srd_ep_peer(struct srd_ep *ep, fi_addr_t addr);

/* --- statistics (srd_stats.c) ---------------------------------------------- */
int srd_stats_ops_open(const char *name, void **ops);
void srd_stats_ep_open(struct srd_ep *ep);	/* once the wire is up */
void srd_stats_tick(struct srd_ep *ep);
void srd_stats_ep_close(struct srd_ep *ep);	/* domain lock held */
void srd_ep_cntr_inc(struct srd_ep *ep, enum srd_cntr_kind kind, int err);

void srd_progress_note_app(struct srd_domain *dom, struct srd_ep *ep);

/* Every data-path post: under the domain lock, noted as application
 * activity; a post refused for lack of entries progresses the endpoint
 * so that the caller's retry finds room. */
static inline void srd_ep_post_enter(struct srd_ep *ep)
{
	srd_domain_lock(ep->dom);
	srd_progress_note_app(ep->dom, ep);
}
/* Posts progress the endpoint when it is full, and when it has not been
 * progressed for SRD_EP_POST_POLL_NS: an application posting a long
 * burst of large sends would otherwise leave its peers' acks and RMA
 * responses unread until their timers expire. */
#define SRD_EP_POST_POLL_NS	(50 * SRD_NS_PER_US)
static inline ssize_t srd_ep_post_leave(struct srd_ep *ep, ssize_t ret)
{
	/* last_app_ns: the clock post_enter read (the UDP wire's clock,
	 * which polled_ns is on too) */
	if (ret == -FI_EAGAIN || (ep->enabled &&
	    (int64_t)(ep->last_app_ns - ep->tp.polled_ns) >
	    (int64_t)SRD_EP_POST_POLL_NS))
		srd_ep_progress(ep);
	srd_domain_unlock(ep->dom);
	return ret;
}

extern struct fi_ops_msg srd_msg_ops;
extern struct fi_ops_tagged srd_tagged_ops;
extern struct fi_ops_rma srd_rma_ops;
extern struct fi_ops_atomic srd_atomic_ops;
extern struct fi_ops_cm srd_cm_ops;

/* --- progress thread (srd_progress.c) ------------------------------------ */
void srd_progress_stop(struct srd_domain *dom);
void srd_progress_stop_all(void);
int srd_progress_add_ep(struct srd_domain *dom, struct srd_ep *ep);
void srd_progress_del_ep(struct srd_domain *dom, struct srd_ep *ep);

/* --- no-op ops (srd_ops_none.c) ------------------------------------------ */
int srd_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int srd_no_control(struct fid *fid, int command, void *arg);
int srd_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context);

#endif /* SRD_H */
