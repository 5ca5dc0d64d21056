/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_udp_floor: what plain kernel UDP sockets do on this machine, the
 * floor any provider over UDP is measured against.  No libfabric.
 *
 *   -o lat: ping-pong of one datagram per size (at most 65507 bytes),
 *           both sides busy-polling non-blocking sockets (recv with
 *           MSG_DONTWAIT in a loop), as a provider's ping-pong polls its
 *           CQ: a blocking receive would measure the scheduler's wake-up
 *           instead.  Prints the mean half round trip per size.
 *   -o bw:  the client streams datagrams of each size (default 64 KiB
 *           minus headers) for -T seconds; the server counts what it
 *           received between the first and the last datagram and prints
 *           MB/s of payload delivered (datagrams the socket dropped do not
 *           count).  The client paces nothing: a full socket buffer is
 *           retried, as a transport would.
 *   -G N:   (bw) the client sends N datagrams of each size at a time as
 *           one segmented datagram (UDP_SEGMENT), each datagram in two
 *           pieces (its first 64 bytes, then the rest) as srd posts a
 *           header and its payload, and the server's socket coalesces
 *           (UDP_GRO): the kernel's own cost of what srd's UDP wire does
 *           at a real MTU.
 *
 * Every datagram carries a sequence number and a pattern the receiver
 * checks on the first word of each datagram and in full on every 64th
 * (ping-pong) or 256th (stream), so a floor that loses or mangles data
 * fails.  Both sides take
 * the same -o and -S.
 *
 * usage: sft_udp_floor -o lat|bw [-s | SERVER_IP] [-P PORT] [-S SIZES]
 *                      [-I ITERS] [-T SECONDS] [-G SEGMENTS]
 * Prints a table, then lines "RESULT floor op=... size=... value=...".
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define FLOOR_MAX_DGRAM 65507
#define FLOOR_RX_BUF 65536	/* a coalesced datagram's most */
#define FLOOR_GSO_MAX 64	/* the kernel's UDP_MAX_SEGMENTS */
#define FLOOR_GSO_HEAD 64	/* the first piece of each segment */
#define FLOOR_MAX_SIZES 16
#define FLOOR_HDR 8		/* the sequence number */
#define FLOOR_END (~0ull << 8)	/* + size index: a stream's end marker */

struct floor_opts {
	const char *op, *dst;
	int server, port, iters, nsizes, gso;
	double seconds;
	size_t sizes[FLOOR_MAX_SIZES];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "FAIL sft_udp_floor: %s: %s\n", what,
		errno ? strerror(errno) : "bad data");
	exit(1);
}

/* Word w of datagram seq's payload (after the 8-byte header). */
static uint64_t pat(uint64_t seq, size_t w)
{
	return (seq + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)w * 0xff51afd7ed558ccdull;
}

