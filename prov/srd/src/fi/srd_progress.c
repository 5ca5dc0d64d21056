/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_progress.c: the domain's progress thread.  It keeps every
 * endpoint's transport alive (acks, retransmits, handshakes, peer
 * timeouts) while the application is not calling in, so a rank that
 * computes for minutes is not declared dead by its peers.
 *
 * It never spins, and never waits for an endpoint's lock: one that is
 * taken is the application's at that moment.  Each endpoint the
 * application touched within
 * progress_idle_us is the application's: the thread leaves it alone and
 * only wakes when that window ends.  An endpoint left alone longer is the
 * thread's: its socket joins the thread's epoll set and the thread runs
 * its progress whenever the socket is readable or its next timer is due.
 * A post on an endpoint the thread sleeps on wakes it, so timers the post
 * arms are seen.  The domain's endpoint list is kept here too.
 *
 * A wake-up costs what it finds, not what the domain holds: the thread
 * keeps its endpoints in a heap by when it must look at each next, its
 * epoll set names the endpoint whose socket is readable, and an
 * application that calls in on an endpoint the thread would not look at
 * in time puts it on the thread's touched list.  (It walked every
 * endpoint at every wake-up: 4,762 idle endpoints in a process, and the
 * walk took a third of two cores in sft_scale's server.)
 *
 * Every running thread is also on a process-wide list, so the provider's
 * cleanup (libfabric calls it at exit, just before unloading us) can stop
 * the threads of domains the application never closed: a thread left
 * running in code that is then unmapped crashes the exiting process.
 */
#include "config.h"
#include "srd_minmax.h"
#include "srd.h"

#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>

/* Readable sockets one wait of the thread takes in. */
#define SRD_PROGRESS_EVENTS	64

struct srd_progress {
	pthread_t thread;
	pid_t owner;			/* the process the thread runs in */
	struct srd_dlist all_entry;	/* on progress_all while running */
	struct srd_domain *dom;
	bool running;
	bool stop;
	struct srd_wait all;		/* away endpoints' sockets + wake fd */
	uint64_t until;			/* when the sleeping thread wakes */
	/* The domain's endpoints by when the thread looks at each next
	 * (under the domain lock; each is in it from fi_enable to close). */
	struct srd_heap looks;
	/* Endpoints the application called in on that the thread would
	 * otherwise look at too late (srd_progress_note_app). */
	pthread_mutex_t touched_lock;
	struct srd_dlist touched;
	/* The sockets its last wait found readable, and the endpoint each
	 * watched socket belongs to (by descriptor, under the domain lock:
	 * one closed since the wait is no longer there). */
	int ready[SRD_PROGRESS_EVENTS];
	int nready;
	bool all_ready;			/* the wait failed */
	struct srd_ep **by_fd;
	int by_fd_len;
};

/* The progress thread's nice value (see progress_main). */
#define SRD_PROGRESS_NICE	10

static pthread_mutex_t progress_all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srd_dlist progress_all = { &progress_all, &progress_all };

static uint64_t progress_idle_ns(void)
{
	return (uint64_t)srd_params.progress_idle_us * SRD_NS_PER_US;
}

/* Puts ep on the thread's touched list and wakes the thread unless it
 * wakes within the idle window anyway.  Without the domain lock: the
 * caller holds ep's (srd_progress_note_app). */
static void progress_touch(struct srd_progress *prog, struct srd_ep *ep,
			   uint64_t now)
{
	pthread_mutex_lock(&prog->touched_lock);
	/* (a closed one stays marked: srd_progress_del_ep) */
	if (!ep->touched) {
		ep->touched = true;
		srd_dlist_insert_tail(&prog->touched, &ep->touched_entry);
	}
	pthread_mutex_unlock(&prog->touched_lock);
	if (__atomic_load_n(&prog->until, __ATOMIC_RELAXED) >
	    now + progress_idle_ns()) {
		/* one wake-up is enough */
		__atomic_store_n(&prog->until, now, __ATOMIC_RELAXED);
		srd_wait_signal(&prog->all);
	}
}

/* Caller holds the endpoint's lock, not the domain's: the thread reads
 * last_app_ns and until without it. */
