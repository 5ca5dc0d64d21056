/*
 * srd_test_fork.c: fork() with srd endpoints open, as MPI launchers and
 * Python do.  The parent keeps its endpoints (and their progress
 * thread) working while and after children run; each child opens its
 * own endpoints and exchanges verified messages; a child that simply
 * exits without touching srd leaves the parent unaffected.
 */
#include "config.h"
#include "srd_test_common.h"
#include "srd_test_host.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>
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
