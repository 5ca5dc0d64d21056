/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_cq.c: completion queues: a ring of completions that grows rather
 * than drop one, an error list, the four entry formats, reads that drive
 * progress of the bound endpoints, and sread that sleeps on the wire and
 * the transport's next deadline.  It must not touch operations or peers.
 */
#include "config.h"
#include "srd.h"

#include <stdio.h>
#include <stdlib.h>

static inline struct srd_cq *cq_of(struct fid_cq *cq_fid)
{
	return srd_container_of(cq_fid, struct srd_cq, cq_fid);
}

static size_t cq_count(const struct srd_cq *cq)
{
	return cq->tail - cq->head;
}

/* Without the lock: a writer's entry or error may be seen a moment
 * late (the next read finds it), never one that is not there. */
static bool cq_peek_empty(const struct srd_cq *cq)
{
	return __atomic_load_n(&cq->tail, __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(&cq->head, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&cq->nerrs, __ATOMIC_ACQUIRE);
}

static int cq_grow(struct srd_cq *cq)
{
	size_t cap = cq->ring_cap * 2;
	struct srd_cq_comp *ring = malloc(cap * sizeof(*ring));

	if (!ring)
		return -FI_ENOMEM;
	for (size_t i = 0; i < cq_count(cq); i++)
		ring[i] = cq->ring[(cq->head + i) & (cq->ring_cap - 1)];
	free(cq->ring);
	__atomic_store_n(&cq->tail, cq_count(cq), __ATOMIC_RELAXED);
	__atomic_store_n(&cq->head, 0, __ATOMIC_RELAXED);
	cq->ring = ring;
	cq->ring_cap = cap;
	return 0;
}

/* Advisory (another endpoint may write before the caller does), so
 * read without the lock. */
bool srd_cq_has_room(const struct srd_cq *cq)
{
	return __atomic_load_n(&cq->tail, __ATOMIC_RELAXED) -
	       __atomic_load_n(&cq->head, __ATOMIC_RELAXED) < cq->size;
}

void srd_cq_write(struct srd_cq *cq, void *context, uint64_t flags,
		  size_t len, void *buf, uint64_t data, uint64_t tag,
		  fi_addr_t src)
{
	struct srd_cq_comp *comp;

	if (!cq)
		return;
	srd_lock_acquire_spin(&cq->lock);
	if (cq_count(cq) == cq->ring_cap && cq_grow(cq)) {
		srd_lock_release(&cq->lock);
		SRD_WARN(FI_LOG_CQ, "completion lost: out of memory\n");
		return;
	}
	comp = &cq->ring[cq->tail & (cq->ring_cap - 1)];
	/* head and tail: written under the lock, peeked at without it */
	__atomic_store_n(&cq->tail, cq->tail + 1, __ATOMIC_RELAXED);
	comp->entry.op_context = context;
	comp->entry.flags = flags;
	comp->entry.len = len;
	comp->entry.buf = buf;
	comp->entry.data = data;
	comp->entry.tag = tag;
	comp->src = src;
	srd_waiter_wake(&cq->w);
	srd_lock_release(&cq->lock);
}

void srd_cq_write_err(struct srd_cq *cq, void *context, uint64_t flags,
		      int err, int prov_errno, size_t len, size_t olen,
		      uint64_t data, uint64_t tag, fi_addr_t src)
{
	struct srd_cq_err *e;

	if (!cq)
		return;
	e = calloc(1, sizeof(*e));
	if (!e) {
		SRD_WARN(FI_LOG_CQ, "error completion lost: out of memory\n");
		return;
	}
	e->err.op_context = context;
	e->err.flags = flags;
	e->err.len = len;
	e->err.olen = olen;
	e->err.data = data;
	e->err.tag = tag;
	e->err.err = err < 0 ? -err : err;
	e->err.prov_errno = prov_errno;
	e->src = src;
	srd_lock_acquire(&cq->lock);
	srd_dlist_insert_tail(&cq->errs, &e->entry);
	__atomic_store_n(&cq->nerrs, cq->nerrs + 1, __ATOMIC_RELAXED);
	srd_waiter_wake(&cq->w);
	srd_lock_release(&cq->lock);
}

/* Out of line so that profiles (srd_callgrind.sh) count the hand-over of
 * each completion apart from the polls that find none. */
static __attribute__((noinline)) void
cq_copy_entry(const struct srd_cq *cq, void *buf, size_t i,
	      const struct fi_cq_tagged_entry *src)
{
	switch (cq->format) {
	case FI_CQ_FORMAT_CONTEXT:
		((struct fi_cq_entry *)buf)[i].op_context = src->op_context;
		break;
	case FI_CQ_FORMAT_MSG: {
		struct fi_cq_msg_entry *e = &((struct fi_cq_msg_entry *)buf)[i];

		e->op_context = src->op_context;
		e->flags = src->flags;
		e->len = src->len;
		break;
	}
	case FI_CQ_FORMAT_DATA: {
		struct fi_cq_data_entry *e =
			&((struct fi_cq_data_entry *)buf)[i];

		e->op_context = src->op_context;
		e->flags = src->flags;
		e->len = src->len;
		e->buf = src->buf;
		e->data = src->data;
		break;
	}
	default:
		((struct fi_cq_tagged_entry *)buf)[i] = *src;
		break;
	}
}

/* Pops up to count entries; caller holds the lock. */
static ssize_t cq_pop(struct srd_cq *cq, void *buf, size_t count,
		      fi_addr_t *src)
{
	size_t n = 0;

	if (!srd_dlist_empty(&cq->errs))
		return -FI_EAVAIL;
	while (n < count && cq_count(cq)) {
		struct srd_cq_comp *comp =
			&cq->ring[cq->head & (cq->ring_cap - 1)];

		__atomic_store_n(&cq->head, cq->head + 1, __ATOMIC_RELAXED);

		cq_copy_entry(cq, buf, n, &comp->entry);
		if (src)
			src[n] = comp->src;
		n++;
	}
	return n ? (ssize_t)n : -FI_EAGAIN;
}

static ssize_t cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			   fi_addr_t *src)
{
	struct srd_cq *cq = cq_of(cq_fid);
	ssize_t ret;

	if (!buf && count)
		return -FI_EINVAL;
	/* Progress first only when there is nothing to hand out: a peek
	 * at the ring, which the lock below makes exact. */
	if (cq_peek_empty(cq)) {
		int work = srd_ep_set_progress(&cq->w.eps);

		/* Still nothing: no lock taken, so a thread that polls an
		 * empty CQ does not contend with the one writing to it. */
		if (cq_peek_empty(cq)) {
			srd_read_idle(work);
			return -FI_EAGAIN;
		}
	}
	srd_lock_acquire_spin(&cq->lock);
	ret = cq_pop(cq, buf, count, src);
	srd_lock_release(&cq->lock);
	srd_read_idle(ret > 0 || ret == -FI_EAVAIL);
	return ret;
}

