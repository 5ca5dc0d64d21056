/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_stat_pair.c: the live program that fabtests/scripts/srd_stat_check.sh
 * points srd_stat at.  Two srd endpoints in this process; the first sends
 * COUNT messages of SIZE bytes to the second, which checks each byte for
 * byte.  Then it prints "ready" and keeps both endpoints progressing
 * (so their FI_SRD_STATS_DIR snapshots stay fresh) until its standard
 * input reaches end of file or gets a line, closes everything, prints
 * "closed" and exits 0.  Any failure: a message on stderr, exit 1; a
 * watchdog ends it after 120 s.
 * Public libfabric calls only (and srd_test_host.h, which makes them):
 * it must not reach into the provider.
 */
#include "srd_test_host.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAIR_WATCHDOG_S	120

struct pair_host {
	struct bhost h;			/* srd_test_host.h's endpoint */
	fi_addr_t peer;
	size_t done;			/* completions read */
};

static void pair_die(const char *what, int ret)
{
	fprintf(stderr, "srd_stat_pair: %s: %d (%s)\n", what, ret,
		fi_strerror(ret < 0 ? -ret : ret));
	exit(1);
}

static void pair_open(struct pair_host *p)
{
	const char *failed = bhost_try_open(&p->h, FI_VERSION(1, 17), FI_MSG,
					    0, 0);

	if (failed)
		pair_die(failed, -FI_EOTHER);
}

static void pair_close(struct pair_host *p)
{
	fi_close(&p->h.ep->fid);
	fi_close(&p->h.cq->fid);
	fi_close(&p->h.av->fid);
	fi_close(&p->h.domain->fid);
	fi_close(&p->h.fabric->fid);
	fi_freeinfo(p->h.info);
}

/* Reads what completed; an error completion ends the program. */
static void pair_poll(struct pair_host *h)
{
	struct fi_cq_tagged_entry e[16];
	struct fi_cq_err_entry err = { 0 };
	ssize_t n = fi_cq_read(h->h.cq, e, 16);

	if (n > 0)
		h->done += n;
	else if (n == -FI_EAVAIL) {
		fi_cq_readerr(h->h.cq, &err, 0);
		pair_die("error completion", -err.err);
	} else if (n != -FI_EAGAIN)
		pair_die("fi_cq_read", (int)n);
}

static unsigned char pair_byte(size_t msg, size_t i)
{
	return (unsigned char)(msg * 31 + i * 7 + 1);
}

static void pair_transfer(struct pair_host *a, struct pair_host *b,
			  size_t count, size_t size)
{
	unsigned char *in = calloc(count, size), *out = malloc(size);
	size_t sent = 0;

	if (!in || !out)
		pair_die("malloc", -FI_ENOMEM);
	for (size_t m = 0; m < count; m++) {
		int ret = (int)fi_recv(b->h.ep, in + m * size, size, NULL,
				       FI_ADDR_UNSPEC, NULL);

		if (ret)
			pair_die("fi_recv", ret);
	}
	while (sent < count || a->done < count || b->done < count) {
		/* one send at a time: its buffer is free once it completes */
		if (sent < count && a->done == sent) {
			int ret;

			for (size_t i = 0; i < size; i++)
				out[i] = pair_byte(sent, i);
			ret = (int)fi_send(a->h.ep, out, size, NULL, a->peer,
					   NULL);
			if (ret && ret != -FI_EAGAIN)
				pair_die("fi_send", ret);
			sent += !ret;
		}
		pair_poll(a);
		pair_poll(b);
	}
	for (size_t m = 0; m < count; m++)
		for (size_t i = 0; i < size; i++)
			if (in[m * size + i] != pair_byte(m, i))
				pair_die("received data differs", -FI_EIO);
	free(in);
	free(out);
}

/* Progress both until stdin says close (a line or end of file). */
static void pair_linger(struct pair_host *a, struct pair_host *b)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };

	while (poll(&p, 1, 5) == 0) {
		pair_poll(a);
		pair_poll(b);
	}
}

int main(int argc, char **argv)
{
	struct pair_host a = { 0 }, b = { 0 };
	size_t count, size;

	if (argc != 3 || !(count = strtoul(argv[1], NULL, 0)) ||
	    !(size = strtoul(argv[2], NULL, 0))) {
		fprintf(stderr, "usage: %s COUNT SIZE\n", argv[0]);
		return 2;
	}
	alarm(PAIR_WATCHDOG_S);
	pair_open(&a);
	pair_open(&b);
	if (fi_av_insert(a.h.av, b.h.addr, 1, &a.peer, 0, NULL) != 1 ||
	    fi_av_insert(b.h.av, a.h.addr, 1, &b.peer, 0, NULL) != 1)
		pair_die("fi_av_insert", -FI_EINVAL);
	pair_transfer(&a, &b, count, size);
	printf("ready pid=%d sent=%zu size=%zu\n", (int)getpid(), count, size);
	fflush(stdout);
	pair_linger(&a, &b);
	pair_close(&a);
	pair_close(&b);
	printf("closed\n");
	return 0;
}
