/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_fork.c: fork() with srd endpoints open, as MPI launchers and
 * Python do.  The parent keeps its endpoints (and their progress
 * thread) working while and after children run; each child opens its
 * own endpoints and exchanges verified messages; a child that simply
 * exits without touching srd leaves the parent unaffected.  And a process
 * that exits with its endpoints open and their progress thread busy
 * exits cleanly: libfabric unloads the provider at exit, so the thread
 * must be stopped first.
 */
#include "config.h"
#include "srd_test_common.h"
#include "srd_test_host.h"

#include <dirent.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define LEN 3000	/* more than one packet */

/* n verified messages from a to b; returns the number that arrived. */
static int exchange(struct bhost *a, fi_addr_t to_b, struct bhost *b,
		    int n, unsigned seed)
{
	static uint8_t src[LEN], dst[LEN];
	struct fi_cq_tagged_entry e;
	int ok = 0;

	for (int m = 0; m < n; m++) {
		double end = now_s() + 20 * time_scale();
		int sent = 0, got = 0;

		for (size_t i = 0; i < LEN; i++)
			src[i] = (uint8_t)(seed + m * 7 + i);
		memset(dst, 0, LEN);
		if (fi_recv(b->ep, dst, LEN, NULL, FI_ADDR_UNSPEC, NULL) ||
		    fi_send(a->ep, src, LEN, NULL, to_b, NULL))
			return ok;
		while ((!sent || !got) && now_s() < end) {
			sent += bpoll(a, &e);
			got += bpoll(b, &e);
		}
		if (!sent || !got || memcmp(src, dst, LEN))
			return ok;
		ok++;
	}
	return ok;
}

/* The child: its own fabric, two endpoints, 50 messages each way. */
static int child_main(void)
{
	struct bhost c, d;
	fi_addr_t c_to_d, d_to_c;
	int ok;

	bhost_open(&c, 0, 0);
	bhost_open(&d, 0, 0);
	c_to_d = bhost_insert(&c, &d);
	d_to_c = bhost_insert(&d, &c);
	ok = exchange(&c, c_to_d, &d, 50, 11) + exchange(&d, d_to_c, &c, 50, 13);
	bhost_close(&c);
	bhost_close(&d);
	return ok == 100 ? 0 : 1;
}

/* The exiting process of the last test: this binary run again with
 * SRD_TEST_EXIT_CHILD set.  It runs before Criterion's main, opens an
 * endpoint, sends to a UDP socket that never answers, leaves the
 * endpoint to the progress thread and exit()s with everything open,
 * while a thread of its own keeps sending junk datagrams to the
 * endpoint so the progress thread is woken all through the exit.  First
 * it forks a grandchild that exit()s at once with the inherited objects,
 * whose progress thread it does not have (its exit must not wait for
 * it).  Exit status 0 unless a step fails (2) or the grandchild fails or
 * hangs (4); a crash at exit shows as a signal. */
static void *junk_sender(void *arg)
{
	const struct sockaddr_in *to = arg;
	static const char junk[32] = "not an srd packet";
	int sock = socket(AF_INET, SOCK_DGRAM, 0);

	/* in bursts, leaving a core free: the progress thread runs at
	 * SCHED_IDLE and must get to work on them */
	for (;;) {
		for (int i = 0; i < 16; i++)
			sendto(sock, junk, sizeof(junk), 0,
			       (const struct sockaddr *)to, sizeof(*to));
		usleep(20);
	}
	return NULL;
}

#define STEP(x) do { if (x) _exit(2); } while (0)
__attribute__((constructor)) static void exit_child_main(void)
{
	static char payload[LEN];
	static struct sockaddr_in self;
	struct sockaddr_in mute = { .sin_family = AF_INET };
	socklen_t len = sizeof(mute);
	int sock, status = -1;
	struct bhost h;
	pthread_t junk;
	fi_addr_t to;
	double end;
	pid_t kid;

	if (!getenv("SRD_TEST_EXIT_CHILD"))
		return;
	sock = socket(AF_INET, SOCK_DGRAM, 0);
	mute.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	STEP(sock < 0 || bind(sock, (struct sockaddr *)&mute, len) ||
	     getsockname(sock, (struct sockaddr *)&mute, &len));
	STEP(bhost_try_open(&h, FI_VERSION(1, 17), FI_MSG, 0, 0) != NULL);
	STEP(fi_av_insert(h.av, &mute, 1, &to, 0, NULL) != 1);
	STEP(fi_send(h.ep, payload, LEN, NULL, to, NULL));
	memcpy(&self, h.addr, sizeof(self));
	STEP(pthread_create(&junk, NULL, junk_sender, &self));
	fflush(NULL);
	kid = fork();
	STEP(kid < 0);
	if (!kid)
		exit(0);
	for (end = now_s() + 10; now_s() < end;) {
		pid_t w = waitpid(kid, &status, WNOHANG);

		STEP(w < 0);
		if (w == kid)
			break;
		usleep(1000);
	}
	if (now_s() >= end)
		kill(kid, SIGKILL);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		_exit(4);
	/* the application goes quiet: the endpoint becomes the thread's */
	for (end = now_s() + 0.05; now_s() < end;)
		;
	exit(0);
}

