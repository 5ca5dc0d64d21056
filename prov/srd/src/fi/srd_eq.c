/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_eq.c: event queues.  RDM endpoints raise no connection events, so
 * an EQ carries what the application writes (fi_eq_write) and errors;
 * read, readerr, sread with a timeout, and strerror.  Owns its events.
 */
#include "config.h"
#include "srd_minmax.h"
#include "srd.h"

#include <stdlib.h>

struct srd_eq_event {
	struct srd_dlist entry;
	uint32_t event;
	bool is_err;
	size_t len;
	union {
		struct fi_eq_err_entry err;
		uint8_t data[sizeof(struct fi_eq_cm_entry) + 256];
	};
};

struct srd_eq {
	struct fid_eq eq_fid;
	struct srd_fabric *fabric;
	int refs;			/* AVs and endpoints bound to it */
	pthread_mutex_t lock;
	struct srd_dlist events;
	struct srd_wait wait;
	enum fi_wait_obj wait_obj;
};

static inline struct srd_eq *eq_of(struct fid_eq *fid)
{
	return srd_container_of(fid, struct srd_eq, eq_fid);
}

static ssize_t eq_read(struct fid_eq *fid, uint32_t *event, void *buf,
		       size_t len, uint64_t flags)
{
	struct srd_eq *eq = eq_of(fid);
	struct srd_eq_event *ev;
	ssize_t ret;

	pthread_mutex_lock(&eq->lock);
	if (srd_dlist_empty(&eq->events)) {
		ret = -FI_EAGAIN;
		goto out;
	}
	ev = srd_container_of(eq->events.next, struct srd_eq_event, entry);
	if (ev->is_err) {
		ret = -FI_EAVAIL;
		goto out;
	}
	if (len < ev->len) {
		ret = -FI_ETOOSMALL;
		goto out;
	}
	if (event)
		*event = ev->event;
	if (buf)
		memcpy(buf, ev->data, ev->len);
	ret = (ssize_t)ev->len;
	if (!(flags & FI_PEEK)) {
		srd_dlist_remove(&ev->entry);
		free(ev);
	}
out:
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t eq_readerr(struct fid_eq *fid, struct fi_eq_err_entry *buf,
			  uint64_t flags)
{
	struct srd_eq *eq = eq_of(fid);
	struct srd_eq_event *ev;
	ssize_t ret = -FI_EAGAIN;

	if (!buf)
		return -FI_EINVAL;
	pthread_mutex_lock(&eq->lock);
	if (!srd_dlist_empty(&eq->events)) {
		ev = srd_container_of(eq->events.next, struct srd_eq_event,
				      entry);
		if (ev->is_err) {
			memcpy(buf, &ev->err, sizeof(*buf));
			ret = sizeof(*buf);
			if (!(flags & FI_PEEK)) {
				srd_dlist_remove(&ev->entry);
				free(ev);
			}
		}
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t eq_write(struct fid_eq *fid, uint32_t event, const void *buf,
			size_t len, uint64_t flags)
{
	struct srd_eq *eq = eq_of(fid);
	struct srd_eq_event *ev;

	if (len > sizeof(ev->data) || (len && !buf))
		return -FI_EINVAL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->len = len;
	if (len)
		memcpy(ev->data, buf, len);
	pthread_mutex_lock(&eq->lock);
	srd_dlist_insert_tail(&eq->events, &ev->entry);
	pthread_mutex_unlock(&eq->lock);
	srd_wait_signal(&eq->wait);
	return (ssize_t)len;
}

/* Posts a provider event (err: an error entry) for the application. */
int srd_eq_report(struct fid_eq *eq_fid, uint32_t event, const void *entry,
		  size_t len, bool is_err)
{
	struct srd_eq *eq = eq_of(eq_fid);
	struct srd_eq_event *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->is_err = is_err;
	ev->len = SRD_MIN(len, sizeof(ev->data));
	memcpy(ev->data, entry, ev->len);
	pthread_mutex_lock(&eq->lock);
	srd_dlist_insert_tail(&eq->events, &ev->entry);
	pthread_mutex_unlock(&eq->lock);
	srd_wait_signal(&eq->wait);
	return 0;
}

static ssize_t eq_sread(struct fid_eq *fid, uint32_t *event, void *buf,
			size_t len, int timeout, uint64_t flags)
{
	struct srd_eq *eq = eq_of(fid);
	uint64_t deadline = srd_wait_deadline_ms(timeout);
	ssize_t ret;

	if (eq->wait_obj == FI_WAIT_NONE)
		return -FI_ENOSYS;
	for (;;) {
		srd_wait_drain(&eq->wait);
		ret = eq_read(fid, event, buf, len, flags);
		if (ret != -FI_EAGAIN || srd_clock_now_ns() >= deadline)
			return ret;
		srd_wait_until(eq->wait.epfd, deadline);
	}
}

static const char *eq_strerror(struct fid_eq *fid, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	return srd_strerror_buf(prov_errno, buf, len);
}

static struct fi_ops_eq srd_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

void srd_eq_ref(struct fid_eq *eq_fid)
{
	struct srd_eq *eq = eq_of(eq_fid);

	pthread_mutex_lock(&eq->lock);
	eq->refs++;
	pthread_mutex_unlock(&eq->lock);
}

void srd_eq_unref(struct fid_eq *eq_fid)
{
	struct srd_eq *eq = eq_of(eq_fid);

	pthread_mutex_lock(&eq->lock);
	eq->refs--;
	pthread_mutex_unlock(&eq->lock);
}

static int eq_close(struct fid *fid)
{
	struct srd_eq *eq = srd_container_of(fid, struct srd_eq, eq_fid.fid);
	struct srd_dlist *e;

	if (eq->refs)
		return -FI_EBUSY;
	while ((e = srd_dlist_pop_head(&eq->events)))
		free(srd_container_of(e, struct srd_eq_event, entry));
	srd_wait_fini(&eq->wait);
	pthread_mutex_destroy(&eq->lock);
	pthread_mutex_lock(&eq->fabric->lock);
	eq->fabric->refs--;
	pthread_mutex_unlock(&eq->fabric->lock);
	free(eq);
	return 0;
}

static int eq_control(struct fid *fid, int command, void *arg)
{
	struct srd_eq *eq = srd_container_of(fid, struct srd_eq, eq_fid.fid);

	return srd_wait_control(&eq->wait, eq->wait_obj, command, arg);
}

static struct fi_ops srd_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = srd_no_bind,
	.control = eq_control,
	.ops_open = srd_no_ops_open,
};

int srd_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq_fid, void *context)
{
	struct srd_fabric *fab = srd_container_of(fabric, struct srd_fabric,
						  fabric_fid);
	struct srd_eq *eq;
	int ret;

	if (!attr)
		return -FI_EINVAL;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	ret = srd_wait_init(&eq->wait);
	if (ret) {
		free(eq);
		return ret;
	}
	pthread_mutex_init(&eq->lock, NULL);
	srd_dlist_init(&eq->events);
	eq->fabric = fab;
	eq->wait_obj = attr->wait_obj == FI_WAIT_UNSPEC ? FI_WAIT_FD :
		       attr->wait_obj;
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &srd_eq_fi_ops;
	eq->eq_fid.ops = &srd_eq_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*eq_fid = &eq->eq_fid;
	return 0;
}