static ssize_t cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return cq_readfrom(cq_fid, buf, count, NULL);
}

/* The caller's entry is as long as its API version made it: up to
 * err_data before 1.5, up to err_data_size before 1.20, with src_addr
 * after (srd reports none: FI_ADDR_NOTAVAIL).  Never more is written.
 * src_addr is reached by its ABI position (srd_fi_compat.h), so a build
 * against headers older than 1.20 fills it for a 1.20 caller too; srd's
 * own copy of the entry (err) is the headers' size and may end before. */
static void cq_err_copy(uint32_t api, struct fi_cq_err_entry *buf,
			const struct fi_cq_err_entry *err)
{
	void *err_data = buf->err_data;	/* the caller's buffer */
	size_t len = offsetof(struct fi_cq_err_entry, err_data_size);
	fi_addr_t none = FI_ADDR_NOTAVAIL;

	if (!srd_api_ge(api, 1, 5)) {
		memcpy(buf, err, len);
		return;
	}
	len += sizeof(buf->err_data_size);
	memcpy(buf, err, len);
	buf->err_data = err_data;
	buf->err_data_size = 0;		/* no provider error data */
	if (srd_api_ge(api, 1, 20))
		memcpy((char *)buf + SRD_CQ_ERR_SRC_ADDR_OFF, &none,
		       sizeof(none));
}

static ssize_t cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf,
			  uint64_t flags)
{
	struct srd_cq *cq = cq_of(cq_fid);
	struct srd_dlist *e;
	struct srd_cq_err *err;
	uint32_t api = cq->dom->api_version;

	if (!buf)
		return -FI_EINVAL;
	srd_lock_acquire(&cq->lock);
	e = srd_dlist_pop_head(&cq->errs);
	if (e)
		__atomic_store_n(&cq->nerrs, cq->nerrs - 1, __ATOMIC_RELAXED);
	srd_lock_release(&cq->lock);
	if (!e)
		return -FI_EAGAIN;
	err = srd_container_of(e, struct srd_cq_err, entry);
	cq_err_copy(api, buf, &err->err);
	free(err);
	return 1;
}

static ssize_t cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			    fi_addr_t *src, const void *cond, int timeout)
{
	struct srd_cq *cq = cq_of(cq_fid);
	uint64_t deadline = srd_wait_deadline_ms(timeout);
	ssize_t ret;

	if (cq->wait_obj == FI_WAIT_NONE)
		return -FI_ENOSYS;
	for (;;) {
		uint64_t next;

		ret = cq_readfrom(cq_fid, buf, count, src);
		if (ret != -FI_EAGAIN)
			return ret;
		next = srd_waiter_next_ns(&cq->w);
		srd_lock_acquire(&cq->lock);
		if (cq->signaled) {
			cq->signaled = false;
			srd_lock_release(&cq->lock);
			return -FI_EAGAIN;
		}
		/* Another thread may have progressed us since the read. */
		if (srd_cq_ready(cq)) {
			srd_lock_release(&cq->lock);
			continue;
		}
		srd_waiter_sleep(&cq->lock, &cq->w, next, deadline);
		srd_lock_release(&cq->lock);
		if (srd_clock_now_ns() >= deadline)
			return cq_readfrom(cq_fid, buf, count, src);
	}
}

