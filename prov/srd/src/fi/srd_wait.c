/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_wait.c: sleeping without spinning: an epoll set (wire sockets plus
 * an eventfd for signals) and a wait with a nanosecond deadline, so that a
 * thread in fi_cq_sread wakes for packets, for fi_cq_signal and for the
 * transport's next timer, whichever comes first; and the waiting side
 * that CQs and counters share (struct srd_waiter: their bound endpoints,
 * which reading progresses, and their sleepers); and a polling thread's
 * yield of the CPU (srd_read_idle).  Owns its two fds and
 * the endpoint sets; it must not touch an endpoint's state beyond
 * progressing it.
 */
#include "config.h"
#include "srd.h"

#include <sched.h>
#include <stdlib.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

int srd_wait_init(struct srd_wait *wait)
{
	wait->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (wait->epfd < 0)
		return -errno;
	wait->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (wait->efd < 0 || srd_wait_add_fd(wait, wait->efd)) {
		int ret = -errno;

		srd_wait_fini(wait);
		return ret ? ret : -FI_EOTHER;
	}
	return 0;
}

void srd_wait_fini(struct srd_wait *wait)
{
	if (wait->efd >= 0)
		close(wait->efd);
	if (wait->epfd >= 0)
		close(wait->epfd);
	wait->efd = wait->epfd = -1;
}

int srd_wait_add_fd(struct srd_wait *wait, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (fd < 0)
		return 0;
	if (epoll_ctl(wait->epfd, EPOLL_CTL_ADD, fd, &ev) && errno != EEXIST)
		return -errno;
	return 0;
}

void srd_wait_del_fd(struct srd_wait *wait, int fd)
{
	if (fd >= 0)
		epoll_ctl(wait->epfd, EPOLL_CTL_DEL, fd, NULL);
}

