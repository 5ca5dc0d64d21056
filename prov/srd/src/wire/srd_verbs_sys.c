/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_verbs_sys.c: the verbs calls the provider makes, bound to
 * libibverbs (struct srd_verbs_ops), and the switch a test uses to put
 * its emulated device in their place.
 *
 * libibverbs is loaded at run time (dlopen of its soname, then dlsym),
 * never linked: libsrd-fi.so NEEDs no rdma-core library, so a host
 * without one still loads srd and gets the UDP wire, and the verbs wire
 * is offered wherever libibverbs.so.1 loads.  The headers are still
 * used at build time: every bound function is checked against the
 * prototype infiniband/verbs.h declares, and the calls it defines
 * inline (polling, posting, arming a CQ: through the context's own ops)
 * need no symbol.  The library, once loaded, stays loaded: its device
 * list and providers live as long as the process.
 *
 * Thin wrappers only.  Without verbs (--without-verbs, or no
 * infiniband/verbs.h at build time) the wire's entry points say so and
 * the UDP wire is all there is.  Must not: hold state of its own beyond
 * the table, or be reached by anything but the verbs wire and its port
 * discovery.
 */
#include "config.h"
#include "srd_verbs.h"

#include <errno.h>
#include <stddef.h>

#ifdef HAVE_VERBS
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "srd_log.h"

/* The ABI the headers describe: rdma-core's libibverbs, version 1. */
#define SRD_VERBS_SONAME	"libibverbs.so.1"

/* One loaded libibverbs: the table the wire calls, and the functions
 * the wrappers below call (their signatures are not the table's). */
struct sys_lib {
	void *handle;
	struct srd_verbs_ops ops;
	__typeof__(&ibv_query_port) query_port_compat;
	__typeof__(&_ibv_query_gid_ex) query_gid_ex;
	__typeof__(&ibv_reg_mr_iova2) reg_mr_iova2;
};

static struct sys_lib sys;		/* bound once, by sys_load */
static pthread_once_t sys_once = PTHREAD_ONCE_INIT;
static bool sys_ok;

static int sys_query_port(struct ibv_context *ctx, uint8_t port,
			  struct ibv_port_attr *attr)
{
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);

	/* the extended call where the device has it, as the header's
	 * inline ibv_query_port does; else the compatible entry point */
	if (vctx)
		return vctx->query_port(ctx, port, attr, sizeof(*attr));
	memset(attr, 0, sizeof(*attr));
	return sys.query_port_compat(ctx, port,
				     (struct _compat_ibv_port_attr *)attr);
}

static int sys_query_gid_ex(struct ibv_context *ctx, uint32_t port,
			    uint32_t index, struct ibv_gid_entry *entry)
{
	return sys.query_gid_ex(ctx, port, index, entry, 0, sizeof(*entry));
}

static struct ibv_mr *sys_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				 int access)
{
	return sys.reg_mr_iova2(pd, addr, len, (uintptr_t)addr,
				(unsigned int)access);
}

/* The four calls verbs.h defines inline, through the context's ops. */
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

/* The address of NAME in lib, or NULL; the first missing one is kept
 * for the log line. */
static void *sys_sym(void *handle, const char *name, const char **missing)
{
	void *fn = dlsym(handle, name);

	if (!fn && !*missing)
		*missing = name;
	return fn;
}

/* DST = libibverbs' SYM, typed as verbs.h declares SYM: a table field
 * whose signature differs from the header's is a compile error. */
#define SYS_BIND(dst, sym) do {						\
		__typeof__(&sym) fn_ = sys_sym(l->handle, #sym, &missing); \
		(dst) = fn_;						\
	} while (0)

/* Binds every function the table needs from the open library in l.
 * NULL, or the name of the first one missing. */
