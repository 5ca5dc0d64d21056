/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_av.c: address vectors.  An fi_addr_t is an index into a table of
 * socket addresses (for FI_AV_MAP too: a map may hand out any value),
 * with a reverse map from address to index for received packets.
 * Removed slots are not reused, so a stale fi_addr_t never names a new
 * peer.  Named (shared) AVs are not offered.  Must not touch peers.
 */
#include "config.h"
#include "srd.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>

struct srd_av_node {
	struct srd_hnode hnode;
	fi_addr_t index;
};

static inline struct srd_av *av_of(struct fid_av *fid)
{
	return srd_container_of(fid, struct srd_av, av_fid);
}

/* Caller holds av->lock. */
static const union srd_wire_addr *av_slot(const struct srd_av *av,
					  fi_addr_t addr)
{
	if (addr >= av->count || !av->valid[addr])
		return NULL;
	return &av->table[addr];
}

/* A copy: the table moves when an insert grows it. */
bool srd_av_addr(struct srd_av *av, fi_addr_t addr, union srd_wire_addr *out)
{
	const union srd_wire_addr *wa;

	if (!av)
		return false;
	srd_lock_acquire(&av->lock);
	wa = av_slot(av, addr);
	if (wa)
		*out = *wa;
	srd_lock_release(&av->lock);
	return wa;
}

uint64_t srd_av_gen(const struct srd_av *av)
{
	return __atomic_load_n(&av->gen, __ATOMIC_ACQUIRE);
}

static void av_gen_bump(struct srd_av *av)
{
	__atomic_store_n(&av->gen, av->gen + 1, __ATOMIC_RELEASE);
}

fi_addr_t srd_av_reverse(struct srd_av *av, const union srd_wire_addr *addr)
{
	struct srd_hnode *node;
	fi_addr_t found = FI_ADDR_NOTAVAIL;

	srd_lock_acquire(&av->lock);
	node = srd_hmap_find(&av->rev, srd_wire_addr_hash(addr));
	for (; node; node = srd_hmap_next(node)) {
		struct srd_av_node *n =
			srd_container_of(node, struct srd_av_node, hnode);

		if (av->valid[n->index] &&
		    srd_wire_addr_equal(&av->table[n->index], addr)) {
			found = n->index;
			break;
		}
	}
	srd_lock_release(&av->lock);
	return found;
}

static int av_grow(struct srd_av *av)
{
	size_t cap = av->cap ? av->cap * 2 : 64;
	union srd_wire_addr *table = realloc(av->table, cap * sizeof(*table));
	uint8_t *valid;
	struct srd_av_node *nodes;

	if (!table)
		return -FI_ENOMEM;
	av->table = table;
	valid = realloc(av->valid, cap);
	if (!valid)
		return -FI_ENOMEM;
	av->valid = valid;
	/* Nodes are linked into the reverse map: rebuild it after moving. */
	nodes = realloc(av->nodes, cap * sizeof(*nodes));
	if (!nodes)
		return -FI_ENOMEM;
	av->nodes = nodes;
	srd_hmap_fini(&av->rev);
	if (srd_hmap_init(&av->rev, cap))
		return -FI_ENOMEM;
	for (size_t i = 0; i < av->count; i++)
		if (av->valid[i])
			srd_hmap_insert(&av->rev, &av->nodes[i].hnode,
					srd_wire_addr_hash(&av->table[i]));
	av->cap = cap;
	return 0;
}

/* Checks one caller-supplied address: the family this AV holds. */
static int av_parse(const struct srd_av *av, const void *addr,
		    union srd_wire_addr *out)
{
	const struct sockaddr *sa = addr;

	memset(out, 0, sizeof(*out));
	if (!sa || sa->sa_family != av->addr_family)
		return -FI_EINVAL;
	memcpy(out, addr, av->addrlen);
	return 0;
}

static int av_insert_one(struct srd_av *av, const void *addr,
			 fi_addr_t *fi_addr)
{
	union srd_wire_addr wa;
	int ret = av_parse(av, addr, &wa);

	if (!ret && av->count == av->cap)
		ret = av_grow(av);
	if (ret) {
		if (fi_addr)
			*fi_addr = FI_ADDR_NOTAVAIL;
		return ret;
	}
	av->table[av->count] = wa;
	av->valid[av->count] = 1;
	av->nodes[av->count].index = av->count;
	srd_hmap_insert(&av->rev, &av->nodes[av->count].hnode,
			srd_wire_addr_hash(&wa));
	if (fi_addr)
		*fi_addr = av->count;
	av->count++;
	av_gen_bump(av);
	return 0;
}

