/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_poll.c: poll sets (fi_poll_open, fi_poll(3)): the list of a
 * domain's CQs and counters that one fi_poll call progresses and checks,
 * and that call, which returns the context each member was opened with
 * when it has something to read.  It owns the member list only: what a
 * CQ holds and what a counter last reported belong to srd_cq.c and
 * srd_cntr.c, asked through srd_cq_ready and srd_cntr_take_change.  It
 * must not touch operations, peers or the wait sets.
 *
 * The set's own lock guards its member list; membership counts in the
 * member's refs (atomic), which makes fi_close of a member -FI_EBUSY.
 * fi_poll progresses the members' endpoints as their own reads do
 * (srd_ep_set_progress: an endpoint another thread holds is skipped) and
 * asks each member under the member's lock (fi/srd.h, Locking).
 */
#include "config.h"
#include "srd.h"

#include <stdlib.h>

static inline struct srd_poll *poll_of(struct fid_poll *poll_fid)
{
	return srd_container_of(poll_fid, struct srd_poll, poll_fid);
}

/* The endpoints whose progress makes a member's events appear. */
static struct srd_ep_set *member_eps(const struct srd_poll_member *m)
{
	return m->cq ? &m->cq->w.eps : &m->cntr->w.eps;
}

static int *member_refs(const struct srd_poll_member *m)
{
	return m->cq ? &m->cq->refs : &m->cntr->refs;
}

static int poll_find(const struct srd_poll *ps, const struct fid *fid)
{
	for (int i = 0; i < ps->count; i++)
		if (ps->members[i].fid == fid)
			return i;
	return -1;
}

/* Progresses the endpoints bound to each member (a tx and an rx CQ of
 * one endpoint progress it twice: the second step finds little to do);
 * caller holds the set's lock. */
static int poll_progress(const struct srd_poll *ps)
{
	int work = 0;

	for (int i = 0; i < ps->count; i++)
		work += srd_ep_set_progress(member_eps(&ps->members[i]));
	return work;
}

/* A CQ has an event while it holds an entry or an error entry; a counter
 * when its value or error count moved since it was last reported (the
 * report is taken only when its context is handed out). */
static bool member_has_event(const struct srd_poll_member *m)
{
	bool ready;

	if (m->cq) {
		srd_lock_acquire(&m->cq->lock);
		ready = srd_cq_ready(m->cq);
		srd_lock_release(&m->cq->lock);
	} else {
		srd_lock_acquire(&m->cntr->lock);
		ready = srd_cntr_take_change(m->cntr);
		srd_lock_release(&m->cntr->lock);
	}
	return ready;
}

/* fi_poll: scans from where the last full call stopped, so a context
 * array smaller than the set cannot starve the members behind it. */
static int poll_run(struct fid_poll *poll_fid, void **context, int count)
{
	struct srd_poll *ps = poll_of(poll_fid);
	int n = 0, work;

	if (count < 0 || (count && !context))
		return -FI_EINVAL;
	srd_lock_acquire(&ps->lock);
	work = poll_progress(ps);
	for (int k = 0; k < ps->count && n < count; k++) {
		int i = (ps->next + k) % ps->count;
		struct srd_poll_member *m = &ps->members[i];

		if (!member_has_event(m))
			continue;
		context[n++] = m->fid->context;
		if (n == count)
			ps->next = (i + 1) % ps->count;
	}
	srd_lock_release(&ps->lock);
	srd_read_idle(work + n);
	return n;
}

/* The srd CQ or counter of this poll set's domain that fid is, or an
 * error: anything else cannot be polled here. */
static int poll_member_of(const struct srd_poll *ps, struct fid *fid,
			  struct srd_poll_member *m)
{
	struct srd_domain *dom;

