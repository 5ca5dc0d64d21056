/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd.h: the provider's libfabric objects (fabric, domain, AV, CQ,
 * counter, EQ, MR, endpoint) and their prototypes; the message layer's
 * state is in msg/srd_msg.h, which the endpoint embeds.
 *
 * Locking: each object has its own lock, so threads driving different
 * endpoints of one domain never wait for each other.  An endpoint's lock
 * guards its message layer and transport (posts and progress take it);
 * the domain's MR map is a reader-writer lock that every holder of an
 * endpoint lock also holds for reading (an RMA target keeps pointers
 * into regions while it works; registration and close write); a CQ's,
 * counter's and AV's locks guard only their own state and are taken
 * last, for a few instructions.  The order, never reversed except by
 * trylock: CQ/counter endpoint set -> endpoint -> MR map -> CQ, counter,
 * AV, domain.  Progress that finds an endpoint's lock taken skips it
 * (whoever holds it is progressing or posting), so pollers never queue
 * behind one another.  The domain lock guards its endpoint list, which
 * the domain's progress thread walks while the application is away, and
 * so does a poller whose CQ came up empty or that reads a counter
 * (srd_progress_stale, which takes it by trylock); under it both take
 * an endpoint, and the MR map's read lock with it, by trylock only
 * (srd_ep_trylock), since fi_enable holds an endpoint and the map while
 * it waits for the domain lock.
 * Under FI_THREAD_DOMAIN with the progress thread off, no lock is taken.
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
#include "srd_log.h"
#include "srd_list.h"
#include "srd_hmap.h"
#include "srd_pool.h"
#include "srd_heap.h"
#include "srd_msg.h"
#include "srd_verbs.h"

#define SRD_PROV_NAME		"srd"
/* configure.ac's AC_INIT version, MAJOR.MINOR (config.h) */
#define SRD_PROV_VERSION	FI_VERSION(SRD_VERSION_MAJOR, SRD_VERSION_MINOR)

#define SRD_CQ_DATA_SIZE	8
#define SRD_MR_KEY_SIZE		8
#define SRD_TX_SIZE_DEFAULT	1024
#define SRD_RX_SIZE_DEFAULT	1024
#define SRD_SIZE_MAX		65536	/* largest tx/rx queue accepted */
#define SRD_CQ_SIZE_DEFAULT	1024
#define SRD_MIN_MULTI_RECV_DEFAULT 64

#include "srd_params.h"

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
	int virt;			/* enum srd_iface_virt */
	int locality;			/* 0 = near this process's CPUs */
	/* A multi-rail domain (FI_SRD_IFACE "a+b", spec 5.16): one UDP
	 * path set per interface, nearest the process first; rail 0's
	 * address is addr, its subnet the fabric.  0: one interface. */
	uint8_t nrails;
	char rail_name[SRD_WIRE_RAILS_MAX][16];
	union srd_wire_addr rail_addr[SRD_WIRE_RAILS_MAX];
};

/* What an IP interface is, for its place in the order: container and VM
 * networks (docker0, virbr0, veth*: the same addresses on every host)
 * after other software interfaces (bonds, VLANs, bridges), those after
 * network devices; unless FI_SRD_IFACE is set (then all are DEVICE). */
enum srd_iface_virt {
	SRD_IFACE_DEVICE,		/* /sys/class/net/NAME/device exists */
	SRD_IFACE_SOFTWARE,		/* no device behind it */
	SRD_IFACE_GUESTNET,		/* a container/VM network by its name */
};
int srd_iface_virt_of(const char *name, bool has_device, bool named);
/* qsort order of interfaces: loopback last, then by virt, locality,
 * IPv4 before IPv6, name. */
int srd_iface_cmp(const void *a, const void *b);
int srd_iface_list(struct srd_iface **ifaces, int *count);
const struct srd_iface *srd_iface_find(const struct srd_iface *ifaces,
				       int count, const char *name, int family);