void srd_wait_signal(struct srd_wait *wait)
{
	uint64_t one = 1;

	if (write(wait->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		SRD_WARN(FI_LOG_CQ, "eventfd write failed\n");
}

void srd_wait_drain(struct srd_wait *wait)
{
	uint64_t v;

	while (read(wait->efd, &v, sizeof(v)) > 0)
		;
}

uint64_t srd_wait_deadline_ms(int timeout_ms)
{
	if (timeout_ms < 0)
		return UINT64_MAX;
	return srd_clock_now_ns() + (uint64_t)timeout_ms * SRD_NS_PER_MS;
}

/* epoll_pwait2 takes a nanosecond timeout; where the kernel (or valgrind)
 * lacks it, epoll_wait rounds the timeout up to whole milliseconds. */
static int wait_ms_fallback(int epfd, struct epoll_event *ev, int n,
			    const struct timespec *ts)
{
	int ms = -1;

	if (ts)
		ms = (int)(ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000);
	return epoll_wait(epfd, ev, n, ms);
}

int srd_wait_until(int epfd, uint64_t deadline_ns)
{
	struct epoll_event ev[4];
	int n = srd_wait_events(epfd, deadline_ns, ev, 4);

	return n == -EINTR ? 1 : n;
}

int srd_wait_events(int epfd, uint64_t deadline_ns, struct epoll_event *ev,
		    int max)
{
	struct timespec ts, *tsp = NULL;
	uint64_t now = srd_clock_now_ns();
	int n = -1;

	if (deadline_ns != UINT64_MAX) {
		uint64_t left = deadline_ns > now ? deadline_ns - now : 0;

		ts.tv_sec = (time_t)(left / SRD_NS_PER_S);
		ts.tv_nsec = (long)(left % SRD_NS_PER_S);
		tsp = &ts;
	}
#ifdef HAVE_EPOLL_PWAIT2
	static bool no_pwait2;

	if (!no_pwait2) {
		n = epoll_pwait2(epfd, ev, max, tsp, NULL);
		if (n < 0 && errno == ENOSYS)
			no_pwait2 = true;
	}
	if (no_pwait2)
#endif
		n = wait_ms_fallback(epfd, ev, max, tsp);
	return n < 0 ? -errno : n;
}

int srd_wait_control(struct srd_wait *wait, enum fi_wait_obj obj,
		     int command, void *arg)
{
	switch (command) {
	case FI_GETWAIT:
		if (obj != FI_WAIT_FD || !arg)
			return -FI_ENODATA;
		/* An epoll fd: readable when a bound socket or the signal is. */
		*(int *)arg = wait->epfd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}


/* --- locks (srd.h: Locking) ---------------------------------------------- */

void srd_lock_init(struct srd_lock *l, bool on)
{
	pthread_mutexattr_t attr;

	l->on = on;
	l->wanted = 0;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&l->m, &attr);
	pthread_mutexattr_destroy(&attr);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

void srd_lock_acquire_slow(struct srd_lock *l)
{
	uint64_t until = srd_clock_now_ns() + SRD_LOCK_SPIN_NS;

	__atomic_add_fetch(&l->wanted, 1, __ATOMIC_RELAXED);
	do {
		for (int i = 0; i < 4; i++)
			cpu_relax();
		if (!pthread_mutex_trylock(&l->m))
			goto out;
	} while (srd_clock_now_ns() < until);
	pthread_mutex_lock(&l->m);
out:
	__atomic_sub_fetch(&l->wanted, 1, __ATOMIC_RELAXED);
}

void srd_lock_fini(struct srd_lock *l)
{
	pthread_mutex_destroy(&l->m);
}

int srd_rwlock_init(struct srd_rwlock *l, bool on)
{
	pthread_rwlockattr_t attr;
	int ret;

	l->on = on;
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	ret = pthread_rwlock_init(&l->rw, &attr);
	pthread_rwlockattr_destroy(&attr);
	return -ret;
}

void srd_rwlock_fini(struct srd_rwlock *l)
{
	pthread_rwlock_destroy(&l->rw);
}

int srd_waiter_init(struct srd_waiter *w, bool use_lock)
{
	int ret = srd_wait_init(&w->wait);

	if (ret)
		return ret;
	ret = srd_rwlock_init(&w->eps.lock, use_lock);
	if (ret)
		srd_wait_fini(&w->wait);
	return ret;
}

void srd_waiter_fini(struct srd_waiter *w)
{
	srd_wait_fini(&w->wait);
	srd_rwlock_fini(&w->eps.lock);
	free(w->eps.eps);
}

int srd_waiter_control(struct srd_waiter *w, enum fi_wait_obj obj,
		       int command, void *arg)
{
	int ret = srd_wait_control(&w->wait, obj, command, arg);

	/* Someone may now poll our fd: every completion or update must
	 * signal it. */
	if (!ret && command == FI_GETWAIT)
		w->fd_exported = true;
	return ret;
}

/* --- the endpoints a CQ or counter waits on ------------------------------ */

/* Progresses each endpoint whose lock is free: one that an application
 * thread holds is being progressed or posted to right now, and waiting
 * for it would only queue this poller behind that one.  One that the
 * progress thread holds is waited for: that thread runs niced, and a
 * poller that spun past it instead would keep it off the CPU, lock
 * held, on a busy core (priority inversion: no progress at all). */
int srd_ep_set_progress(struct srd_ep_set *set)
{
	struct srd_domain *dom = NULL;
	int work = 0;

	srd_rwlock_read(&set->lock);
	for (int i = 0; i < set->count; i++) {
		struct srd_ep *ep = set->eps[i];

		if (!srd_ep_trylock(ep)) {
			if (!__atomic_load_n(&ep->thread_holds,
					     __ATOMIC_RELAXED))
				continue;
			srd_ep_lock(ep);
		}
		srd_progress_note_app(ep->dom, ep);
		work += srd_ep_progress(ep);
		srd_ep_unlock(ep);
	}
	if (set->count)
		dom = set->eps[0]->dom;
	srd_rwlock_release(&set->lock);
	/* outside the set's lock, which closes wait for: the domain
	 * outlives the CQ or counter the caller reads */
	if (dom)
		srd_progress_stale(dom);
	return work;
}

/* This thread's wait: since when its reads of CQs, counters and poll
 * sets have found nothing to do (0: the last one found something), and
 * when it last read one (a read after a longer gap, e.g. after
 * computing or sleeping in fi_cq_sread, starts a new wait).  The gap is
 * at least SRD_READ_GAP_NS: it is measured to the end of a read, whose
 * own progress (a receive call per endpoint) may take longer than a
 * small FI_SRD_POLL_YIELD_US, and must not pass for one. */
#define SRD_READ_GAP_NS		(1 * SRD_NS_PER_MS)
static __thread uint64_t read_idle_since_ns, read_last_ns;

/* A thread that has polled for poll_yield_us and found nothing to do
 * yields the CPU at each further empty read.  The transport's acks come
 * from the peer's process, not from a kernel: where ranks outnumber
 * cores, a rank that spins without yielding keeps the peer it waits for
 * off its core until the scheduler's tick (Open MPI's blocking send
 * waits for its send's completion so, without yielding: osu_multi_lat,
 * 4 ranks on 2 cores, 8 and 16 KiB took 0.2 to 0.8 ms per message, 18 to
 * 31 us with this).  On a core of its own the yield returns at once,
 * and it costs a system call per read only once the wait has lasted
 * that long.  Caller holds no lock. */
void srd_read_idle(int work)
{
	uint64_t now, gap_ns, yield_ns = (uint64_t)srd_params.poll_yield_us *
					 SRD_NS_PER_US;

	if (!yield_ns)
		return;
	if (work) {
		read_idle_since_ns = 0;
		return;
	}
	now = srd_clock_now_ns();
	gap_ns = yield_ns > SRD_READ_GAP_NS ? yield_ns : SRD_READ_GAP_NS;
	if (!read_idle_since_ns || now - read_last_ns > gap_ns) {
		read_idle_since_ns = now;
	} else if (now - read_idle_since_ns >= yield_ns) {
		sched_yield();
		now = srd_clock_now_ns();	/* the others' turn is no gap */
	}
	read_last_ns = now;
}

int srd_ep_set_add(struct srd_ep_set *set, struct srd_wait *wait,
		   struct srd_ep *ep)
{
	struct srd_ep **eps;
	int ret = 0;

	srd_rwlock_write(&set->lock);
	for (int i = 0; i < set->count; i++)
		if (set->eps[i] == ep)
			goto out;
	eps = realloc(set->eps, (size_t)(set->count + 1) * sizeof(*eps));
	if (!eps) {
		ret = -FI_ENOMEM;
		goto out;
	}
	set->eps = eps;
	set->eps[set->count++] = ep;
	ret = srd_wait_add_fd(wait, ep->wire->ops->fd(ep->wire));
out:
	srd_rwlock_release(&set->lock);
	return ret;
}

/* Once it returns, no poller of the set is inside ep. */
void srd_ep_set_del(struct srd_ep_set *set, struct srd_wait *wait,
		    struct srd_ep *ep)
{
	srd_rwlock_write(&set->lock);
	for (int i = 0; i < set->count; i++) {
		if (set->eps[i] != ep)
			continue;
		set->eps[i] = set->eps[--set->count];
		srd_wait_del_fd(wait, ep->wire->ops->fd(ep->wire));
		break;
	}
	srd_rwlock_release(&set->lock);
}

/* The endpoints' next timer.  One whose lock is taken is in another
 * thread's hands, which may be a post that does not progress it: look
 * again soon. */
uint64_t srd_waiter_next_ns(struct srd_waiter *w)
{
	uint64_t next = UINT64_MAX;

	srd_rwlock_read(&w->eps.lock);
	for (int i = 0; i < w->eps.count; i++) {
		struct srd_ep *ep = w->eps.eps[i];
		uint64_t d;

		if (srd_ep_trylock(ep)) {
			d = srd_ep_next_deadline(ep);
			srd_ep_unlock(ep);
		} else {
			d = srd_clock_now_ns() + SRD_EP_POST_POLL_NS;
		}
		next = SRD_MIN(d, next);
	}
	srd_rwlock_release(&w->eps.lock);
	return next;
}

void srd_waiter_sleep(struct srd_lock *held, struct srd_waiter *w,
		      uint64_t next_ns, uint64_t deadline_ns)
{
	srd_wait_drain(&w->wait);
	w->sleepers++;
	srd_lock_release(held);
	if (srd_clock_now_ns() < deadline_ns)
		srd_wait_until(w->wait.epfd, SRD_MIN(next_ns, deadline_ns));
	srd_lock_acquire(held);
	w->sleepers--;
}