static const char *sys_bind(struct sys_lib *l)
{
	struct srd_verbs_ops *o = &l->ops;
	const char *missing = NULL;

	o->name = "libibverbs";
	SYS_BIND(o->get_device_list, ibv_get_device_list);
	SYS_BIND(o->free_device_list, ibv_free_device_list);
	SYS_BIND(o->get_device_name, ibv_get_device_name);
	SYS_BIND(o->open_device, ibv_open_device);
	SYS_BIND(o->close_device, ibv_close_device);
	SYS_BIND(o->query_device, ibv_query_device);
	SYS_BIND(o->alloc_pd, ibv_alloc_pd);
	SYS_BIND(o->dealloc_pd, ibv_dealloc_pd);
	SYS_BIND(o->dereg_mr, ibv_dereg_mr);
	SYS_BIND(o->create_comp_channel, ibv_create_comp_channel);
	SYS_BIND(o->destroy_comp_channel, ibv_destroy_comp_channel);
	SYS_BIND(o->create_cq, ibv_create_cq);
	SYS_BIND(o->destroy_cq, ibv_destroy_cq);
	SYS_BIND(o->get_cq_event, ibv_get_cq_event);
	SYS_BIND(o->ack_cq_events, ibv_ack_cq_events);
	SYS_BIND(o->create_qp, ibv_create_qp);
	SYS_BIND(o->destroy_qp, ibv_destroy_qp);
	SYS_BIND(o->modify_qp, ibv_modify_qp);
	SYS_BIND(o->create_ah, ibv_create_ah);
	SYS_BIND(o->destroy_ah, ibv_destroy_ah);
	SYS_BIND(o->get_async_event, ibv_get_async_event);
	SYS_BIND(o->ack_async_event, ibv_ack_async_event);
	SYS_BIND(l->query_port_compat, ibv_query_port);
	SYS_BIND(l->query_gid_ex, _ibv_query_gid_ex);
	SYS_BIND(l->reg_mr_iova2, ibv_reg_mr_iova2);
	o->query_port = sys_query_port;
	o->query_gid_ex = sys_query_gid_ex;
	o->reg_mr = sys_reg_mr;
	o->req_notify_cq = sys_req_notify_cq;
	o->poll_cq = sys_poll_cq;
	o->post_send = sys_post_send;
	o->post_recv = sys_post_recv;
	return missing;
}

/* Opens SONAME and binds the table from it into *l: 0, or -ENOENT (it
 * does not load) or -ENOSYS (it lacks a function), logged. */
static int sys_open(const char *soname, struct sys_lib *l)
{
	const char *missing;

	memset(l, 0, sizeof(*l));
	l->handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!l->handle) {
		SRD_INFO(FI_LOG_CORE, "verbs wire not offered: %s does not "
			 "load (%s); UDP only\n", soname, dlerror());
		return -ENOENT;
	}
	missing = sys_bind(l);
	if (missing) {
		SRD_INFO(FI_LOG_CORE, "verbs wire not offered: %s has no %s "
			 "(srd needs rdma-core 30 or later); UDP only\n",
			 soname, missing);
		dlclose(l->handle);
		l->handle = NULL;
		return -ENOSYS;
	}
	SRD_DBG(FI_LOG_CORE, "verbs wire: %s loaded\n", soname);
	return 0;
}

int srd_verbs_sys_probe(const char *soname)
{
	struct sys_lib l;
	int ret = sys_open(soname, &l);

	if (!ret)
		dlclose(l.handle);
	return ret;
}

static void sys_load(void)
{
	sys_ok = !sys_open(SRD_VERBS_SONAME, &sys);
}

/* a test's table, or NULL: libibverbs, loaded at the first need */
static const void *verbs_ops;

const void *srd_verbs_ops_get(void)
{
	if (verbs_ops)
		return verbs_ops;
	pthread_once(&sys_once, sys_load);
	return sys_ok ? &sys.ops : NULL;
}

void srd_verbs_ops_set(const void *ops)
{
	verbs_ops = ops;
}

#else /* !HAVE_VERBS */

int srd_verbs_sys_probe(const char *soname)
{
	(void)soname;
	return -ENOSYS;
}

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