void srd_progress_note_app(struct srd_domain *dom, struct srd_ep *ep)
{
	struct srd_progress *prog = dom->progress;
	uint64_t now = srd_clock_now_ns();

	__atomic_store_n(&ep->last_app_ns, now, __ATOMIC_RELAXED);
	/* The thread looks by the end of the idle window anyway: only an
	 * endpoint it would look at later needs telling (a rank back on an
	 * endpoint the thread kept, which it must hand back).  Both sides
	 * hold ep's lock here (progress_one). */
	if (prog && __atomic_load_n(&ep->thread_look_ns, __ATOMIC_RELAXED) >
		    now + progress_idle_ns())
		progress_touch(prog, ep, now);
}

/* After a step by another thread (srd_progress_stale), which may have
 * armed a timer before the thread's next look at ep (a delayed ack for
 * what it read): the look moves up to it, and a thread asleep past it
 * is woken.  Caller holds the domain lock (the heap's) and ep's. */
static void progress_refile(struct srd_progress *prog, struct srd_ep *ep)
{
	uint64_t d = srd_ep_next_deadline(ep);

	/* (one in the application's window is its own to serve) */
	if (!ep->thread_watch || !srd_heap_node_queued(&ep->thread_look) ||
	    d >= ep->thread_look.key)
		return;
	srd_heap_set(&prog->looks, &ep->thread_look, d);
	__atomic_store_n(&ep->thread_look_ns, d, __ATOMIC_RELAXED);
	if (__atomic_load_n(&prog->until, __ATOMIC_RELAXED) > d) {
		__atomic_store_n(&prog->until, d, __ATOMIC_RELAXED);
		srd_wait_signal(&prog->all);
	}
}

/*
 * Endpoints whose threads are away.  The progress thread runs niced
 * (SRD_PROGRESS_NICE), so where every CPU is busy (a rank per core, one of them
 * computing or checking its data for milliseconds, the others polling)
 * it does not run for ticks at a time, and an endpoint its thread left
 * owes its peers acks that their timers then give up on (two threads
 * with an endpoint each, one checking 8 MiB between transfers: a
 * timeout on each check).  A thread that is polling anyway is the
 * cheaper keeper: when its CQ comes up empty (a counter's read or wait
 * progresses whatever it holds) it progresses, every SRD_EP_STALE_NS / 2
 * at most, the domain's endpoints that no thread has progressed for
 * SRD_EP_STALE_NS.  Only by trylock, on the
 * domain's lock too: an endpoint its own thread or the progress thread
 * holds is not waited for, and a pass already running elsewhere is not
 * repeated.  Completions land in the endpoints' own CQs and counters.
 * The pass gives way to this thread's walk of the list, which holds the
 * domain lock: a walk that the scheduler left off the CPU halfway stops
 * the pass too, until the thread runs again.
 * A pass looks at SRD_EP_STALE_LOOK endpoints from the head of the list
 * and moves each to its tail, so its cost does not grow with the
 * domain: an application that drives a thousand endpoints by hand, one
 * at a time, would otherwise pay a receive call on every one of them
 * per pass (sft_scale, 1,000 endpoints: a warm-up round trip took
 * 95 to 170 ms).  Where there are more, each is looked at every
 * endpoints / SRD_EP_STALE_LOOK passes.
 */