/* FI_EVENT AVs: inserts complete at once, but report through the EQ:
 * one error entry per bad address (data = its index), then
 * FI_AV_COMPLETE with the count inserted. */
static void av_report_err(struct srd_av *av, void *context, size_t index,
			  int err)
{
	struct fi_eq_err_entry e = {
		.fid = &av->av_fid.fid, .context = context, .data = index,
		.err = -err, .prov_errno = -err,
	};

	srd_eq_report(av->eq, FI_AV_COMPLETE, &e, sizeof(e), true);
}

static void av_report_done(struct srd_av *av, void *context, size_t done)
{
	struct fi_eq_entry e = {
		.fid = &av->av_fid.fid, .context = context, .data = done,
	};

	srd_eq_report(av->eq, FI_AV_COMPLETE, &e, sizeof(e), false);
}

static int av_insert(struct fid_av *fid, const void *addr, size_t count,
		     fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct srd_av *av = av_of(fid);
	bool async = av->flags & FI_EVENT;
	int done = 0;

	if (flags & ~(FI_MORE | FI_SYNC_ERR))
		return -FI_EBADFLAGS;
	if (count && !addr)
		return -FI_EINVAL;
	if (async && !av->eq)
		return -FI_ENOEQ;
	srd_lock_acquire(&av->lock);
	for (size_t i = 0; i < count; i++) {
		const uint8_t *a = (const uint8_t *)addr + i * av->addrlen;
		int ret = av_insert_one(av, a, fi_addr ? &fi_addr[i] : NULL);

		if (!ret)
			done++;
		if ((flags & FI_SYNC_ERR) && context)
			((int *)context)[i] = -ret;
		else if (ret && async)
			av_report_err(av, context, i, ret);
	}
	srd_lock_release(&av->lock);
	if (async) {
		av_report_done(av, context, (size_t)done);
		return 0;
	}
	return done;
}

static int av_insertsvc(struct fid_av *fid, const char *node,
			const char *service, fi_addr_t *fi_addr,
			uint64_t flags, void *context)
{
	struct srd_av *av = av_of(fid);
	struct addrinfo hints = {
		.ai_family = av->addr_family,
		.ai_socktype = SOCK_DGRAM,
	}, *res;
	int ret;

	if (!node || !service)
		return -FI_EINVAL;
	if (getaddrinfo(node, service, &hints, &res))
		return -FI_EINVAL;
	ret = av_insert(fid, res->ai_addr, 1, fi_addr, flags, context);
	freeaddrinfo(res);
	return ret;
}

static int av_insertsym(struct fid_av *fid, const char *node,
			size_t nodecnt, const char *service, size_t svccnt,
			fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	int done = 0;
	char port[16];

	if (!node || !service || !nodecnt || !svccnt || nodecnt > 1)
		return -FI_EINVAL;	/* only one node: no address math */
	for (size_t s = 0; s < svccnt; s++) {
		snprintf(port, sizeof(port), "%ld", atol(service) + (long)s);
		if (av_insertsvc(fid, node, port, fi_addr ? &fi_addr[s] : NULL,
				 flags, context) == 1)
			done++;
	}
	return done;
}

static int av_remove(struct fid_av *fid, fi_addr_t *fi_addr, size_t count,
		     uint64_t flags)
{
	struct srd_av *av = av_of(fid);
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	srd_lock_acquire(&av->lock);
	for (size_t i = 0; i < count; i++) {
		fi_addr_t a = fi_addr[i];

		if (a >= av->count || !av->valid[a]) {
			ret = -FI_EINVAL;
			continue;
		}
		av->valid[a] = 0;
		srd_hmap_remove(&av->rev, &av->nodes[a].hnode);
		av_gen_bump(av);
	}
	srd_lock_release(&av->lock);
	return ret;
}

