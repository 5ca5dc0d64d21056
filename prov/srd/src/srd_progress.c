/*
 * srd_progress.c: the domain's progress thread.  It keeps every
 * endpoint's transport alive (acks, retransmits, handshakes, peer
 * timeouts) while the application is not calling in, so a rank that
 * computes for minutes is not declared dead by its peers.
 *
 * It never spins: while the application is active (it called within
 * progress_idle_us) the thread only sleeps until that window ends; once
 * the application is away it sleeps on the endpoints' sockets and the
 * transports' next deadline, and runs progress when either fires.
 * The endpoint list itself is kept here for the domain.
 */
#include "config.h"
#include "srd.h"

#include <stdlib.h>

struct srd_progress {
	pthread_t thread;
	bool running;
	bool stop;
	struct srd_wait all;		/* wire fds + wake eventfd */
	struct srd_wait idle;		/* wake eventfd only */
};

static uint64_t progress_deadline(struct srd_domain *dom)
{
	uint64_t next = UINT64_MAX;
	struct srd_dlist *e;

	srd_dlist_foreach(&dom->eps, e) {
		struct srd_ep *ep = srd_container_of(e, struct srd_ep,
						     dom_entry);
		uint64_t d = srd_ep_next_deadline(ep);

		next = d < next ? d : next;
	}
	return next;
}

static void progress_all_eps(struct srd_domain *dom)
{
	struct srd_dlist *e;

	srd_dlist_foreach(&dom->eps, e)
		srd_ep_progress(srd_container_of(e, struct srd_ep, dom_entry));
}

static void *progress_main(void *arg)
{
	struct srd_domain *dom = arg;
	struct srd_progress *prog = dom->progress;
	uint64_t idle_ns = (uint64_t)srd_params.progress_idle_us *
			   SRD_NS_PER_US;

	pthread_mutex_lock(&dom->lock);
	while (!prog->stop) {
		uint64_t now = srd_clock_now_ns();
		bool app_away = now - dom->last_app_ns >= idle_ns;
		uint64_t until;

		if (app_away)
			progress_all_eps(dom);
		until = app_away ? progress_deadline(dom) :
				   dom->last_app_ns + idle_ns;
		pthread_mutex_unlock(&dom->lock);
		srd_wait_until(app_away ? prog->all.epfd : prog->idle.epfd,
			       until);
		srd_wait_drain(&prog->all);
		pthread_mutex_lock(&dom->lock);
	}
	pthread_mutex_unlock(&dom->lock);
	return NULL;
}

static int progress_create(struct srd_domain *dom)
{
	struct srd_progress *prog = calloc(1, sizeof(*prog));
	int ret;

	if (!prog)
		return -FI_ENOMEM;
	ret = srd_wait_init(&prog->all);
	if (ret)
		goto err_free;
	ret = srd_wait_init(&prog->idle);
	if (ret)
		goto err_all;
	/* One eventfd wakes both sets. */
	ret = srd_wait_add_fd(&prog->idle, prog->all.efd);
	if (ret)
		goto err_idle;
	dom->progress = prog;
	return 0;
err_idle:
	srd_wait_fini(&prog->idle);
err_all:
	srd_wait_fini(&prog->all);
err_free:
	free(prog);
	return ret;
}

int srd_progress_start(struct srd_domain *dom)
{
	int ret;

	if (!srd_params.progress_thread || (dom->progress &&
					    dom->progress->running))
		return 0;
	if (!dom->progress && (ret = progress_create(dom)))
		return ret;
	dom->last_app_ns = srd_clock_now_ns();
	ret = pthread_create(&dom->progress->thread, NULL, progress_main, dom);
	if (ret)
		return -ret;
	dom->progress->running = true;
	return 0;
}

/* Caller must not hold the domain lock. */
void srd_progress_stop(struct srd_domain *dom)
{
	struct srd_progress *prog = dom->progress;

	if (!prog)
		return;
	if (prog->running) {
		pthread_mutex_lock(&dom->lock);
		prog->stop = true;
		pthread_mutex_unlock(&dom->lock);
		srd_wait_signal(&prog->all);
		pthread_join(prog->thread, NULL);
	}
	srd_wait_fini(&prog->idle);
	srd_wait_fini(&prog->all);
	free(prog);
	dom->progress = NULL;
}

/* Caller holds the domain lock. */
int srd_progress_add_ep(struct srd_domain *dom, struct srd_ep *ep)
{
	int ret = srd_progress_start(dom);

	if (ret)
		return ret;
	srd_dlist_insert_tail(&dom->eps, &ep->dom_entry);
	if (!dom->progress)
		return 0;
	ret = srd_wait_add_fd(&dom->progress->all, ep->wire->ops->fd(ep->wire));
	srd_wait_signal(&dom->progress->all);
	return ret;
}

/* Caller holds the domain lock. */
void srd_progress_del_ep(struct srd_domain *dom, struct srd_ep *ep)
{
	srd_dlist_remove(&ep->dom_entry);
	if (dom->progress)
		srd_wait_del_fd(&dom->progress->all,
				ep->wire->ops->fd(ep->wire));
}