/* --- attributes and getinfo (srd_attr.c, srd_init.c) ------------------- */
int srd_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
/* Records why hints are refused (srd_getinfo logs it at debug);
 * returns -FI_ENODATA. */
int srd_info_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *srd_info_refusal(void);
void srd_info_refusal_clear(void);
/* srd_nic.c: fi_info->nic of a domain's interface (sysfs; _at: under
 * sys_root instead of /sys) */
int srd_nic_build(const struct srd_iface *iface, struct fid_nic **out);
int srd_nic_build_at(const struct srd_iface *iface, const char *sys_root,
		     struct fid_nic **out);
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

/* What objects written by different threads are aligned to (srd_ep's
 * lock): x86-64's and most arm64 cores' cache line. */
#define SRD_CACHE_LINE	64

/* A mutex that objects of a lock-free domain (FI_THREAD_DOMAIN, no
 * progress thread) skip.  Adaptive: the sections are short, so a
 * contender spins a little before it sleeps, and a thread that polls in
 * a loop cannot take the lock back again and again while the one it
 * woke is still getting onto a CPU. */
struct srd_lock {
	pthread_mutex_t m;
	bool on;
	int wanted;		/* threads in srd_lock_acquire_spin's wait */
};
void srd_lock_init(struct srd_lock *l, bool on);
void srd_lock_fini(struct srd_lock *l);
static inline void srd_lock_acquire(struct srd_lock *l)
{
	if (l->on)
		pthread_mutex_lock(&l->m);
}
static inline void srd_lock_release(struct srd_lock *l)
{
	if (l->on)
		pthread_mutex_unlock(&l->m);
}
/* For a lock whose holder may keep it for a whole progress step (an
 * endpoint's), or that threads polling one CQ take in turn (a CQ's
 * reads and writes): spins up to SRD_LOCK_SPIN_NS before it sleeps,
 * since a sleeper's wake-up (tens of microseconds on a VM) costs more
 * than most steps take; while it waits on an endpoint's lock,
 * srd_lock_try_unwanted refuses the
 * opportunistic takers (pollers that would only progress), so a post
 * waits for one step at most, not for a poller that keeps re-taking
 * the lock. */
#define SRD_LOCK_SPIN_NS	(50 * SRD_NS_PER_US)
void srd_lock_acquire_slow(struct srd_lock *l);
static inline void srd_lock_acquire_spin(struct srd_lock *l)
{
	if (l->on && pthread_mutex_trylock(&l->m))
		srd_lock_acquire_slow(l);
}
static inline bool srd_lock_try_unwanted(struct srd_lock *l)
{
	if (!l->on)
		return true;
	if (__atomic_load_n(&l->wanted, __ATOMIC_RELAXED))
		return false;
	return !pthread_mutex_trylock(&l->m);
}
/* A reader-writer lock whose writers go first (a reader that loops
 * cannot starve a close), skipped like srd_lock. */
struct srd_rwlock {
	pthread_rwlock_t rw;
	bool on;
};
int srd_rwlock_init(struct srd_rwlock *l, bool on);
void srd_rwlock_fini(struct srd_rwlock *l);
static inline void srd_rwlock_read(struct srd_rwlock *l)
{
	if (l->on)
		pthread_rwlock_rdlock(&l->rw);
}
static inline bool srd_rwlock_try_read(struct srd_rwlock *l)
{
	return !l->on || !pthread_rwlock_tryrdlock(&l->rw);
}
static inline void srd_rwlock_write(struct srd_rwlock *l)
{
	if (l->on)
		pthread_rwlock_wrlock(&l->rw);
}
static inline void srd_rwlock_release(struct srd_rwlock *l)
{
	if (l->on)
		pthread_rwlock_unlock(&l->rw);
}
/* Reference counts of objects that endpoints and regions bind: changed
 * under different objects' locks, so atomic. */
