/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_nccl_net: drives an NCCL network plugin (aws-ofi-nccl's
 * libnccl-net.so, or any plugin exporting ncclNetPlugin_v8) the way
 * NCCL's proxy thread does, with host memory only, so that a plugin
 * running over srd (or any libfabric provider) can be tested on a
 * machine without GPUs and without NCCL.
 *
 * Owns: its own copy of the shape of NCCL's public ext-net v8 ABI (the
 * ops table and the properties struct, written here from the field
 * order the API defines; no NCCL or plugin header is included, so the
 * program builds with a C compiler and libdl alone), two ranks (two
 * processes by default, two threads of one process with -T) that
 * exchange their listen handles over a socketpair, and the checks.
 * Must not touch: libfabric directly (everything goes through the
 * plugin), GPU memory.
 *
 * Per size of -s: an untimed check phase (-c round trips, a new pattern
 * per iteration and direction, every byte checked, the received size
 * checked, and 64 guard bytes past the message checked untouched), a
 * timed ping-pong (-i iterations; half round trip in microseconds,
 * median and mean over the iterations; the last message checked byte
 * for byte) and a timed stream (-n windows of -w isends from rank 0 to
 * rank 1, each window acknowledged by a 0-byte message; MB/s = 10^6
 * bytes per second from the median and from the mean window time)
 * followed by an untimed window with a distinct pattern per slot, every
 * byte checked.  The median is there for loaded machines, where a
 * preempted rank inflates the mean.  A watchdog (-t, alarm()) names
 * the phase and the last plugin call when it fires; a rank whose peer
 * process has exited stops instead of waiting for it.
 *
 * Build (see fabtests/nccl/README.md): cc -O2 -Wall -Wextra -pthread
 *   -o sft_nccl_net sft_nccl_net.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the ext-net v8 ABI, as NCCL defines its shape ---- */

#define SNN_HANDLE_BYTES 128	/* NCCL_NET_HANDLE_MAXSIZE */
#define SNN_PTR_HOST 0x1
#define SNN_PTR_CUDA 0x2
#define SNN_PTR_DMABUF 0x4
#define SNN_LOG_WARN 2		/* ncclDebugLogLevel values */
#define SNN_LOG_INFO 3

typedef int snn_result;		/* ncclResult_t: 0 is success */
typedef void (*snn_logger)(int level, unsigned long flags, const char *file,
			   int line, const char *fmt, ...);

struct snn_props_v8 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int speed;		/* Mb/s */
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int net_device_type;
	int net_device_version;
};

struct snn_net_v8 {
	const char *name;
	snn_result (*init)(snn_logger log);
	snn_result (*devices)(int *ndev);
	snn_result (*get_properties)(int dev, struct snn_props_v8 *props);
	snn_result (*listen)(int dev, void *handle, void **lcomm);
	snn_result (*connect)(int dev, void *handle, void **scomm, void **sdev);
	snn_result (*accept)(void *lcomm, void **rcomm, void **rdev);
	snn_result (*reg_mr)(void *comm, void *data, size_t size, int type,
			     void **mh);
	snn_result (*reg_mr_dmabuf)(void *comm, void *data, size_t size,
				    int type, uint64_t off, int fd, void **mh);
	snn_result (*dereg_mr)(void *comm, void *mh);
	snn_result (*isend)(void *scomm, void *data, int size, int tag,
			    void *mh, void **req);
	snn_result (*irecv)(void *rcomm, int n, void **data, int *sizes,
			    int *tags, void **mhs, void **req);
	snn_result (*iflush)(void *rcomm, int n, void **data, int *sizes,
			     void **mhs, void **req);
	snn_result (*test)(void *req, int *done, int *size);
	snn_result (*close_send)(void *scomm);
	snn_result (*close_recv)(void *rcomm);
	snn_result (*close_listen)(void *lcomm);
	void *get_device_mr;
	void *irecv_consumed;
};

/* ---- options, watchdog, logging ---- */

#define SNN_MAX_SIZES 32
#define SNN_GUARD 64
#define SNN_TAG 7
#define SNN_GUARD_BYTE 0xee
#define SNN_PEER_CHECK_SPINS 65536	/* test() calls between peer checks */

struct snn_opts {
	const char *plugin;
	size_t sizes[SNN_MAX_SIZES];
	int nsizes;
	int iters, checks, window, windows;
	int dev, timeout, threads, props_only, verbose;
};