void srd_progress_stale(struct srd_domain *dom)
{
	uint64_t now = srd_clock_now_ns();
	uint64_t next = __atomic_load_n(&dom->stale_next_ns, __ATOMIC_RELAXED);

	if (now < next || !__atomic_compare_exchange_n(&dom->stale_next_ns,
			&next, now + SRD_EP_STALE_NS / 2, false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	if (!srd_lock_try_unwanted(&dom->lock))
		return;
	for (int k = 0; k < SRD_EP_STALE_LOOK && !srd_dlist_empty(&dom->eps);
	     k++) {
		struct srd_dlist *e = srd_dlist_pop_head(&dom->eps);
		struct srd_ep *ep = srd_container_of(e, struct srd_ep,
						     dom_entry);
		int64_t age = (int64_t)(now - __atomic_load_n(
				&ep->progressed_ns, __ATOMIC_RELAXED));

		srd_dlist_insert_tail(&dom->eps, e);
		if (age <= (int64_t)SRD_EP_STALE_NS || !srd_ep_trylock(ep))
			continue;
		srd_ep_progress(ep);
		if (dom->progress)
			progress_refile(dom->progress, ep);
		srd_ep_unlock(ep);
	}
	srd_lock_release(&dom->lock);
}

/*
 * Whether an endpoint the thread keeps needs a step now.  Not when
 * nothing changed since the thread's last step there: its socket was
 * not found readable, its next deadline has not come, and neither the
 * application nor another thread (srd_progress_stale) has called in.
 * A thread that stepped every endpoint at every wake-up spent, with
 * thousands of endpoints in a process, a receive call on each of them
 * every time one of them was due (sft_scale's server: 4,762 endpoints,
 * 21 such processes on two cores, 190-490 us round trips).
 */
static bool progress_due(const struct srd_ep *ep, bool ready, uint64_t last,
			 uint64_t now)
{
	return ready || now >= ep->thread_next_ns ||
	       last != ep->thread_app_ns ||
	       __atomic_load_n(&ep->progressed_ns, __ATOMIC_RELAXED) !=
		       ep->thread_step_ns;
}

/* Watching an endpoint's socket (not where the map cannot grow or
 * epoll refuses it: the thread then reads the socket at least once an
 * idle window, progress_one, and says so once). */
static void progress_watch(struct srd_progress *prog, struct srd_ep *ep,
			   int fd)
{
	char name[64];
	int err;

	if (fd < 0)
		return;
	if (fd >= prog->by_fd_len) {
		int len = SRD_MAX(fd + 1, 2 * prog->by_fd_len);
		struct srd_ep **m = realloc(prog->by_fd,
					    (size_t)len * sizeof(*m));

		if (!m) {
			err = -FI_ENOMEM;
			goto fail;
		}
		memset(m + prog->by_fd_len, 0,
		       (size_t)(len - prog->by_fd_len) * sizeof(*m));
		prog->by_fd = m;
		prog->by_fd_len = len;
	}
	err = srd_wait_add_fd(&prog->all, fd);
	if (err)
		goto fail;
	prog->by_fd[fd] = ep;
	ep->thread_watch = true;
	ep->thread_watch_failed = false;
	return;
fail:
	if (!ep->thread_watch_failed) {
		srd_wire_addr_str(&ep->wire->addr, name, sizeof(name));
		SRD_WARN(FI_LOG_EP_CTRL, "endpoint %s: the progress thread "
			 "cannot watch its socket (%s); while the application "
			 "is away it reads it once every "
			 "FI_SRD_PROGRESS_IDLE_US instead\n", name,
			 fi_strerror(-err));
	}
	ep->thread_watch_failed = true;
}

static void progress_unwatch(struct srd_progress *prog, struct srd_ep *ep,
			     int fd)
{
	if (!ep->thread_watch)
		return;
	srd_wait_del_fd(&prog->all, fd);
	prog->by_fd[fd] = NULL;
	ep->thread_watch = false;
}

/* Hands the endpoint to the thread or back to the application, and
 * returns when the thread must look at it next.  Its socket joins or
 * leaves the thread's epoll set after the endpoint's lock is let go:
 * a niced thread must not sit in a system call with it held. */
static uint64_t progress_one(struct srd_progress *prog, struct srd_ep *ep,
			     bool ready, uint64_t now)
{
	int fd = ep->wire->ops->fd(ep->wire);
	bool serve = true;
	uint64_t last, next;

	/* Taken: the application is on it right now (posting or
	 * progressing); it is the application's, until a look after the
	 * idle window finds it away. */
	if (!srd_ep_trylock(ep)) {
		/* (published without the lock: a call that misses it was
		 * before this look, which comes back within the window) */
		next = now + progress_idle_ns();
		__atomic_store_n(&ep->thread_look_ns, next, __ATOMIC_RELAXED);
		progress_unwatch(prog, ep, fd);
		return next;
	}
	/* Under the lock, as every application call notes itself
	 * (srd_progress_note_app): a call before this sees the thread
	 * see it, a call after sees the look published below. */
	last = __atomic_load_n(&ep->last_app_ns, __ATOMIC_RELAXED);
	if ((int64_t)(now - last) < (int64_t)progress_idle_ns()) {
		serve = false;
		next = last + progress_idle_ns();
		goto out;
	}
	if (ep->thread_watch && !progress_due(ep, ready, last, now)) {
		next = ep->thread_next_ns;
		goto out;
	}
	__atomic_store_n(&ep->thread_holds, true, __ATOMIC_RELAXED);
	__atomic_store_n(&ep->thread_steps, ep->thread_steps + 1,
			 __ATOMIC_RELAXED);
	srd_ep_progress(ep);
	next = srd_ep_next_deadline(ep);
	ep->thread_next_ns = next;
	ep->thread_app_ns = last;
	ep->thread_step_ns = __atomic_load_n(&ep->progressed_ns,
					     __ATOMIC_RELAXED);
	__atomic_store_n(&ep->thread_holds, false, __ATOMIC_RELAXED);
out:
	/* Not before the next round: one whose work is never done (a
	 * backlog, a send waiting for memory: its deadline is now) must
	 * not keep the others waiting in this one. */
	next = SRD_MAX(next, now + 1);
	__atomic_store_n(&ep->thread_look_ns, next, __ATOMIC_RELAXED);
	srd_ep_unlock(ep);
	if (!serve) {
		progress_unwatch(prog, ep, fd);
		return next;
	}
	if (!ep->thread_watch)
		progress_watch(prog, ep, fd);
	/* A socket it could not watch is read at least once a window.
	 * (Earlier than published: a call that misses this only touches
	 * in vain.) */
	if (!ep->thread_watch)
		next = SRD_MIN(next, now + progress_idle_ns());
	return next;
}

/* Looks at ep and files it under its next look. */
static void progress_visit(struct srd_progress *prog, struct srd_ep *ep,
			   bool ready, uint64_t now)
{
	uint64_t next = progress_one(prog, ep, ready, now);

	__atomic_store_n(&ep->thread_looks, ep->thread_looks + 1,
			 __ATOMIC_RELAXED);
	/* queued since fi_enable: moving it allocates nothing */
	srd_heap_set(&prog->looks, &ep->thread_look, next);
}

/* One wake-up's work: the touched endpoints, those whose sockets were
 * readable, those whose look is due; returns when to wake next. */
static uint64_t progress_round(struct srd_progress *prog, uint64_t now)
{
	struct srd_heap_node *top;
	struct srd_dlist touched, *e;

	/* Taken over whole; each stays marked until it is off the list
	 * here, so that a touch meanwhile does not link it elsewhere
	 * (the visit to come answers that touch too). */
	srd_dlist_init(&touched);
	pthread_mutex_lock(&prog->touched_lock);
	while ((e = srd_dlist_pop_head(&prog->touched)))
		srd_dlist_insert_tail(&touched, e);
	pthread_mutex_unlock(&prog->touched_lock);
	while ((e = srd_dlist_pop_head(&touched))) {
		struct srd_ep *ep = srd_container_of(e, struct srd_ep,
						     touched_entry);

		pthread_mutex_lock(&prog->touched_lock);
		ep->touched = false;
		pthread_mutex_unlock(&prog->touched_lock);
		progress_visit(prog, ep, false, now);
	}
	/* the wait failed: which sockets are readable is not known */
	if (prog->all_ready) {
		srd_dlist_foreach(&prog->dom->eps, e)
			progress_visit(prog, srd_container_of(e, struct srd_ep,
							      dom_entry),
				       true, now);
		prog->all_ready = false;
	}
	for (int i = 0; i < prog->nready; i++) {
		int fd = prog->ready[i];

		if (fd < prog->by_fd_len && prog->by_fd[fd])
			progress_visit(prog, prog->by_fd[fd], true, now);
	}
	prog->nready = 0;
	/* Each due one once: a visit files it after now (progress_visit),
	 * and a next round comes after the wait has let the domain lock
	 * go. */
	while ((top = srd_heap_top(&prog->looks)) && top->key <= now)
		progress_visit(prog, srd_container_of(top, struct srd_ep,
						      thread_look),
			       false, now);
	return top ? top->key : UINT64_MAX;
}

/* Sleeps until a kept endpoint's socket is readable, the signal, or
 * until; notes the sockets that were readable (more than it can take
 * stay readable for the next wait). */
static void progress_wait(struct srd_progress *prog, uint64_t until)
{
	struct epoll_event ev[SRD_PROGRESS_EVENTS];
	int n = srd_wait_events(prog->all.epfd, until, ev,
				SRD_PROGRESS_EVENTS);

	prog->nready = 0;
	prog->all_ready = n < 0 && n != -EINTR;
	for (int i = 0; i < n; i++)
		if (ev[i].data.fd != prog->all.efd)
			prog->ready[prog->nready++] = ev[i].data.fd;
}

static void *progress_main(void *arg)
{
	struct srd_domain *dom = arg;
	struct srd_progress *prog = dom->progress;

	/* A background keeper: it must not take much CPU from the ranks of
	 * an oversubscribed node, where a rank is routinely off-CPU for
	 * longer than progress_idle_us, so it runs niced
	 * (SRD_PROGRESS_NICE).  Not SCHED_IDLE: it holds an endpoint's lock
	 * while it progresses it, which the application then waits for
	 * (srd_ep_set_progress), and with every CPU busy a SCHED_IDLE
	 * holder got so little of one that the soak's server (its main
	 * thread waiting, four client processes polling on two cores)
	 * answered nothing for 23 s and its clients failed their peer
	 * timeout.  Niced, a step of a millisecond still ends within tens
	 * of milliseconds.  An unprivileged thread can raise its nice
	 * value but never lower it again, so it is set once. */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid),
			SRD_PROGRESS_NICE))
		SRD_INFO(FI_LOG_DOMAIN, "progress thread keeps its priority\n");
	srd_domain_lock(dom);
	/* stop is also set without the lock (srd_progress_stop_all) */
	while (!__atomic_load_n(&prog->stop, __ATOMIC_ACQUIRE)) {
		uint64_t until = progress_round(prog, srd_clock_now_ns());
		bool touched;

		__atomic_store_n(&prog->until, until, __ATOMIC_RELAXED);
		/* A touch since the round saw the old until and may not have
		 * signalled; one after this look sees the new one (the lock
		 * orders the two).  The wait then returns at once, having
		 * let the domain lock go. */
		pthread_mutex_lock(&prog->touched_lock);
		touched = !srd_dlist_empty(&prog->touched);
		pthread_mutex_unlock(&prog->touched_lock);
		if (touched)
			until = 0;
		srd_domain_unlock(dom);
		progress_wait(prog, until);
		srd_wait_drain(&prog->all);
		srd_domain_lock(dom);
	}
	srd_domain_unlock(dom);
	return NULL;
}