static inline void srd_ref_get(int *refs)
{
	__atomic_add_fetch(refs, 1, __ATOMIC_RELAXED);
}
static inline void srd_ref_put(int *refs)
{
	__atomic_sub_fetch(refs, 1, __ATOMIC_RELEASE);
}
static inline int srd_ref_count(const int *refs)
{
	return __atomic_load_n(refs, __ATOMIC_ACQUIRE);
}

struct srd_domain {
	struct fid_domain domain_fid;
	struct srd_fabric *fabric;
	struct fi_info *info;
	struct srd_iface iface;
	struct srd_lock lock;		/* eps, the progress thread */
	struct srd_rwlock mr_lock;	/* mr_map, mr_last_id, regions */
	bool use_lock;
	int refs;			/* srd_ref_*: objects open on it */
	struct srd_dlist eps;		/* enabled endpoints */
	struct srd_hmap mr_map;		/* MR key -> srd_mr */
	uint64_t mr_last_id;		/* the last srd_mr.reg_id handed out */
	struct srd_progress *progress;
	uint64_t stale_next_ns;		/* srd_progress_stale's next look
					 * (atomic) */
	uint32_t api_version;
	/* operand bytes one atomic carries: it is always one packet, so a
	 * small verbs MTU makes it smaller (srd_atomic_max_bytes) */
	uint32_t atomic_max_bytes;
};

static inline void srd_domain_lock(struct srd_domain *dom)
{
	srd_lock_acquire(&dom->lock);
}
static inline void srd_domain_unlock(struct srd_domain *dom)
{
	srd_lock_release(&dom->lock);
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
/* The same, handing back up to max events; -errno on failure (-EINTR: a
 * signal came first). */
struct epoll_event;
int srd_wait_events(int epfd, uint64_t deadline_ns, struct epoll_event *ev,
		    int max);
/* Absolute deadline for an fi_*_sread-style timeout in ms (-1: none). */
uint64_t srd_wait_deadline_ms(int timeout_ms);
/* FI_GETWAIT / FI_GETWAITOBJ for an object with this wait set. */
int srd_wait_control(struct srd_wait *wait, enum fi_wait_obj obj,
		     int command, void *arg);
/* fi_*_strerror: the text of a (positive or negative) error number
 * (srd_cq.c). */
const char *srd_strerror_buf(int prov_errno, char *buf, size_t len);

struct srd_ep;
/* The endpoints bound to a CQ or counter: reading it progresses them,
 * and their sockets are in its wait set. */
struct srd_ep_set {
	struct srd_rwlock lock;		/* read: walking it; write: changing */
	struct srd_ep **eps;
	int count;
};
int srd_ep_set_add(struct srd_ep_set *set, struct srd_wait *wait,
		   struct srd_ep *ep);
void srd_ep_set_del(struct srd_ep_set *set, struct srd_wait *wait,
		    struct srd_ep *ep);
/* Returns the work done (srd_ep_progress's sum): 0 when nothing was
 * there to do, or every endpoint was another thread's. */
int srd_ep_set_progress(struct srd_ep_set *set);
/* After a read of a CQ, counter or poll set: work is what its progress
 * did, or 1 when it handed something out; yields the CPU once this
 * thread has found nothing to do for FI_SRD_POLL_YIELD_US. */
void srd_read_idle(int work);
/* The waiting side that a CQ and a counter share: the wait set (their
 * endpoints' sockets and a signal fd), the endpoints bound to them
 * (reading progresses them), the threads asleep in a blocking read, and
 * whether the fd was handed out (FI_GETWAIT: someone polls it). */
struct srd_waiter {
	struct srd_wait wait;
	struct srd_ep_set eps;
	int sleepers;
	bool fd_exported;
};
/* A completion or update arrived: wake whoever may be waiting for it. */
static inline void srd_waiter_wake(struct srd_waiter *w)
{
	if (w->sleepers || w->fd_exported)
		srd_wait_signal(&w->wait);
}
int srd_waiter_init(struct srd_waiter *w, bool use_lock);
void srd_waiter_fini(struct srd_waiter *w);
/* fi_control's FI_GETWAIT / FI_GETWAITOBJ for an object waited on by obj. */
int srd_waiter_control(struct srd_waiter *w, enum fi_wait_obj obj,
		       int command, void *arg);
/* One sleep of a blocking read, entered with the object's lock held and
 * left with it held (dropped while asleep): until a socket or the signal
 * fd is readable, deadline_ns, or next_ns (srd_waiter_next_ns, found
 * before the object's lock was taken: it walks the endpoints). */
uint64_t srd_waiter_next_ns(struct srd_waiter *w);
void srd_waiter_sleep(struct srd_lock *held, struct srd_waiter *w,
		      uint64_t next_ns, uint64_t deadline_ns);

/* --- AV ------------------------------------------------------------------ */
struct srd_av {
	struct fid_av av_fid;
	struct srd_domain *dom;
	struct srd_lock lock;		/* everything below */
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
	struct srd_waiter w;
	struct srd_lock lock;		/* ring, errs, signaled, sleepers */
	size_t nerrs;			/* on errs; peeked at without the lock */
	int refs;			/* srd_ref_*: bindings, poll sets */
	bool signaled;
};
int srd_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int srd_cq_trywait(struct srd_cq *cq);
/* The srd CQ that fid is, or NULL (another class, another provider's). */
struct srd_cq *srd_cq_of_fid(struct fid *fid);
/* It holds a completion or an error entry; caller holds cq->lock. */
bool srd_cq_ready(const struct srd_cq *cq);

struct srd_cntr {
	struct fid_cntr cntr_fid;
	struct srd_domain *dom;
	uint64_t value;
	uint64_t err;
	/* what fi_poll last reported, or fi_cntr_set/add (value) and
	 * fi_cntr_seterr/adderr (err) last left: a poll set reports the
	 * counter while either differs (fi_poll(3)) */
	uint64_t polled_value;
	uint64_t polled_err;
	uint64_t read_sum;		/* value + err at the last read
					 * (srd_read_idle: did it move?) */
	enum fi_wait_obj wait_obj;
	struct srd_waiter w;
	struct srd_lock lock;		/* value, err, sleepers */
	int refs;			/* srd_ref_*: bindings, poll sets */
};
int srd_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context);
/* The srd counter that fid is, or NULL. */
struct srd_cntr *srd_cntr_of_fid(struct fid *fid);
/* True once per change of the value or the error count since the last
 * report: takes the report; caller holds cntr->lock. */
