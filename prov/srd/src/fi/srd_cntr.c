/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_cntr.c: completion counters: value and error count, add/set, the
 * mark of what a poll set last reported (srd_poll.c asks), and
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

static void cntr_wake(struct srd_cntr *cntr)
{
	srd_waiter_wake(&cntr->w);
}

void srd_cntr_inc(struct srd_cntr *cntr)
{
	srd_lock_acquire(&cntr->lock);
	cntr->value++;
	cntr_wake(cntr);
	srd_lock_release(&cntr->lock);
}

void srd_cntr_inc_err(struct srd_cntr *cntr)
{
	srd_lock_acquire(&cntr->lock);
	cntr->err++;
	cntr_wake(cntr);
	srd_lock_release(&cntr->lock);
}

/* Progresses the bound endpoints, then reads one of the two values. */
static uint64_t cntr_progress_read(struct srd_cntr *cntr,
				   const uint64_t *field)
{
	int work = srd_ep_set_progress(&cntr->w.eps);
	uint64_t v;

	srd_lock_acquire(&cntr->lock);
	v = *field;
	/* a value is always handed out: what counts as found is progress's
	 * work, or a value (of either field) that moved since the last read
	 * (another thread drives the endpoints) */
	if (cntr->value + cntr->err != cntr->read_sum) {
		cntr->read_sum = cntr->value + cntr->err;
		work++;
	}
	srd_lock_release(&cntr->lock);
	srd_read_idle(work);
	return v;
}

static uint64_t cntr_read(struct fid_cntr *fid)
{
	return cntr_progress_read(cntr_of(fid), &cntr_of(fid)->value);
}

static uint64_t cntr_readerr(struct fid_cntr *fid)
{
	return cntr_progress_read(cntr_of(fid), &cntr_of(fid)->err);
}

/* fi_poll(3): a counter is reported when it changed since the last
 * fi_poll, fi_cntr_set or fi_cntr_add, so the caller's own update moves
 * the poll set's mark with it (polled is the mark of this field). */
static int cntr_set_value(struct srd_cntr *cntr, uint64_t *field,
			  uint64_t *polled, uint64_t value, bool add)
{
	srd_lock_acquire(&cntr->lock);
	*field = add ? *field + value : value;
	*polled = *field;
	cntr_wake(cntr);
	srd_lock_release(&cntr->lock);
	return 0;
}

static int cntr_add(struct fid_cntr *fid, uint64_t value)
{
	return cntr_set_value(cntr_of(fid), &cntr_of(fid)->value,
			      &cntr_of(fid)->polled_value, value, true);
}

static int cntr_set(struct fid_cntr *fid, uint64_t value)
{
	return cntr_set_value(cntr_of(fid), &cntr_of(fid)->value,
			      &cntr_of(fid)->polled_value, value, false);
}

static int cntr_adderr(struct fid_cntr *fid, uint64_t value)
{
	return cntr_set_value(cntr_of(fid), &cntr_of(fid)->err,
			      &cntr_of(fid)->polled_err, value, true);
}

static int cntr_seterr(struct fid_cntr *fid, uint64_t value)
{
	return cntr_set_value(cntr_of(fid), &cntr_of(fid)->err,
			      &cntr_of(fid)->polled_err, value, false);
}

static int cntr_wait(struct fid_cntr *fid, uint64_t threshold, int timeout)
{
	struct srd_cntr *cntr = cntr_of(fid);
	uint64_t deadline = srd_wait_deadline_ms(timeout);
	uint64_t err0, value;

	if (cntr->wait_obj == FI_WAIT_NONE && timeout < 0)
		return -FI_EINVAL;	/* would spin forever without a wait */
	srd_lock_acquire(&cntr->lock);
	err0 = cntr->err;
	srd_lock_release(&cntr->lock);
	for (;;) {
		uint64_t next;

		srd_ep_set_progress(&cntr->w.eps);
		next = srd_waiter_next_ns(&cntr->w);
		srd_lock_acquire(&cntr->lock);
		if (cntr->value >= threshold || cntr->err != err0) {
			int ret = cntr->value >= threshold ? 0 : -FI_EAVAIL;

			srd_lock_release(&cntr->lock);
			return ret;
		}
		srd_waiter_sleep(&cntr->lock, &cntr->w, next, deadline);
		value = cntr->value;
		srd_lock_release(&cntr->lock);
		if (srd_clock_now_ns() >= deadline && value < threshold)
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

static int cntr_close(struct fid *fid)
{
	struct srd_cntr *cntr = srd_container_of(fid, struct srd_cntr,
						 cntr_fid.fid);

	if (srd_ref_count(&cntr->refs))	/* bound, or in a poll set */
		return -FI_EBUSY;
	srd_ref_put(&cntr->dom->refs);
	srd_waiter_fini(&cntr->w);
	srd_lock_fini(&cntr->lock);
	free(cntr);
	return 0;
}

static int cntr_control(struct fid *fid, int command, void *arg)
{
	struct srd_cntr *cntr = srd_container_of(fid, struct srd_cntr,
						 cntr_fid.fid);
	return srd_waiter_control(&cntr->w, cntr->wait_obj, command, arg);
}

static struct fi_ops srd_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cntr_close,
	.bind = srd_no_bind,
	.control = cntr_control,
	.ops_open = srd_no_ops_open,
};

struct srd_cntr *srd_cntr_of_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_CNTR ||
	    fid->ops != &srd_cntr_fi_ops)
		return NULL;
	return srd_container_of(fid, struct srd_cntr, cntr_fid.fid);
}

bool srd_cntr_take_change(struct srd_cntr *cntr)
{
	if (cntr->value == cntr->polled_value && cntr->err == cntr->polled_err)
		return false;
	cntr->polled_value = cntr->value;
	cntr->polled_err = cntr->err;
	return true;
}

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
	ret = srd_waiter_init(&cntr->w, dom->use_lock);
	if (ret) {
		free(cntr);
		return ret;
	}
	cntr->dom = dom;
	srd_lock_init(&cntr->lock, dom->use_lock);
	cntr->wait_obj = !attr || attr->wait_obj == FI_WAIT_UNSPEC ?
			 FI_WAIT_FD : attr->wait_obj;
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = &srd_cntr_fi_ops;
	cntr->cntr_fid.ops = &srd_cntr_ops;
	srd_ref_get(&dom->refs);
	*cntr_fid = &cntr->cntr_fid;
	return 0;
}
