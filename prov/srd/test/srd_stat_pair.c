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
 * Public libfabric calls only: it must not reach into the provider.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define PAIR_WATCHDOG_S	120

struct pair_host {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	char addr[64];
	fi_addr_t peer;
	size_t done;			/* completions read */
};

static void pair_die(const char *what, int ret)
{
	fprintf(stderr, "srd_stat_pair: %s: %d (%s)\n", what, ret,
		fi_strerror(ret < 0 ? -ret : ret));
	exit(1);
}

static void pair_open(struct pair_host *h)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	size_t len = sizeof(h->addr);
	int ret;

	if (!hints)
		pair_die("fi_allocinfo", -FI_ENOMEM);
	hints->fabric_attr->prov_name = strdup("srd");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &h->info);
	fi_freeinfo(hints);
	if (ret)
		pair_die("fi_getinfo", ret);
	if ((ret = fi_fabric(h->info->fabric_attr, &h->fabric, NULL)) ||
	    (ret = fi_domain(h->fabric, h->info, &h->domain, NULL)) ||
	    (ret = fi_av_open(h->domain, &av_attr, &h->av, NULL)) ||
	    (ret = fi_cq_open(h->domain, &cq_attr, &h->cq, NULL)) ||
	    (ret = fi_endpoint(h->domain, h->info, &h->ep, NULL)) ||
	    (ret = fi_ep_bind(h->ep, &h->av->fid, 0)) ||
	    (ret = fi_ep_bind(h->ep, &h->cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_enable(h->ep)) ||
	    (ret = fi_getname(&h->ep->fid, h->addr, &len)))
		pair_die("opening an endpoint", ret);
}

static void pair_close(struct pair_host *h)
{
	fi_close(&h->ep->fid);
	fi_close(&h->cq->fid);
	fi_close(&h->av->fid);
	fi_close(&h->domain->fid);
	fi_close(&h->fabric->fid);
	fi_freeinfo(h->info);
}

/* Reads what completed; an error completion ends the program. */
static void pair_poll(struct pair_host *h)
{
	struct fi_cq_entry e[16];
	struct fi_cq_err_entry err = { 0 };
	ssize_t n = fi_cq_read(h->cq, e, 16);

	if (n > 0)
		h->done += n;
	else if (n == -FI_EAVAIL) {
		fi_cq_readerr(h->cq, &err, 0);
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
		int ret = (int)fi_recv(b->ep, in + m * size, size, NULL,
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
			ret = (int)fi_send(a->ep, out, size, NULL, a->peer,
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
	if (fi_av_insert(a.av, b.addr, 1, &a.peer, 0, NULL) != 1 ||
	    fi_av_insert(b.av, a.addr, 1, &b.peer, 0, NULL) != 1)
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