bool srd_cntr_take_change(struct srd_cntr *cntr);

/* --- poll set (srd_poll.c) ----------------------------------------------- */
/* One CQ or counter of a poll set: exactly one of cq and cntr is set. */
struct srd_poll_member {
	struct fid *fid;
	struct srd_cq *cq;
	struct srd_cntr *cntr;
};
struct srd_poll {
	struct fid_poll poll_fid;
	struct srd_domain *dom;
	struct srd_lock lock;		/* members, count, cap, next */
	struct srd_poll_member *members;
	int count, cap;
	int next;			/* where the next fi_poll scan starts */
};
int srd_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		  struct fid_poll **pollset);

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
	/* This registration, never reused in its domain (a key may be,
	 * once the region is closed): what a READ answer names it by. */
	uint64_t reg_id;
};
int srd_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context);
extern struct fi_ops_mr srd_mr_ops;
/* fi_query_atomic (srd_ops_atomic.c) */
int srd_query_atomic(const struct srd_domain *dom, enum fi_datatype dt,
		     enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags);

/* --- endpoint ------------------------------------------------------------ */
/* The endpoint object: the fid, its bindings and wire; the message layer's
 * part (transport included) is ep->msg. */
struct srd_ep {
	struct fid_ep ep_fid;
	struct srd_domain *dom;
	/* srd_ep_lock: msg, wire, below.  A cache line of its own: threads
	 * that share the endpoint and wait for the lock (a poller's
	 * trylock, a post's spin) write to its line, and had they shared
	 * it with the fields the holder works on, each of their tries took
	 * those away from the holder (two threads on one endpoint: 0.057
	 * Mmsg/s with the lock beside them, 0.143 alone). */
	struct srd_lock lock __attribute__((aligned(SRD_CACHE_LINE)));
	struct srd_dlist dom_entry __attribute__((aligned(SRD_CACHE_LINE)));
	struct fid_eq *eq;
	uint64_t tx_op_flags;
	uint64_t rx_op_flags;
	uint64_t last_app_ns;		/* the application's last call in
					 * (atomic: the progress thread reads) */
	uint64_t progressed_ns;		/* its last progress step, by any
					 * thread (atomic: srd_progress_stale
					 * reads it without the lock) */
	bool thread_watch;		/* the progress thread polls our socket */
	bool thread_watch_failed;	/* ... could not, and said so */
	/* When the progress thread took its last step here: the step's
	 * progressed_ns, the last_app_ns it saw, and the deadline it found
	 * next; a step since by anyone else, or a call by the application,
	 * makes the thread look again (srd_progress.c, progress_one). */
	uint64_t thread_step_ns;
	uint64_t thread_app_ns;
	uint64_t thread_next_ns;
	bool thread_holds;		/* the progress thread holds lock
					 * (atomic: srd_ep_set_progress reads) */
	/* When the thread looks at us next: our place in its heap (under
	 * the domain lock) and a copy that callers in without that lock
	 * read (atomic); touched: on the thread's list of endpoints to
	 * look at on its next wake-up (under its touched_lock). */
	struct srd_heap_node thread_look;
	uint64_t thread_look_ns;
	uint64_t thread_looks;		/* fi_srd_ep_stats (atomic) */
	uint64_t thread_steps;
	struct srd_dlist touched_entry;
	bool touched;
	union srd_wire_addr src_addr;
	struct srd_wire *wire;
	char *stats_path;		/* srd_stats.c: snapshot file, or NULL */
	uint8_t *auth_key;		/* srd_auth.c: the job key, or NULL */
	size_t auth_key_len;
	uint64_t stats_next_ns;
	uint64_t stats_seq;		/* snapshots written */
	uint64_t stats_start;		/* the process's start (/proc stat) */
	uint32_t stats_id;		/* N of srd-PID-N.stats */
	struct srd_msg_ep msg;
};