static void fill(uint8_t *buf, size_t len, uint64_t seq)
{
	memcpy(buf, &seq, 8);
	for (size_t i = FLOOR_HDR, w = 0; i < len; i += 8, w++) {
		uint64_t v = pat(seq, w);

		memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* Checks the length and sequence always, the payload when full is set. */
static void check(const uint8_t *buf, size_t len, size_t want_len,
		  uint64_t want_seq, int full)
{
	uint64_t seq;

	errno = 0;
	if (len != want_len)
		die("datagram of the wrong size");
	memcpy(&seq, buf, 8);
	if (want_seq != UINT64_MAX && seq != want_seq)
		die("unexpected datagram");
	if (!full)
		return;
	for (size_t i = FLOOR_HDR, w = 0; i < len; i += 8, w++) {
		uint64_t v = pat(seq, w);

		if (memcmp(buf + i, &v, len - i < 8 ? len - i : 8))
			die("payload corrupted");
	}
}

static int open_socket(const struct floor_opts *o, struct sockaddr_in *peer)
{
	struct sockaddr_in me = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	int buf = 8 << 20;

	if (fd < 0)
		die("socket");
	/* The same socket buffers srd asks for (FI_SRD_SOCKBUF). */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (o->gso && o->server &&
	    setsockopt(fd, SOL_UDP, UDP_GRO, &(int){ 1 }, sizeof(int)))
		die("UDP_GRO");
	memset(peer, 0, sizeof(*peer));
	peer->sin_family = AF_INET;
	peer->sin_port = htons((uint16_t)o->port);
	if (o->server) {
		me.sin_addr.s_addr = htonl(INADDR_ANY);
		me.sin_port = htons((uint16_t)o->port);
		if (bind(fd, (struct sockaddr *)&me, sizeof(me)))
			die("bind");
	} else if (inet_pton(AF_INET, o->dst, &peer->sin_addr) != 1) {
		errno = EINVAL;
		die("server address");
	}
	return fd;
}

/* Busy-polls for one datagram; returns its length. */
static size_t recv_spin(int fd, uint8_t *buf, struct sockaddr_in *from,
			uint64_t deadline)
{
	socklen_t fl = sizeof(*from);
	ssize_t n;

	while ((n = recvfrom(fd, buf, FLOOR_MAX_DGRAM, MSG_DONTWAIT,
			     (struct sockaddr *)from, &fl)) < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			die("recvfrom");
		if (now_ns() > deadline) {
			errno = ETIMEDOUT;
			die("waiting for a datagram");
		}
	}
	return (size_t)n;
}

static void send_all(int fd, const uint8_t *buf, size_t len,
		     const struct sockaddr_in *to)
{
	while (sendto(fd, buf, len, 0, (const struct sockaddr *)to,
		      sizeof(*to)) < 0)
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS
		    && errno != EINTR)
			die("sendto");
}

static void run_lat(const struct floor_opts *o, int fd,
		    struct sockaddr_in *peer, uint8_t *tx, uint8_t *rx)
{
	uint64_t limit = now_ns() + 60ull * 1000000000ull;

	if (!o->server) {
		/* hello: the server learns where to answer */
		fill(tx, FLOOR_HDR, 0);
		send_all(fd, tx, FLOOR_HDR, peer);
		check(rx, recv_spin(fd, rx, peer, limit), FLOOR_HDR, 0, 1);
		printf("%-10s %8s %12s  (raw UDP, busy-polled, half round "
		       "trips)\n", "bytes", "iters", "half-rtt_us");
	} else {
		struct sockaddr_in from;

		check(rx, recv_spin(fd, rx, &from, limit), FLOOR_HDR, 0, 1);
		*peer = from;
		send_all(fd, rx, FLOOR_HDR, peer);
	}
	for (int s = 0; s < o->nsizes; s++) {
		size_t size = o->sizes[s];
		uint64_t t0 = now_ns();

		for (int i = 0; i < o->iters; i++) {
			uint64_t seq = ((uint64_t)s << 32) | (uint64_t)i;
			int full = i == 0 || i == o->iters - 1 || !(i & 63);

			if (o->server) {
				check(rx, recv_spin(fd, rx, peer, limit), size,
				      seq, full);
				send_all(fd, rx, size, peer);
			} else {
				/* Fill outside the timed path: patterns
				 * change only where the header does. */
				fill(tx, size, seq);
				if (i == 0)
					t0 = now_ns();
				send_all(fd, tx, size, peer);
				check(rx, recv_spin(fd, rx, peer, limit), size,
				      seq, full);
			}
		}
		if (!o->server) {
			double half = (double)(now_ns() - t0) / o->iters /
				      2000.0;

			printf("%-10zu %8d %12.2f\n", size, o->iters, half);
			printf("RESULT floor op=lat size=%zu half_rtt_us=%.3f\n",
			       size, half);
		}
	}
}

/* Busy-polls for one datagram, coalesced or not; its segment size (the
 * whole length when it is a single datagram) in *seg. */
static size_t recv_spin_seg(int fd, uint8_t *buf, struct sockaddr_in *from,
			    uint64_t limit, size_t *seg)
{
	union { struct cmsghdr c; uint8_t b[CMSG_SPACE(sizeof(int))]; } ctl;
	struct iovec iov = { buf, FLOOR_RX_BUF };
	struct msghdr h = { .msg_name = from, .msg_iov = &iov,
			    .msg_iovlen = 1 };
	ssize_t n;

	for (;;) {
		h.msg_namelen = sizeof(*from);
		h.msg_control = ctl.b;
		h.msg_controllen = sizeof(ctl.b);
		n = recvmsg(fd, &h, MSG_DONTWAIT);
		if (n >= 0)
			break;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			die("recvmsg");
		if (now_ns() > limit) {
			errno = ETIMEDOUT;
			die("waiting for a datagram");
		}
	}
	*seg = (size_t)n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int v;

			memcpy(&v, CMSG_DATA(c), sizeof(v));
			if (v > 0)
				*seg = (size_t)v;
		}
	return (size_t)n;
}

struct floor_stream {
	uint64_t first, last, bytes, got, next, lost;
};

/* One datagram of a stream (n bytes at d); true at the size's end
 * marker. */
static bool stream_one(struct floor_stream *st, int fd, const uint8_t *d,
		       size_t n, size_t size, int sidx,
		       const struct sockaddr_in *from)
{
	uint64_t seq;

	memcpy(&seq, d, 8);
	if (n == FLOOR_HDR && seq >= FLOOR_END) {
		if (seq == FLOOR_END + (uint64_t)sidx && st->got)
			return true;
		/* a repeat of an earlier size's marker: answer it again,
		 * the first answer may have been dropped */
		send_all(fd, d, FLOOR_HDR, from);
		return false;
	}
	check(d, n, size, UINT64_MAX, !(seq & 255));
	if (seq < st->next) {
		errno = 0;
		die("datagram out of order or duplicated");
	}
	st->lost += seq - st->next;
	st->next = seq + 1;
	st->last = now_ns();
	if (!st->got++)
		st->first = st->last;
	else
		st->bytes += n;	/* the first one starts the clock */
	return false;
}

