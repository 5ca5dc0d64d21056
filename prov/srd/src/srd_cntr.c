/*
 * srd_cntr.c: completion counters: value and error count, add/set, and
 * wait with a timeout that drives progress of the bound endpoints and
 * sleeps on their wires and timers in between.  It must not touch
 * operations or peers.
 */
#include "config.h"
#include "srd.h"

#include <stdlib.h>

static inline struct srd_cntr *cntr_of(struct fid_cntr *fid)
{
	return srd_container_of(fid, struct srd_cntr, cntr_fid);
}

void srd_cntr_inc(struct srd_cntr *cntr)
{
	cntr->value++;
	if (cntr->sleepers)
		srd_wait_signal(&cntr->wait);
}

void srd_cntr_inc_err(struct srd_cntr *cntr)
{
	cntr->err++;
	if (cntr->sleepers)
		srd_wait_signal(&cntr->wait);
}

static uint64_t cntr_read(struct fid_cntr *fid)
{
	struct srd_cntr *cntr = cntr_of(fid);
	uint64_t v;

	srd_domain_lock(cntr->dom);
	srd_domain_note_app(cntr->dom);
	srd_ep_progress_all(cntr->eps, cntr->neps);
	v = cntr->value;
	srd_domain_unlock(cntr->dom);
	return v;
}

static uint64_t cntr_readerr(struct fid_cntr *fid)
{
	struct srd_cntr *cntr = cntr_of(fid);
	uint64_t v;

	srd_domain_lock(cntr->dom);
	srd_ep_progress_all(cntr->eps, cntr->neps);
	v = cntr->err;
	srd_domain_unlock(cntr->dom);
	return v;
}

static int cntr_set_value(struct srd_cntr *cntr, uint64_t *field,
			  uint64_t value, bool add)
{
	srd_domain_lock(cntr->dom);
	*field = add ? *field + value : value;
	if (cntr->sleepers)
		srd_wait_signal(&cntr->wait);
	srd_domain_unlock(cntr->dom);
	return 0;
}

static int cntr_add(struct fid_cntr *fid, uint64_t value)
{
	return cntr_set_value(cntr_of(fid), &cntr_of(fid)->value, value, true);
}

static int cntr_set(struct fid_cntr *fid, uint64_t value)
{
	return cntr_set_value(cntr_of(fid), &cntr_of(fid)->value, value, false);
}

static int cntr_adderr(struct fid_cntr *fid, uint64_t value)
{
	return cntr_set_value(cntr_of(fid), &cntr_of(fid)->err, value, true);
}

static int cntr_seterr(struct fid_cntr *fid, uint64_t value)
{
	return cntr_set_value(cntr_of(fid), &cntr_of(fid)->err, value, false);
}

static int cntr_wait(struct fid_cntr *fid, uint64_t threshold, int timeout)
{
	struct srd_cntr *cntr = cntr_of(fid);
	uint64_t deadline = srd_wait_deadline_ms(timeout);
	uint64_t err0 = cntr->err;

	if (cntr->wait_obj == FI_WAIT_NONE && timeout < 0)
		return -FI_EINVAL;	/* would spin forever without a wait */
	for (;;) {
		uint64_t next = UINT64_MAX;

		srd_domain_lock(cntr->dom);
		srd_domain_note_app(cntr->dom);
		srd_ep_progress_all(cntr->eps, cntr->neps);
		if (cntr->value >= threshold || cntr->err != err0) {
			int ret = cntr->value >= threshold ? 0 : -FI_EAVAIL;

			srd_domain_unlock(cntr->dom);
			return ret;
		}
		for (int i = 0; i < cntr->neps; i++) {
			uint64_t d = srd_ep_next_deadline(cntr->eps[i]);

			next = d < next ? d : next;
		}
		srd_wait_drain(&cntr->wait);
		cntr->sleepers++;
		srd_domain_unlock(cntr->dom);
		if (srd_clock_now_ns() < deadline)
			srd_wait_until(cntr->wait.epfd,
				       next < deadline ? next : deadline);
		srd_domain_lock(cntr->dom);
		cntr->sleepers--;
		srd_domain_unlock(cntr->dom);
		if (srd_clock_now_ns() >= deadline && cntr->value < threshold)
			return -FI_ETIMEDOUT;
	}
}