static int av_lookup(struct fid_av *fid, fi_addr_t fi_addr, void *addr,
		     size_t *addrlen)
{
	struct srd_av *av = av_of(fid);
	const union srd_wire_addr *wa;
	size_t given;
	int ret = 0;

	if (!addrlen)
		return -FI_EINVAL;
	srd_lock_acquire(&av->lock);
	wa = av_slot(av, fi_addr);
	if (!wa) {
		/* unset, removed or out of bounds: fi_av(3) of 2.x says
		 * -FI_EINVAL; 1.x leaves it unsaid */
		ret = -FI_EINVAL;
		goto out;
	}
	given = *addrlen;
	*addrlen = av->addrlen;
	if (addr)
		memcpy(addr, wa, given < av->addrlen ? given : av->addrlen);
	if (given < av->addrlen)
		ret = -FI_ETOOSMALL;
out:
	srd_lock_release(&av->lock);
	return ret;
}

static const char *av_straddr(struct fid_av *fid, const void *addr,
			      char *buf, size_t *len)
{
	union srd_wire_addr wa;
	char str[80];
	size_t need;

	if (!addr || !len)
		return NULL;
	memset(&wa, 0, sizeof(wa));
	memcpy(&wa, addr, av_of(fid)->addrlen);
	srd_wire_addr_str(&wa, str, sizeof(str));
	need = strlen(str) + 1;
	if (buf && *len)
		snprintf(buf, *len, "%s", str);
	*len = need;
	return buf;
}

static struct fi_ops_av srd_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = av_insertsvc,
	.insertsym = av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
};

static int av_close(struct fid *fid)
{
	struct srd_av *av = srd_container_of(fid, struct srd_av, av_fid.fid);

	if (srd_ref_count(&av->refs))
		return -FI_EBUSY;
	srd_ref_put(&av->dom->refs);
	srd_lock_fini(&av->lock);
	if (av->eq)
		srd_eq_unref(av->eq);
	srd_hmap_fini(&av->rev);
	free(av->nodes);
	free(av->valid);
	free(av->table);
	free(av);
	return 0;
}

static int av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct srd_av *av = srd_container_of(fid, struct srd_av, av_fid.fid);

	if (bfid->fclass != FI_CLASS_EQ || flags)
		return -FI_EINVAL;
	if (!(av->flags & FI_EVENT) || av->eq)
		return -FI_EINVAL;	/* only an FI_EVENT AV reports, to one EQ */
	av->eq = srd_container_of(bfid, struct fid_eq, fid);
	srd_eq_ref(av->eq);
	return 0;
}

static struct fi_ops srd_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = av_bind,
	.control = srd_no_control,
	.ops_open = srd_no_ops_open,
};

static int av_check_attr(const struct srd_domain *dom,
			 const struct fi_av_attr *attr)
{
	if (attr->name)
		return -FI_ENOSYS;	/* named / shared AVs */
	if (attr->flags & ~(FI_SYMMETRIC | FI_EVENT))
		return -FI_EBADFLAGS;
	if (attr->rx_ctx_bits)
		return -FI_ENOSYS;
	switch (attr->type) {
	case FI_AV_UNSPEC:
	case FI_AV_TABLE:
	case FI_AV_MAP:
		return 0;
	default:
		return -FI_EINVAL;
	}
}

int srd_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av_fid, void *context)
{
	struct srd_domain *dom = srd_container_of(domain, struct srd_domain,
						  domain_fid);
	struct srd_av *av;
	int ret;

	if (!attr)
		return -FI_EINVAL;
	ret = av_check_attr(dom, attr);
	if (ret)
		return ret;
	av = calloc(1, sizeof(*av));
	if (!av || srd_hmap_init(&av->rev, 64)) {
		free(av);
		return -FI_ENOMEM;
	}
	av->dom = dom;
	srd_lock_init(&av->lock, dom->use_lock);
	av->flags = attr->flags;
	av->addr_family = dom->iface.addr.sa.sa_family;
	av->addrlen = srd_wire_addr_len(&dom->iface.addr);
	if (attr->count && av->count == 0)
		av_grow(av);
	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = &srd_av_fi_ops;
	av->av_fid.ops = &srd_av_ops;
	srd_ref_get(&dom->refs);
	*av_fid = &av->av_fid;
	return 0;
}