static struct snn_opts opt = {
	.plugin = "libnccl-net.so",
	.iters = 200, .checks = 5, .window = 16, .windows = 20,
	.timeout = 120,
};
static const struct snn_net_v8 *net;
static volatile const char *step[2] = { "start", "start" };	/* phase */
static volatile const char *call[2] = { "-", "-" };	/* last plugin call */
static int self = -1;		/* this process's rank; -1: both (threads) */

static void snn_die(int rank, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL sft_nccl_net rank %d: ", rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	_exit(1);
}

static void snn_alarm(int sig)
{
	char msg[256];
	int len;

	(void)sig;
	if (self >= 0)
		len = snprintf(msg, sizeof(msg),
			       "FAIL sft_nccl_net rank %d: watchdog (%d s) "
			       "in '%s' (%s)\n", self, opt.timeout,
			       (const char *)step[self],
			       (const char *)call[self]);
	else
		len = snprintf(msg, sizeof(msg),
			       "FAIL sft_nccl_net: watchdog (%d s): rank 0 in "
			       "'%s' (%s), rank 1 in '%s' (%s)\n", opt.timeout,
			       (const char *)step[0], (const char *)call[0],
			       (const char *)step[1], (const char *)call[1]);
	if (write(2, msg, (size_t)len) < 0)
		_exit(3);
	_exit(3);
}