/* The signalled process of the next test: this binary run again with
 * SRD_TEST_SIGNAL_CHILD=FD.  Two endpoints stream messages to each other
 * for ever; SIGTERM and SIGINT run a handler that calls exit(), as
 * libinfinipath's does in every process Debian's libfabric loads PSM
 * into.  The signal may land while this thread holds the domain lock
 * inside progress: exit's cleanup must not wait for that lock.  It
 * writes a byte to FD once traffic runs. */
static void exit_on_signal(int sig)
{
	(void)sig;
	exit(0);
}

__attribute__((constructor)) static void signal_child_main(void)
{
	const char *fd = getenv("SRD_TEST_SIGNAL_CHILD");
	struct bhost a, b;
	fi_addr_t to_b;
	unsigned seed = 1;

	if (!fd)
		return;
	STEP(bhost_try_open(&a, FI_VERSION(1, 17), FI_MSG, 0, 0) != NULL);
	STEP(bhost_try_open(&b, FI_VERSION(1, 17), FI_MSG, 0, 0) != NULL);
	STEP(fi_av_insert(a.av, b.addr, 1, &to_b, 0, NULL) != 1);
	signal(SIGTERM, exit_on_signal);
	signal(SIGINT, exit_on_signal);
	STEP(write(atoi(fd), "r", 1) != 1);
	for (;;)
		STEP(exchange(&a, to_b, &b, 10, seed++) != 10);
}

/* SIGTERM or SIGINT, handled by exit(), at random moments of traffic:
 * the process exits within a second every time (before the fix some hung
 * for ever: exit's cleanup waited for the domain lock the interrupted
 * thread held).  The progress thread is busy too (it takes over after
 * 200 us without calls), and never takes the signal: it blocks them. */
Test(fork, exit_from_a_signal_handler_mid_traffic_does_not_hang,
     .timeout = 180)
{
	const char *asan = getenv("ASAN_OPTIONS");
	char asan_child[512], fdstr[16];
	int hung = 0, failed = 0;
	unsigned seed = 7;

	snprintf(asan_child, sizeof(asan_child), "%s%sdetect_leaks=0",
		 asan ? asan : "", asan ? ":" : "");
	for (int k = 0; k < 20; k++) {
		int status = 0, pipefd[2];
		double end;
		pid_t kid, w = 0;
		char c;

		cr_assert_eq(pipe(pipefd), 0);
		fflush(NULL);
		kid = fork();
		cr_assert_geq(kid, 0);
		if (!kid) {
			char *argv[] = { "srd_test_fork", NULL };

			close(pipefd[0]);
			snprintf(fdstr, sizeof(fdstr), "%d", pipefd[1]);
			setenv("SRD_TEST_SIGNAL_CHILD", fdstr, 1);
			setenv("FI_SRD_IFACE", "lo", 1);
			setenv("FI_SRD_PROGRESS_IDLE_US", "200", 1);
			setenv("ASAN_OPTIONS", asan_child, 1);
			execv("/proc/self/exe", argv);
			_exit(3);
		}
		close(pipefd[1]);
		cr_assert_eq(read(pipefd[0], &c, 1), 1, "the child never ran");
		close(pipefd[0]);
		usleep(2000 + rand_r(&seed) % 50000);
		kill(kid, k % 2 ? SIGINT : SIGTERM);
		for (end = now_s() + 1 * time_scale(); now_s() < end;) {
			w = waitpid(kid, &status, WNOHANG);
			if (w == kid)
				break;
			usleep(1000);
		}
		if (w != kid) {
			hung++;
			kill(kid, SIGKILL);
			waitpid(kid, &status, 0);
		} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			failed++;
		}
	}
	cr_assert_eq(hung, 0, "%d of 20 signalled processes hung", hung);
	cr_assert_eq(failed, 0, "%d of 20 signalled processes failed", failed);
}