static int progress_create(struct srd_domain *dom)
{
	struct srd_progress *prog = calloc(1, sizeof(*prog));
	int ret;

	if (!prog)
		return -FI_ENOMEM;
	ret = srd_wait_init(&prog->all);
	if (ret) {
		free(prog);
		return ret;
	}
	srd_heap_init(&prog->looks);
	pthread_mutex_init(&prog->touched_lock, NULL);
	srd_dlist_init(&prog->touched);
	dom->progress = prog;
	return 0;
}

static int progress_start(struct srd_domain *dom)
{
	struct srd_progress *prog;
	sigset_t all, mask;
	int ret;

	if (!srd_params.progress_thread || (dom->progress &&
					    dom->progress->running))
		return 0;
	if (!dom->progress && (ret = progress_create(dom)))
		return ret;
	prog = dom->progress;
	prog->dom = dom;
	prog->owner = getpid();
	pthread_mutex_lock(&progress_all_lock);
	/* The thread starts with every signal blocked: a signal sent to the
	 * process (SIGTERM from scancel, SIGINT from Ctrl-C) is then taken by
	 * one of the application's threads, never by the provider's, which
	 * would run the application's handler (exit(), as libinfinipath's
	 * does) from inside progress. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mask);
	ret = pthread_create(&prog->thread, NULL, progress_main, dom);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (!ret) {
		/* what top -H and /proc/PID/task/TID/comm show */
		pthread_setname_np(prog->thread, "srd-progress");
		prog->running = true;
		srd_dlist_insert_tail(&progress_all, &prog->all_entry);
	}
	pthread_mutex_unlock(&progress_all_lock);
	return -ret;
}