static inline struct srd_ep *srd_ep_of(struct fid_ep *ep_fid)
{
	return srd_container_of(ep_fid, struct srd_ep, ep_fid);
}
int srd_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);
/* srd_auth.c: the job key (fi_srd(7) SECURITY), at most this long */
#define SRD_AUTH_KEY_MAX	4096
int srd_auth_key_load(const struct fi_info *info, const struct fi_info *dom_info,
		      uint8_t **key, size_t *key_len);
int srd_auth_key_hint(const void *want, size_t want_len, void **out,
		      size_t *out_len);
/* The endpoint's lock with the MR map's read side (see Locking). */
static inline void srd_ep_lock(struct srd_ep *ep)
{
	srd_lock_acquire_spin(&ep->lock);
	srd_rwlock_read(&ep->dom->mr_lock);
}
/* Progress's way in: fails while the lock is held or a post waits, and
 * while the MR map is written or a writer waits for it.  Never waiting
 * for the map here is what lets the progress thread and
 * srd_progress_stale call it under the domain lock: fi_enable holds an
 * endpoint's lock, and so the map for reading, while it waits for the
 * domain's, and a registration queued on the map between the two would
 * otherwise close the circle. */
static inline bool srd_ep_trylock(struct srd_ep *ep)
{
	if (!srd_lock_try_unwanted(&ep->lock))
		return false;
	if (!srd_rwlock_try_read(&ep->dom->mr_lock)) {
		srd_lock_release(&ep->lock);
		return false;
	}
	return true;
}
static inline void srd_ep_unlock(struct srd_ep *ep)
{
	srd_rwlock_release(&ep->dom->mr_lock);
	srd_lock_release(&ep->lock);
}
/* One progress step for an endpoint; caller holds srd_ep_lock. */
int srd_ep_progress(struct srd_ep *ep);
uint64_t srd_ep_next_deadline(struct srd_ep *ep);
/* srd_ops_msg.c: the generic posts every msg and tagged shim calls */
ssize_t srd_generic_send(struct srd_ep *ep, const struct fi_msg_tagged *msg,
			 uint64_t flags, bool tagged);