static void snn_log(int level, unsigned long flags, const char *file,
		    int line, const char *fmt, ...)
{
	va_list ap;

	(void)flags;
	if (level > (opt.verbose ? SNN_LOG_INFO : SNN_LOG_WARN) || level == 0)
		return;
	fprintf(stderr, "plugin %s %s:%d: ",
		level == SNN_LOG_WARN ? "WARN" : "INFO", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define SNN_CALL(rank, what, expr) do {					\
	call[rank] = what;						\
	snn_result r_ = (expr);						\
	if (r_ != 0)							\
		snn_die(rank, "%s returned ncclResult %d", what, r_);	\
} while (0)

static double snn_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* ---- patterns ---- */

static uint8_t snn_byte(uint64_t seed, size_t i)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;

	x ^= x >> 29;
	return (uint8_t)(x ^ (x >> 17));
}

static void snn_fill(uint8_t *buf, size_t size, uint64_t seed)
{
	for (size_t i = 0; i < size; i++)
		buf[i] = snn_byte(seed, i);
}

static uint64_t snn_seed(size_t size, int iter, int dir, int slot)
{
	return ((uint64_t)size << 24) ^ ((uint64_t)iter << 8) ^
	       ((uint64_t)slot << 2) ^ (uint64_t)dir;
}

/* Clears the message and arms the guard bytes behind it. */
static void snn_arm(uint8_t *buf, size_t size)
{
	memset(buf, 0, size);
	memset(buf + size, SNN_GUARD_BYTE, SNN_GUARD);
}

static void snn_verify(int rank, const uint8_t *buf, size_t size,
		       uint64_t seed, const char *what)
{
	for (size_t i = 0; i < size; i++)
		if (buf[i] != snn_byte(seed, i))
			snn_die(rank, "%s: size %zu: byte %zu is 0x%02x, "
				"expected 0x%02x", what, size, i, buf[i],
				snn_byte(seed, i));
	for (size_t i = 0; i < SNN_GUARD; i++)
		if (buf[size + i] != SNN_GUARD_BYTE)
			snn_die(rank, "%s: size %zu: guard byte %zu past the "
				"message was overwritten", what, size, i);
}

/* ---- one rank ---- */

struct snn_rank {
	int rank, fd;
	void *lcomm, *scomm, *rcomm;
	uint8_t *sbuf, *rbuf;	/* window slots of slot_bytes each */
	size_t slot_bytes;
	void *smh, *rmh;
};

/*
 * End of file on the out-of-band socket means the other process exited
 * (it failed, or it would be waiting in the teardown exchange): stop
 * too rather than wait for the watchdog.  A byte there (the peer's
 * teardown byte, sent while this rank still waits) is left unread.
 */
static void snn_check_peer(struct snn_rank *r)
{
	struct pollfd p = { .fd = r->fd, .events = POLLIN };
	char c;

	if (self < 0 || poll(&p, 1, 0) <= 0)
		return;
	if (recv(r->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
		snn_die(r->rank, "in '%s' (%s): the other rank exited",
			(const char *)step[r->rank],
			(const char *)call[r->rank]);
}

static void snn_wait(struct snn_rank *r, void *req, int *size)
{
	int done = 0;

	for (unsigned long spin = 1; !done; spin++) {
		SNN_CALL(r->rank, "test", net->test(req, &done, size));
		if (!done && spin % SNN_PEER_CHECK_SPINS == 0)
			snn_check_peer(r);
	}
}

static void *snn_isend(struct snn_rank *r, void *buf, size_t size)
{
	void *req = NULL;

	while (!req)
		SNN_CALL(r->rank, "isend",
			 net->isend(r->scomm, buf, (int)size, SNN_TAG, r->smh,
				    &req));
	return req;
}

static void *snn_irecv(struct snn_rank *r, void *buf, size_t size)
{
	void *req = NULL;
	int sz = (int)size, tag = SNN_TAG;

	while (!req)
		SNN_CALL(r->rank, "irecv",
			 net->irecv(r->rcomm, 1, &buf, &sz, &tag, &r->rmh,
				    &req));
	return req;
}

static void snn_recv_check(struct snn_rank *r, void *req, size_t size)
{
	int got = -1;

	snn_wait(r, req, &got);
	if (got != (int)size)
		snn_die(r->rank, "test reported %d bytes received, sent %zu",
			got, size);
}

static void snn_xfer_fd(struct snn_rank *r, void *out, void *in, size_t len)
{
	if (write(r->fd, out, len) != (ssize_t)len)
		snn_die(r->rank, "out-of-band write: %s", strerror(errno));
	for (size_t got = 0; got < len;) {
		ssize_t n = read(r->fd, (char *)in + got, len - got);

		if (n <= 0)
			snn_die(r->rank, "out-of-band read: %s",
				n ? strerror(errno) : "peer gone");
		got += (size_t)n;
	}
}

/* listen, swap handles, then connect and accept until both are up. */
static void snn_connect(struct snn_rank *r)
{
	char mine[SNN_HANDLE_BYTES] = { 0 }, peer[SNN_HANDLE_BYTES];
	void *sdev = NULL, *rdev = NULL;

	step[r->rank] = "connect";
	SNN_CALL(r->rank, "listen", net->listen(opt.dev, mine, &r->lcomm));
	call[r->rank] = "handle exchange";
	snn_xfer_fd(r, mine, peer, sizeof(mine));
	while (!r->scomm || !r->rcomm) {
		if (!r->scomm)
			SNN_CALL(r->rank, "connect",
				 net->connect(opt.dev, peer, &r->scomm, &sdev));
		if (!r->rcomm)
			SNN_CALL(r->rank, "accept",
				 net->accept(r->lcomm, &r->rcomm, &rdev));
	}
}

static void snn_setup_mem(struct snn_rank *r)
{
	size_t max = 1, total;

	for (int i = 0; i < opt.nsizes; i++)
		if (opt.sizes[i] > max)
			max = opt.sizes[i];
	r->slot_bytes = (max + SNN_GUARD + 63) & ~(size_t)63;
	total = r->slot_bytes * (size_t)opt.window;
	r->sbuf = aligned_alloc(4096, (total + 4095) & ~(size_t)4095);
	r->rbuf = aligned_alloc(4096, (total + 4095) & ~(size_t)4095);
	if (!r->sbuf || !r->rbuf)
		snn_die(r->rank, "out of memory (%zu bytes)", 2 * total);
	step[r->rank] = "regMr";
	SNN_CALL(r->rank, "regMr(send)",
		 net->reg_mr(r->scomm, r->sbuf, total, SNN_PTR_HOST, &r->smh));
	SNN_CALL(r->rank, "regMr(recv)",
		 net->reg_mr(r->rcomm, r->rbuf, total, SNN_PTR_HOST, &r->rmh));
}

/* Untimed round trips, every byte and the guard checked both ways. */
static void snn_check_phase(struct snn_rank *r, size_t size)
{
	for (int it = 0; it < opt.checks; it++) {
		uint64_t s_in = snn_seed(size, it, r->rank ^ 1, 0);
		uint64_t s_out = snn_seed(size, it, r->rank, 0);
		void *rq, *sq = NULL;

		step[r->rank] = "check phase";
		snn_arm(r->rbuf, size);
		snn_fill(r->sbuf, size, s_out);
		rq = snn_irecv(r, r->rbuf, size);
		if (r->rank == 0)
			sq = snn_isend(r, r->sbuf, size);
		snn_recv_check(r, rq, size);
		snn_verify(r->rank, r->rbuf, size, s_in, "check phase");
		if (r->rank == 1)
			sq = snn_isend(r, r->sbuf, size);
		snn_wait(r, sq, NULL);
	}
}

static int snn_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of n samples (sorts them). */
static double snn_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), snn_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct snn_figures {
	double lat_mean, lat_p50;	/* half round trip, us */
	double win_mean, win_p50;	/* one window, us */
};

/* Half round trips in microseconds, as each rank measures them. */
static void snn_latency(struct snn_rank *r, size_t size, int iters,
			struct snn_figures *f)
{
	uint64_t seed = snn_seed(size, 1 << 20, r->rank, 0);
	double *t = calloc((size_t)iters, sizeof(*t)), t0 = 0, sum = 0;

	if (!t)
		snn_die(r->rank, "out of memory");
	step[r->rank] = "latency";
	snn_fill(r->sbuf, size, seed);
	snn_arm(r->rbuf, size);
	for (int it = -1; it < iters; it++) {	/* -1: untimed warm-up */
		void *rq = snn_irecv(r, r->rbuf, size), *sq;

		t0 = snn_now_us();
		if (r->rank == 0) {
			sq = snn_isend(r, r->sbuf, size);
			snn_recv_check(r, rq, size);
		} else {
			snn_recv_check(r, rq, size);
			sq = snn_isend(r, r->sbuf, size);
		}
		snn_wait(r, sq, NULL);
		if (it >= 0) {
			t[it] = (snn_now_us() - t0) / 2;
			sum += t[it];
		}
	}
	f->lat_mean = sum / iters;
	f->lat_p50 = snn_median(t, iters);
	free(t);
	snn_verify(r->rank, r->rbuf, size,
		   snn_seed(size, 1 << 20, r->rank ^ 1, 0), "latency");
}

/* One window: rank 0 sends opt.window messages, rank 1 acks with 0 B. */
static void snn_window(struct snn_rank *r, size_t size)
{
	void *reqs[opt.window];
	void *ack;

	for (int w = 0; w < opt.window; w++) {
		uint8_t *s = r->sbuf + (size_t)w * r->slot_bytes;
		uint8_t *d = r->rbuf + (size_t)w * r->slot_bytes;

		reqs[w] = r->rank == 0 ? snn_isend(r, s, size) :
					 snn_irecv(r, d, size);
	}
	if (r->rank == 0) {
		ack = snn_irecv(r, r->rbuf, 0);
		for (int w = 0; w < opt.window; w++)
			snn_wait(r, reqs[w], NULL);
		snn_recv_check(r, ack, 0);
	} else {
		for (int w = 0; w < opt.window; w++)
			snn_recv_check(r, reqs[w], size);
		snn_wait(r, snn_isend(r, r->sbuf, 0), NULL);
	}
}

static void snn_bandwidth(struct snn_rank *r, size_t size, int windows,
			  struct snn_figures *f)
{
	double *t = calloc((size_t)windows, sizeof(*t)), sum = 0;

	if (!t)
		snn_die(r->rank, "out of memory");
	step[r->rank] = "bandwidth";
	snn_window(r, size);	/* untimed warm-up */
	for (int i = 0; i < windows; i++) {
		double t0 = snn_now_us();

		snn_window(r, size);
		t[i] = snn_now_us() - t0;
		sum += t[i];
	}
	f->win_mean = sum / windows;
	f->win_p50 = snn_median(t, windows);
	free(t);
	/* untimed, checked: a distinct pattern per slot */
	step[r->rank] = "bandwidth check";
	for (int w = 0; w < opt.window; w++) {
		uint8_t *slot = (r->rank == 0 ? r->sbuf : r->rbuf) +
				(size_t)w * r->slot_bytes;

		if (r->rank == 0)
			snn_fill(slot, size, snn_seed(size, 1 << 21, 0, w));
		else
			snn_arm(slot, size);
	}
	snn_window(r, size);
	for (int w = 0; r->rank == 1 && w < opt.window; w++)
		snn_verify(1, r->rbuf + (size_t)w * r->slot_bytes, size,
			   snn_seed(size, 1 << 21, 0, w), "bandwidth window");
}

static int snn_scaled(int base, size_t size, size_t knee)
{
	int n = size > knee ? (int)(base / (size / knee)) : base;

	return n < 4 ? 4 : n;
}

static void snn_run_size(struct snn_rank *r, size_t size)
{
	int iters = snn_scaled(opt.iters, size, 64 * 1024);
	int windows = snn_scaled(opt.windows, size, 256 * 1024);
	double per_win = (double)size * opt.window;
	struct snn_figures f;

	snn_check_phase(r, size);
	snn_latency(r, size, iters, &f);
	snn_bandwidth(r, size, windows, &f);
	if (r->rank != 0)
		return;
	printf("size %8zu  lat p50 %9.2f mean %9.2f us (%3d)  "
	       "bw p50 %8.2f mean %8.2f MB/s (%3d x %d)\n",
	       size, f.lat_p50, f.lat_mean, iters, per_win / f.win_p50,
	       per_win / f.win_mean, windows, opt.window);
	fflush(stdout);
}

static void snn_teardown(struct snn_rank *r)
{
	char b = 0, c;

	step[r->rank] = "teardown";
	/* Both ranks are done with traffic before either closes. */
	snn_xfer_fd(r, &b, &c, 1);
	SNN_CALL(r->rank, "deregMr(send)", net->dereg_mr(r->scomm, r->smh));
	SNN_CALL(r->rank, "deregMr(recv)", net->dereg_mr(r->rcomm, r->rmh));
	SNN_CALL(r->rank, "closeSend", net->close_send(r->scomm));
	SNN_CALL(r->rank, "closeRecv", net->close_recv(r->rcomm));
	SNN_CALL(r->rank, "closeListen", net->close_listen(r->lcomm));
	free(r->sbuf);
	free(r->rbuf);
}

static void *snn_rank_main(void *arg)
{
	struct snn_rank *r = arg;

	snn_connect(r);
	snn_setup_mem(r);
	for (int i = 0; i < opt.nsizes; i++)
		snn_run_size(r, opt.sizes[i]);
	snn_teardown(r);
	return NULL;
}

/* ---- plugin loading and properties ---- */

static void snn_load(int rank)
{
	void *so = dlopen(opt.plugin, RTLD_NOW | RTLD_LOCAL);

	step[rank] = "load";
	if (!so)
		snn_die(rank, "dlopen %s: %s", opt.plugin, dlerror());
	net = dlsym(so, "ncclNetPlugin_v8");
	if (!net)
		snn_die(rank, "%s exports no ncclNetPlugin_v8: %s", opt.plugin,
			dlerror());
	SNN_CALL(rank, "init", net->init(snn_log));
}

static void snn_print_props(void)
{
	int ndev = 0;

	SNN_CALL(0, "devices", net->devices(&ndev));
	printf("plugin %s: ncclNetPlugin_v8 \"%s\", %d device(s)\n",
	       opt.plugin, net->name, ndev);
	if (ndev <= opt.dev)
		snn_die(0, "device %d asked for, %d found", opt.dev, ndev);
	for (int d = 0; d < ndev; d++) {
		struct snn_props_v8 p;

		memset(&p, 0, sizeof(p));
		SNN_CALL(0, "getProperties", net->get_properties(d, &p));
		printf("dev %d: name %s pciPath %s guid 0x%" PRIx64
		       " speed %d Mb/s port %d ptrSupport 0x%x (%s%s%s) "
		       "regIsGlobal %d latency %.1f maxComms %d maxRecvs %d\n",
		       d, p.name ? p.name : "(null)",
		       p.pci_path ? p.pci_path : "(null)", p.guid, p.speed,
		       p.port, (unsigned)p.ptr_support,
		       p.ptr_support & SNN_PTR_HOST ? "HOST" : "",
		       p.ptr_support & SNN_PTR_CUDA ? "|CUDA" : "",
		       p.ptr_support & SNN_PTR_DMABUF ? "|DMABUF" : "",
		       p.reg_is_global, p.latency, p.max_comms, p.max_recvs);
	}
	fflush(stdout);
}

/* ---- the two ranks: processes or threads ---- */

static int snn_run_processes(int fds[2])
{
	pid_t pid[2];
	int status, bad = 0;

	fflush(stdout);
	for (int rank = 0; rank < 2; rank++) {
		pid[rank] = fork();
		if (pid[rank] < 0)
			snn_die(rank, "fork: %s", strerror(errno));
		if (pid[rank] == 0) {
			struct snn_rank r = { .rank = rank, .fd = fds[rank] };

			close(fds[rank ^ 1]);
			self = rank;
			alarm((unsigned)opt.timeout);
			snn_load(rank);
			if (rank == 0)
				snn_print_props();
			snn_rank_main(&r);
			fflush(stdout);
			_exit(0);
		}
	}
	close(fds[0]);
	close(fds[1]);
	for (int rank = 0; rank < 2; rank++) {
		if (waitpid(pid[rank], &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "rank %d: %s %d\n", rank,
				WIFSIGNALED(status) ? "signal" : "exit",
				WIFSIGNALED(status) ? WTERMSIG(status) :
						      WEXITSTATUS(status));
			bad = 1;
		}
	}
	return bad;
}

static int snn_run_threads(int fds[2])
{
	struct snn_rank r[2] = { { .rank = 0, .fd = fds[0] },
				 { .rank = 1, .fd = fds[1] } };
	pthread_t th[2];

	alarm((unsigned)opt.timeout);
	snn_load(0);
	snn_print_props();
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, snn_rank_main, &r[i]))
			snn_die(i, "pthread_create failed");
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static size_t snn_parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (*end == 'k' || *end == 'K')
		v <<= 10;
	else if (*end == 'm' || *end == 'M')
		v <<= 20;
	return (size_t)v;
}