/* Stops and joins a running thread; caller holds progress_all_lock and
 * not the domain lock.  In a forked child the thread is the parent's and
 * not here: nothing to stop (the child must not use inherited objects). */
static void progress_halt(struct srd_progress *prog)
{
	srd_dlist_remove(&prog->all_entry);
	prog->running = false;
	if (prog->owner != getpid())
		return;
	srd_domain_lock(prog->dom);
	__atomic_store_n(&prog->stop, true, __ATOMIC_RELEASE);
	srd_domain_unlock(prog->dom);
	srd_wait_signal(&prog->all);
	pthread_join(prog->thread, NULL);
}

/* Caller must not hold the domain lock. */
void srd_progress_stop(struct srd_domain *dom)
{
	struct srd_progress *prog = dom->progress;

	if (!prog)
		return;
	pthread_mutex_lock(&progress_all_lock);
	if (prog->running)
		progress_halt(prog);
	pthread_mutex_unlock(&progress_all_lock);
	srd_wait_fini(&prog->all);
	srd_heap_fini(&prog->looks);
	free(prog->by_fd);
	pthread_mutex_destroy(&prog->touched_lock);
	free(prog);
	dom->progress = NULL;
}

/* The provider's cleanup: stops every thread still running.  Their
 * domains stay as they are (the process is exiting); only the threads
 * must not outlive our code. */