/* Receiver: counts datagrams until the end marker (a coalesced one is
 * taken apart at its segment size); returns MB/s. */
static double stream_recv(int fd, uint8_t *rx, size_t size, int sidx,
			  uint64_t limit, uint64_t *got_out, uint64_t *lost_out)
{
	struct floor_stream st = { 0 };
	struct sockaddr_in from;
	bool end = false;

	while (!end) {
		size_t seg, total = recv_spin_seg(fd, rx, &from, limit, &seg);

		for (size_t off = 0; off < total && !end; off += seg)
			end = stream_one(&st, fd, rx + off,
					 total - off < seg ? total - off : seg,
					 size, sidx, &from);
	}
	*got_out = st.got;
	*lost_out = st.lost;
	return st.last > st.first ?
	       st.bytes * 1000.0 / (double)(st.last - st.first) : 0.0;
}

/* Client with -G: o->gso datagrams of size bytes per sendmsg, each in
 * two pieces, cut by the kernel (UDP_SEGMENT); until end.  Returns the
 * next sequence number. */
static uint64_t stream_send_gso(const struct floor_opts *o, int fd,
				uint8_t *tx, size_t size,
				const struct sockaddr_in *peer, uint64_t end)
{
	union { struct cmsghdr c; uint8_t b[CMSG_SPACE(sizeof(uint16_t))]; } ctl;
	struct iovec iov[2 * FLOOR_GSO_MAX];
	int segs = o->gso;
	uint16_t seg16 = (uint16_t)size;
	uint64_t seq = 0;

	if ((size_t)segs * size > FLOOR_MAX_DGRAM)
		segs = (int)(FLOOR_MAX_DGRAM / size);
	if (segs < 1 || size <= FLOOR_GSO_HEAD) {
		errno = EINVAL;
		die("-G: segments of this size do not fit in one datagram");
	}
	for (int k = 0; k < segs; k++) {
		fill(tx + (size_t)k * size, size, (uint64_t)k);
		iov[2 * k].iov_base = tx + (size_t)k * size;
		iov[2 * k].iov_len = FLOOR_GSO_HEAD;
		iov[2 * k + 1].iov_base = tx + (size_t)k * size + FLOOR_GSO_HEAD;
		iov[2 * k + 1].iov_len = size - FLOOR_GSO_HEAD;
	}
	while (now_ns() < end) {
		struct msghdr h = { .msg_name = (void *)peer,
				    .msg_namelen = sizeof(*peer),
				    .msg_iov = iov, .msg_iovlen = 2 * (size_t)segs,
				    .msg_control = ctl.b,
				    .msg_controllen = sizeof(ctl.b) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&h);

		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(seg16));
		memcpy(CMSG_DATA(c), &seg16, sizeof(seg16));
		for (int k = 0; k < segs; k++) {
			uint8_t *d = tx + (size_t)k * size;

			if (!((seq + (uint64_t)k) & 255))
				fill(d, size, seq + (uint64_t)k);
			else
				memcpy(d, &(uint64_t){ seq + (uint64_t)k }, 8);
		}
		while (sendmsg(fd, &h, 0) < 0) {
			if (errno != EAGAIN && errno != ENOBUFS &&
			    errno != EINTR)
				die("sendmsg (UDP_SEGMENT)");
		}
		seq += (uint64_t)segs;
	}
	return seq;
}

static void run_bw(const struct floor_opts *o, int fd,
		   struct sockaddr_in *peer, uint8_t *tx, uint8_t *rx)
{
	uint64_t limit = now_ns() + (uint64_t)(o->seconds * 4 + 30) *
				    1000000000ull;