static void snn_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-p PLUGIN.so] [-s SIZES] [-i ITERS] [-c CHECKS]\n"
		"       [-w WINDOW] [-n WINDOWS] [-d DEV] [-t SECONDS] [-T] "
		"[-P] [-v]\n"
		"  -p  plugin to dlopen (libnccl-net.so)\n"
		"  -s  comma list, k/m suffixes (0,1,8,64,1k,4k,16k,64k,256k,"
		"1m,4m; max 2g)\n"
		"  -i  ping-pong iterations (200; fewer above 64 KiB, >= 4)\n"
		"  -c  checked round trips per size (5)\n"
		"  -w  isends per window (16), -n timed windows (20; fewer "
		"above 256 KiB, >= 4)\n"
		"  -T  two ranks as two threads of one process (default: two "
		"processes)\n"
		"  -P  properties only: init, devices, getProperties\n"
		"  -v  print the plugin's INFO messages too\n", prog);
	exit(2);
}

static void snn_parse_sizes(char *list)
{
	opt.nsizes = 0;
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		if (opt.nsizes == SNN_MAX_SIZES)
			snn_die(0, "more than %d sizes", SNN_MAX_SIZES);
		opt.sizes[opt.nsizes] = snn_parse_size(tok);
		if (opt.sizes[opt.nsizes] > (1u << 31) - 1 - SNN_GUARD)
			snn_die(0, "size %s too large for the v8 API", tok);
		opt.nsizes++;
	}
}