/* At exit a thread may be stuck for good: the thread running the exit
 * (a signal handler called exit(), as libinfinipath's does on SIGTERM)
 * may hold the domain lock, interrupted inside fi_enable or fi_close.
 * So neither the lock is taken nor the join waited on for longer than
 * this; a thread still not back then is waiting for that lock, which
 * nothing releases any more, and never runs provider code again. */
#define SRD_PROGRESS_EXIT_JOIN_NS	(500 * SRD_NS_PER_MS)

static void progress_halt_at_exit(struct srd_progress *prog)
{
	struct timespec until;
	uint64_t ns;

	srd_dlist_remove(&prog->all_entry);
	prog->running = false;
	if (prog->owner != getpid())
		return;
	__atomic_store_n(&prog->stop, true, __ATOMIC_RELEASE);
	srd_wait_signal(&prog->all);
	clock_gettime(CLOCK_REALTIME, &until);
	ns = (uint64_t)until.tv_nsec + SRD_PROGRESS_EXIT_JOIN_NS;
	until.tv_sec += (time_t)(ns / SRD_NS_PER_S);
	until.tv_nsec = (long)(ns % SRD_NS_PER_S);
	if (pthread_timedjoin_np(prog->thread, NULL, &until))
		SRD_INFO(FI_LOG_DOMAIN,
			 "exit: a progress thread waits for a domain lock the exiting thread holds; left behind\n");
}

void srd_progress_stop_all(void)
{
	pthread_mutex_lock(&progress_all_lock);
	while (!srd_dlist_empty(&progress_all))
		progress_halt_at_exit(srd_container_of(progress_all.next,
						       struct srd_progress,
						       all_entry));
	pthread_mutex_unlock(&progress_all_lock);
}

/* Caller holds the domain lock. */
int srd_progress_add_ep(struct srd_domain *dom, struct srd_ep *ep)
{
	int ret = progress_start(dom);
	uint64_t now = srd_clock_now_ns();

	if (ret)
		return ret;
	srd_heap_node_init(&ep->thread_look);
	ep->touched = false;
	/* looked at on the thread's next wake-up */
	if (dom->progress && srd_heap_set(&dom->progress->looks,
					  &ep->thread_look, now))
		return -FI_ENOMEM;
	__atomic_store_n(&ep->thread_look_ns, now, __ATOMIC_RELAXED);
	__atomic_store_n(&ep->last_app_ns, now, __ATOMIC_RELAXED);
	srd_dlist_insert_tail(&dom->eps, &ep->dom_entry);
	if (dom->progress)
		srd_wait_signal(&dom->progress->all);	/* a new endpoint */
	return 0;
}

/* Caller holds the domain lock. */
void srd_progress_del_ep(struct srd_domain *dom, struct srd_ep *ep)
{
	struct srd_progress *prog = dom->progress;

	srd_dlist_remove(&ep->dom_entry);
	if (prog) {
		progress_unwatch(prog, ep, ep->wire->ops->fd(ep->wire));
		if (srd_heap_node_queued(&ep->thread_look))
			srd_heap_remove(&prog->looks, &ep->thread_look);
		/* Until it leaves its CQs' sets, another thread's read may
		 * still call in on it (srd_progress_note_app): marked as on
		 * the list, and not on it, it is never linked again. */
		__atomic_store_n(&ep->thread_look_ns, 0, __ATOMIC_SEQ_CST);
		pthread_mutex_lock(&prog->touched_lock);
		if (ep->touched)
			srd_dlist_remove(&ep->touched_entry);
		ep->touched = true;
		pthread_mutex_unlock(&prog->touched_lock);
	}
	ep->thread_watch = false;
}