static ssize_t cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			const void *cond, int timeout)
{
	return cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *cq_fid)
{
	struct srd_cq *cq = cq_of(cq_fid);

	srd_lock_acquire(&cq->lock);
	cq->signaled = true;
	srd_lock_release(&cq->lock);
	srd_wait_signal(&cq->w.wait);
	return 0;
}

const char *srd_strerror_buf(int prov_errno, char *buf, size_t len)
{
	const char *str = fi_strerror(prov_errno < 0 ? -prov_errno :
				      prov_errno);

	if (!buf || !len)
		return str;
	snprintf(buf, len, "%s", str);
	return buf;
}

static const char *cq_strerror(struct fid_cq *cq_fid, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	return srd_strerror_buf(prov_errno, buf, len);
}

static struct fi_ops_cq srd_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

bool srd_cq_ready(const struct srd_cq *cq)
{
	return cq_count(cq) || !srd_dlist_empty(&cq->errs);
}

int srd_cq_trywait(struct srd_cq *cq)
{
	bool ready;

	srd_ep_set_progress(&cq->w.eps);
	srd_lock_acquire(&cq->lock);
	ready = srd_cq_ready(cq);
	if (!ready)
		srd_wait_drain(&cq->w.wait);
	srd_lock_release(&cq->lock);
	return ready ? -FI_EAGAIN : 0;
}

static int cq_close(struct fid *fid)
{
	struct srd_cq *cq = srd_container_of(fid, struct srd_cq, cq_fid.fid);
	struct srd_dlist *e;

	if (srd_ref_count(&cq->refs))	/* bound, or in a poll set */
		return -FI_EBUSY;
	srd_ref_put(&cq->dom->refs);
	while ((e = srd_dlist_pop_head(&cq->errs)))
		free(srd_container_of(e, struct srd_cq_err, entry));
	srd_waiter_fini(&cq->w);
	srd_lock_fini(&cq->lock);
	free(cq->ring);
	free(cq);
	return 0;
}

static int cq_control(struct fid *fid, int command, void *arg)
{
	struct srd_cq *cq = srd_container_of(fid, struct srd_cq, cq_fid.fid);
	return srd_waiter_control(&cq->w, cq->wait_obj, command, arg);
}

static struct fi_ops srd_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = srd_no_bind,
	.control = cq_control,
	.ops_open = srd_no_ops_open,
};

struct srd_cq *srd_cq_of_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_CQ || fid->ops != &srd_cq_fi_ops)
		return NULL;
	return srd_container_of(fid, struct srd_cq, cq_fid.fid);
}

static int cq_check_attr(const struct fi_cq_attr *attr)
{
	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
	case FI_CQ_FORMAT_MSG:
	case FI_CQ_FORMAT_DATA:
	case FI_CQ_FORMAT_TAGGED:
		break;
	default:
		return -FI_ENOSYS;
	}
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	default:
		return -FI_ENOSYS;
	}
	if (attr->wait_cond != FI_CQ_COND_NONE || (attr->flags & FI_AFFINITY))
		return -FI_ENOSYS;
	return 0;
}

int srd_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq_fid, void *context)
{
	struct srd_domain *dom = srd_container_of(domain, struct srd_domain,
						  domain_fid);
	size_t cap = SRD_CQ_SIZE_DEFAULT;
	struct srd_cq *cq;
	int ret;

	if (!attr || (ret = cq_check_attr(attr)))
		return attr ? ret : -FI_EINVAL;
	while (cap < attr->size)
		cap <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->ring = malloc(cap * sizeof(*cq->ring));
	ret = cq->ring ? srd_waiter_init(&cq->w, dom->use_lock) : -FI_ENOMEM;
	if (ret) {
		free(cq->ring);
		free(cq);
		return ret;
	}
	cq->ring_cap = cap;
	cq->size = attr->size ? attr->size : SRD_CQ_SIZE_DEFAULT;
	cq->dom = dom;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
		     FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->wait_obj = attr->wait_obj == FI_WAIT_UNSPEC ? FI_WAIT_FD :
		       attr->wait_obj;
	srd_dlist_init(&cq->errs);
	srd_lock_init(&cq->lock, dom->use_lock);
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &srd_cq_fi_ops;
	cq->cq_fid.ops = &srd_cq_ops;
	srd_ref_get(&dom->refs);
	*cq_fid = &cq->cq_fid;
	return 0;
}