static struct fi_ops_cntr srd_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = cntr_read,
	.readerr = cntr_readerr,
	.add = cntr_add,
	.set = cntr_set,
	.wait = cntr_wait,
	.adderr = cntr_adderr,
	.seterr = cntr_seterr,
};

int srd_cntr_bind_ep(struct srd_cntr *cntr, struct srd_ep *ep)
{
	struct srd_ep **eps;

	for (int i = 0; i < cntr->neps; i++)
		if (cntr->eps[i] == ep)
			return 0;
	eps = realloc(cntr->eps, (size_t)(cntr->neps + 1) * sizeof(*eps));
	if (!eps)
		return -FI_ENOMEM;
	cntr->eps = eps;
	cntr->eps[cntr->neps++] = ep;
	return srd_wait_add_fd(&cntr->wait, ep->wire->ops->fd(ep->wire));
}

void srd_cntr_unbind_ep(struct srd_cntr *cntr, struct srd_ep *ep)
{
	for (int i = 0; i < cntr->neps; i++) {
		if (cntr->eps[i] != ep)
			continue;
		cntr->eps[i] = cntr->eps[--cntr->neps];
		srd_wait_del_fd(&cntr->wait, ep->wire->ops->fd(ep->wire));
		return;
	}
}

static int cntr_close(struct fid *fid)
{
	struct srd_cntr *cntr = srd_container_of(fid, struct srd_cntr,
						 cntr_fid.fid);

	if (cntr->refs)
		return -FI_EBUSY;
	srd_domain_lock(cntr->dom);
	cntr->dom->refs--;
	srd_domain_unlock(cntr->dom);
	srd_wait_fini(&cntr->wait);
	free(cntr->eps);
	free(cntr);
	return 0;
}

static int cntr_control(struct fid *fid, int command, void *arg)
{
	struct srd_cntr *cntr = srd_container_of(fid, struct srd_cntr,
						 cntr_fid.fid);

	switch (command) {
	case FI_GETWAIT:
		if (cntr->wait_obj != FI_WAIT_FD || !arg)
			return -FI_ENODATA;
		*(int *)arg = cntr->wait.epfd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = cntr->wait_obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops srd_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cntr_close,
	.bind = srd_no_bind,
	.control = cntr_control,
	.ops_open = srd_no_ops_open,
};

int srd_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr_fid, void *context)
{
	struct srd_domain *dom = srd_container_of(domain, struct srd_domain,
						  domain_fid);
	struct srd_cntr *cntr;
	int ret;

	if (attr && attr->events != FI_CNTR_EVENTS_COMP)
		return -FI_ENOSYS;
	if (attr && attr->wait_obj != FI_WAIT_NONE &&
	    attr->wait_obj != FI_WAIT_UNSPEC && attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	cntr = calloc(1, sizeof(*cntr));
	if (!cntr)
		return -FI_ENOMEM;
	ret = srd_wait_init(&cntr->wait);
	if (ret) {
		free(cntr);
		return ret;
	}
	cntr->dom = dom;
	cntr->wait_obj = !attr || attr->wait_obj == FI_WAIT_UNSPEC ?
			 FI_WAIT_FD : attr->wait_obj;
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = &srd_cntr_fi_ops;
	cntr->cntr_fid.ops = &srd_cntr_ops;
	srd_domain_lock(dom);
	dom->refs++;
	srd_domain_unlock(dom);
	*cntr_fid = &cntr->cntr_fid;
	return 0;
}