/* A process exiting with its endpoint open while the progress thread
 * works on it exits cleanly, every time (before the fix, 2 to 6 of the
 * 20 crashed: the thread ran on in the unloaded provider). */
Test(fork, exit_with_endpoints_open_is_clean, .timeout = 120)
{
	const char *asan = getenv("ASAN_OPTIONS");
	char asan_child[512];
	int crashed = 0, failed = 0;

	/* what the child leaves open at exit is not a leak to report */
	snprintf(asan_child, sizeof(asan_child), "%s%sdetect_leaks=0",
		 asan ? asan : "", asan ? ":" : "");
	for (int k = 0; k < 20; k++) {
		int status;
		pid_t kid;

		fflush(NULL);
		kid = fork();
		cr_assert_geq(kid, 0);
		if (!kid) {
			char *argv[] = { "srd_test_fork", NULL };

			setenv("SRD_TEST_EXIT_CHILD", "1", 1);
			setenv("FI_SRD_IFACE", "lo", 1);
			setenv("FI_SRD_PROGRESS_IDLE_US", "200", 1);
			setenv("ASAN_OPTIONS", asan_child, 1);
			execv("/proc/self/exe", argv);
			_exit(3);
		}
		cr_assert_eq(waitpid(kid, &status, 0), kid);
		if (WIFSIGNALED(status))
			crashed++;
		else if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	cr_assert_eq(crashed, 0, "%d of 20 exiting processes crashed", crashed);
	cr_assert_eq(failed, 0, "%d of 20 exiting processes failed", failed);
}

Test(fork, parent_keeps_working_and_children_open_their_own, .timeout = 120)
{
	struct bhost a, b;
	fi_addr_t to_b, to_a;
	pid_t kids[4];

	setenv("FI_SRD_IFACE", "lo", 1);
	bhost_open(&a, 0, 0);
	bhost_open(&b, 0, 0);
	to_b = bhost_insert(&a, &b);
	to_a = bhost_insert(&b, &a);
	cr_assert_eq(exchange(&a, to_b, &b, 20, 1), 20);

	for (int k = 0; k < 4; k++) {
		fflush(NULL);
		kids[k] = fork();
		cr_assert_geq(kids[k], 0);
		if (!kids[k]) {
			/* odd children leave at once: the parent's sockets
			 * and thread are theirs too until they exit */
			_exit(k % 2 ? 0 : child_main());
		}
		/* the parent talks while the child runs */
		cr_assert_eq(exchange(&a, to_b, &b, 30, 100 + k), 30,
			     "parent, child %d running", k);
	}
	for (int k = 0; k < 4; k++) {
		int status;

		cr_assert_eq(waitpid(kids[k], &status, 0), kids[k]);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "child %d: status %#x", k, status);
	}
	cr_assert_eq(exchange(&a, to_b, &b, 20, 200), 20);
	cr_assert_eq(exchange(&b, to_a, &a, 20, 201), 20);
	bhost_close(&a);
	bhost_close(&b);
}

/* The progress thread ("srd-progress") blocks SIGTERM and SIGINT, so a
 * signal sent to the process runs the application's handler on one of
 * its own threads, never inside progress. */
Test(fork, progress_thread_blocks_process_signals, .timeout = 60)
{
	struct bhost a;
	char path[320], line[256], comm[64];
	unsigned long long blk = 0;
	int found = 0;
	DIR *d;
	struct dirent *t;

	cr_assert_null(bhost_try_open(&a, FI_VERSION(1, 17), FI_MSG, 0, 0));
	d = opendir("/proc/self/task");
	cr_assert_not_null(d);
	while (!found && (t = readdir(d))) {
		FILE *f;

		if (t->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 t->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, "srd-progress", 12))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status",
			 t->d_name);
		f = fopen(path, "r");
		cr_assert_not_null(f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "SigBlk: %llx", &blk) == 1)
				found = 1;
		fclose(f);
	}
	closedir(d);
	bhost_close(&a);
	cr_assert(found, "no srd-progress thread with a SigBlk line");
	cr_assert(blk & (1ull << (SIGTERM - 1)), "SIGTERM not blocked: %llx",
		  blk);
	cr_assert(blk & (1ull << (SIGINT - 1)), "SIGINT not blocked: %llx",
		  blk);
}