ssize_t srd_generic_recv(struct srd_ep *ep, const struct fi_msg_tagged *msg,
			 uint64_t flags, bool tagged);

/* --- statistics (srd_stats.c) ---------------------------------------------- */
int srd_stats_ops_open(const char *name, void **ops);
void srd_stats_ep_open(struct srd_ep *ep);	/* once the wire is up */
void srd_stats_tick(struct srd_ep *ep);
void srd_stats_ep_close(struct srd_ep *ep);	/* srd_ep_lock held */

void srd_progress_note_app(struct srd_domain *dom, struct srd_ep *ep);
/* An application thread whose CQ came up empty, or that reads a counter
 * (srd_ep_set_progress), progresses the domain's endpoints that no
 * thread has progressed for SRD_EP_STALE_NS (srd_progress.c). */
#define SRD_EP_STALE_NS		(200 * SRD_NS_PER_US)
/* endpoints one pass looks at, round robin over the domain's */
#define SRD_EP_STALE_LOOK	8
void srd_progress_stale(struct srd_domain *dom);

/* Every data-path post: under the endpoint's lock, noted as application
 * activity; a post refused for lack of entries progresses the endpoint
 * so that the caller's retry finds room. */
static inline void srd_ep_post_enter(struct srd_ep *ep)
{
	srd_ep_lock(ep);
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
	if (ret == -FI_EAGAIN || (ep->msg.enabled &&
	    (int64_t)(ep->last_app_ns - ep->msg.tp.polled_ns) >
	    (int64_t)SRD_EP_POST_POLL_NS))
		srd_ep_progress(ep);
	srd_ep_unlock(ep);
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
int srd_no_ep_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **ep, void *context);
int srd_no_ep_rx_ctx(struct fid_ep *sep, int index,
			struct fi_rx_attr *attr, struct fid_ep **ep,
			void *context);
int srd_no_ep_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int srd_no_ep_connect(struct fid_ep *ep, const void *addr,
			 const void *param, size_t paramlen);
int srd_no_ep_listen(struct fid_pep *pep);
int srd_no_ep_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int srd_no_ep_reject(struct fid_pep *pep, fid_t handle, const void *param,
			size_t paramlen);
int srd_no_ep_shutdown(struct fid_ep *ep, uint64_t flags);
int srd_no_ep_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		      struct fid_mc **mc, void *context);
int srd_no_domain_sep(struct fid_domain *domain, struct fi_info *info,
			 struct fid_ep **sep, void *context);
int srd_no_domain_stx(struct fid_domain *domain, struct fi_tx_attr *attr,
			 struct fid_stx **stx, void *context);
int srd_no_domain_srx(struct fid_domain *domain, struct fi_rx_attr *attr,
			 struct fid_ep **rx_ep, void *context);
int srd_no_domain_query_collective(struct fid_domain *domain,
				   enum fi_collective_op coll,
				   struct fi_collective_attr *attr,
				   uint64_t flags);
int srd_no_fabric_pep(struct fid_fabric *fabric, struct fi_info *info,
			 struct fid_pep **pep, void *context);
int srd_no_fabric_wait(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			  struct fid_wait **waitset);

#endif /* SRD_H */