int main(int argc, char **argv)
{
	char defsizes[] = "0,1,8,64,1k,4k,16k,64k,256k,1m,4m";
	int c, fds[2], bad;

	snn_parse_sizes(defsizes);
	while ((c = getopt(argc, argv, "p:s:i:c:w:n:d:t:TPvh")) != -1) {
		switch (c) {
		case 'p': opt.plugin = optarg; break;
		case 's': snn_parse_sizes(optarg); break;
		case 'i': opt.iters = atoi(optarg); break;
		case 'c': opt.checks = atoi(optarg); break;
		case 'w': opt.window = atoi(optarg); break;
		case 'n': opt.windows = atoi(optarg); break;
		case 'd': opt.dev = atoi(optarg); break;
		case 't': opt.timeout = atoi(optarg); break;
		case 'T': opt.threads = 1; break;
		case 'P': opt.props_only = 1; break;
		case 'v': opt.verbose = 1; break;
		default: snn_usage(argv[0]);
		}
	}
	if (opt.iters < 1 || opt.window < 1 || opt.windows < 1 ||
	    opt.checks < 0 || opt.timeout < 1 || opt.nsizes == 0)
		snn_usage(argv[0]);
	signal(SIGALRM, snn_alarm);
	if (opt.props_only) {
		alarm((unsigned)opt.timeout);
		snn_load(0);
		snn_print_props();
		printf("PASS sft_nccl_net properties\n");
		return 0;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
		snn_die(0, "socketpair: %s", strerror(errno));
	bad = opt.threads ? snn_run_threads(fds) : snn_run_processes(fds);
	if (bad)
		return 1;
	printf("PASS sft_nccl_net %s, %d sizes\n",
	       opt.threads ? "two threads" : "two processes", opt.nsizes);
	return 0;
}