	m->fid = fid;
	m->cq = srd_cq_of_fid(fid);
	m->cntr = m->cq ? NULL : srd_cntr_of_fid(fid);
	if (!m->cq && !m->cntr) {
		SRD_WARN(FI_LOG_DOMAIN, "poll set: fid %p (class %d) is not "
			 "an srd CQ or counter\n", (void *)fid,
			 fid ? (int)fid->fclass : -1);
		return -FI_EINVAL;
	}
	dom = m->cq ? m->cq->dom : m->cntr->dom;
	if (dom != ps->dom) {
		SRD_WARN(FI_LOG_DOMAIN, "poll set: the %s belongs to another "
			 "domain\n", m->cq ? "CQ" : "counter");
		return -FI_EINVAL;
	}
	return 0;
}

static int poll_add(struct fid_poll *poll_fid, struct fid *event_fid,
		    uint64_t flags)
{
	struct srd_poll *ps = poll_of(poll_fid);
	struct srd_poll_member m, *members;
	int ret;

	if (flags)
		return -FI_EBADFLAGS;
	ret = poll_member_of(ps, event_fid, &m);
	if (ret)
		return ret;
	srd_lock_acquire(&ps->lock);
	if (poll_find(ps, event_fid) >= 0) {
		ret = -FI_EALREADY;
	} else if (ps->count == ps->cap) {
		int cap = ps->cap ? ps->cap * 2 : 4;

		members = realloc(ps->members, (size_t)cap * sizeof(*members));
		if (members) {
			ps->members = members;
			ps->cap = cap;
		} else {
			ret = -FI_ENOMEM;
		}
	}
	if (!ret) {
		ps->members[ps->count++] = m;
		srd_ref_get(member_refs(&m));
	}
	srd_lock_release(&ps->lock);
	return ret;
}

static int poll_del(struct fid_poll *poll_fid, struct fid *event_fid,
		    uint64_t flags)
{
	struct srd_poll *ps = poll_of(poll_fid);
	int i;

	if (flags)
		return -FI_EBADFLAGS;
	srd_lock_acquire(&ps->lock);
	i = poll_find(ps, event_fid);
	if (i >= 0) {
		srd_ref_put(member_refs(&ps->members[i]));
		ps->members[i] = ps->members[--ps->count];
		if (ps->next >= ps->count)
			ps->next = 0;
	}
	srd_lock_release(&ps->lock);
	return i >= 0 ? 0 : -FI_ENOENT;
}

static struct fi_ops_poll srd_poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = poll_run,
	.poll_add = poll_add,
	.poll_del = poll_del,
};

/* A poll set with members is still associated with them: fi_poll(3)
 * wants -FI_EBUSY until each is deleted. */
static int poll_close(struct fid *fid)
{
	struct srd_poll *ps = srd_container_of(fid, struct srd_poll,
					       poll_fid.fid);
	struct srd_domain *dom = ps->dom;

	srd_lock_acquire(&ps->lock);
	if (ps->count) {
		srd_lock_release(&ps->lock);
		return -FI_EBUSY;
	}
	srd_lock_release(&ps->lock);
	srd_ref_put(&dom->refs);
	srd_lock_fini(&ps->lock);
	free(ps->members);
	free(ps);
	return 0;
}

static struct fi_ops srd_poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = poll_close,
	.bind = srd_no_bind,
	.control = srd_no_control,
	.ops_open = srd_no_ops_open,
};

int srd_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		  struct fid_poll **poll_fid)
{
	struct srd_domain *dom = srd_container_of(domain, struct srd_domain,
						  domain_fid);
	struct srd_poll *ps;

	if (!poll_fid)
		return -FI_EINVAL;
	if (attr && attr->flags) {	/* reserved: must be 0 */
		SRD_WARN(FI_LOG_DOMAIN, "fi_poll_open: flags 0x%llx: none "
			 "are defined\n", (unsigned long long)attr->flags);
		return -FI_EINVAL;
	}
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -FI_ENOMEM;
	ps->dom = dom;
	srd_lock_init(&ps->lock, dom->use_lock);
	ps->poll_fid.fid.fclass = FI_CLASS_POLL;
	ps->poll_fid.fid.ops = &srd_poll_fi_ops;
	ps->poll_fid.ops = &srd_poll_ops;
	srd_ref_get(&dom->refs);
	*poll_fid = &ps->poll_fid;
	return 0;
}