	if (o->server) {
		struct sockaddr_in from;

		check(rx, recv_spin(fd, rx, &from, limit), FLOOR_HDR, 0, 1);
		*peer = from;
		send_all(fd, rx, FLOOR_HDR, peer);
		printf("%-10s %12s %12s %10s  (raw UDP stream, receiver)\n",
		       "bytes", "datagrams", "dropped", "MB/s");
	} else {
		fill(tx, FLOOR_HDR, 0);
		send_all(fd, tx, FLOOR_HDR, peer);
		check(rx, recv_spin(fd, rx, peer, limit), FLOOR_HDR, 0, 1);
	}
	for (int s = 0; s < o->nsizes; s++) {
		size_t size = o->sizes[s];

		if (o->server) {
			uint64_t got, lost;
			double mbs = stream_recv(fd, rx, size, s, limit, &got,
						 &lost);

			printf("%-10zu %12llu %12llu %10.1f\n", size,
			       (unsigned long long)got,
			       (unsigned long long)lost, mbs);
			printf("RESULT floor op=bw size=%zu mbps=%.1f "
			       "dropped=%llu\n", size, mbs,
			       (unsigned long long)lost);
			/* tell the client this size is done */
			fill(tx, FLOOR_HDR, FLOOR_END + (uint64_t)s);
			send_all(fd, tx, FLOOR_HDR, peer);
			continue;
		}
		uint64_t end = now_ns() + (uint64_t)(o->seconds * 1e9);
		uint64_t seq = 0;

		if (o->gso) {
			seq = stream_send_gso(o, fd, tx, size, peer, end);
			goto marker;
		}
		fill(tx, size, 0);
		while (now_ns() < end) {
			/* Only the header changes; every 256th datagram gets
			 * its whole pattern, the one the server checks. */
			if (!(seq & 255))
				fill(tx, size, seq);
			else
				memcpy(tx, &seq, 8);
			send_all(fd, tx, size, peer);
			seq++;
		}
marker:
		/* The end marker, repeated until the server answers: it
		 * may be dropped like any datagram. */
		fill(tx, FLOOR_HDR, FLOOR_END + (uint64_t)s);
		for (;;) {
			socklen_t fl = sizeof(*peer);
			uint64_t t = now_ns();

			send_all(fd, tx, FLOOR_HDR, peer);
			while (now_ns() - t < 20000000ull) {
				ssize_t n = recvfrom(fd, rx, FLOOR_MAX_DGRAM,
						     MSG_DONTWAIT,
						     (struct sockaddr *)peer,
						     &fl);
				if (n == FLOOR_HDR &&
				    !memcmp(rx, tx, FLOOR_HDR))
					goto next_size;
			}
			if (t > limit) {
				errno = ETIMEDOUT;
				die("waiting for the server");
			}
		}
next_size:;
	}
}

int main(int argc, char **argv)
{
	struct floor_opts o = { .op = "lat", .port = 47600, .iters = 20000,
				.seconds = 2.0 };
	struct sockaddr_in peer;
	uint8_t *tx, *rx;
	int ch, fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((ch = getopt(argc, argv, "o:sP:S:I:T:G:h")) != -1) {
		switch (ch) {
		case 'o': o.op = optarg; break;
		case 's': o.server = 1; break;
		case 'P': o.port = atoi(optarg); break;
		case 'I': o.iters = atoi(optarg); break;
		case 'T': o.seconds = atof(optarg); break;
		case 'G': o.gso = atoi(optarg); break;
		case 'S':
			for (char *t = strtok(optarg, ","); t &&
			     o.nsizes < FLOOR_MAX_SIZES; t = strtok(NULL, ",")) {
				char *end;
				size_t v = strtoull(t, &end, 0);

				if (*end == 'k' || *end == 'K')
					v <<= 10;
				o.sizes[o.nsizes++] = v;
			}
			break;
		default:
			fprintf(stderr, "usage: %s -o lat|bw [-s | SERVER_IP] "
				"[-P PORT] [-S SIZES] [-I ITERS] [-T SEC] "
				"[-G SEGMENTS]\n",
				argv[0]);
			return ch == 'h' ? 0 : 2;
		}
	}
	if (optind < argc)
		o.dst = argv[optind];
	if ((!o.server && !o.dst) || o.iters < 1 || o.seconds <= 0 ||
	    o.gso < 0 || o.gso > FLOOR_GSO_MAX ||
	    (strcmp(o.op, "lat") && strcmp(o.op, "bw"))) {
		fprintf(stderr, "FAIL sft_udp_floor: bad arguments\n");
		return 2;
	}
	if (!o.nsizes)
		o.sizes[o.nsizes++] = strcmp(o.op, "bw") ? 8 : 65536 - 64;
	for (int i = 0; i < o.nsizes; i++)
		if (o.sizes[i] < FLOOR_HDR || o.sizes[i] > FLOOR_MAX_DGRAM)
			o.sizes[i] = o.sizes[i] < FLOOR_HDR ? FLOOR_HDR :
				     FLOOR_MAX_DGRAM;
	tx = malloc(FLOOR_MAX_DGRAM);
	rx = malloc(FLOOR_RX_BUF);
	if (!tx || !rx)
		die("malloc");
	fd = open_socket(&o, &peer);
	if (!strcmp(o.op, "lat"))
		run_lat(&o, fd, &peer, tx, rx);
	else
		run_bw(&o, fd, &peer, tx, rx);
	close(fd);
	free(tx);
	free(rx);
	printf("PASS sft_udp_floor %s\n", o.op);
	return 0;
}
