/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_incast: N senders stream into one receiver endpoint.
 *
 *   receiver: sft_incast -p PROV -s -N NSENDERS [-S SIZE] [-I N] [-W W]
 *   sender:   sft_incast -p PROV [-S SIZE] [-I N] [-W W] SERVER_ADDR
 *
 * The receiver listens for the senders' out-of-band TCP connections on
 * every local address (port -P), so senders in other hosts or network
 * namespaces reach it; it hands each sender an id (the order of
 * connection) and its own endpoint address.  Once all N senders are in,
 * it posts its receives and tells every sender to start.  Each sender
 * keeps up to -W sends of -S bytes in flight until it has sent -I
 * messages.  Every message carries its sender id and sequence number (in
 * the tag, or with -m msg in its first 8 bytes) and a pattern that
 * depends on both; the receiver checks every byte, the completion (flags,
 * len), that no message comes twice and that each sender delivered all
 * of its -I messages.  Then each sender reports over the socket, the
 * receiver answers with what it got from that sender, and both print
 * their figures: per sender the messages, bytes, time from the start
 * signal to its last message and MB/s, plus the aggregate.
 *
 * Extra options (besides the common sft ones):
 *   -N N          receiver: number of senders (default 1, at most 64)
 *   -A ADDR:PORT  bind the provider endpoint to this address and port
 *                 (fi_getinfo node/service with FI_SOURCE), e.g. to
 *                 restart a receiver on the same provider address
 *
 * Exit 0 pass, 1 fail, 77 skip (provider lacks FI_TAGGED / FI_MSG).
 */
#include "sft_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define INCAST_MAGIC 0x5346494eu	/* "SFIN" */
#define MAX_SENDERS 64
#define ADDR_MAX 512
#define SEND_BYTES_MAX (16 * SFT_MIB)	/* a sender's window at most */
#define RECV_BYTES_MAX (256 * SFT_MIB)	/* the receiver's posted buffers */
#define HDR_LEN 8			/* -m msg: id/seq word up front */
#define SEQ_BITS 32

struct hello {			/* sender -> receiver */
	uint32_t magic, tagged;
	uint64_t size, iters;
	uint32_t addrlen, pad;
	uint8_t addr[ADDR_MAX];
};

struct welcome {		/* receiver -> sender */
	uint32_t magic, id, nsenders, addrlen;
	uint8_t addr[ADDR_MAX];
};

struct report {			/* sender -> receiver, at the end */
	uint32_t magic, pad;
	uint64_t sent, usec;
};

struct verdict {		/* receiver -> sender, at the end */
	uint32_t magic, ok;
	uint64_t received, usec;
};

struct sender_stat {
	int fd;
	fi_addr_t addr;
	uint64_t got, bytes, last_us;
	uint64_t sent_report, usec_report;
	uint8_t *seen;		/* bitmap of sequence numbers */
};

struct incast {
	struct sft_ctx c;
	struct sft_opts o;
	int nsenders;
	const char *src;	/* -A */
	size_t size;
	uint64_t iters;
	int window;
};

static uint64_t tag_of(uint32_t id, uint64_t seq)
{
	return ((uint64_t)id << SEQ_BITS) | seq;
}

static uint64_t seed_of(uint32_t id, uint64_t seq)
{
	return ((uint64_t)(id + 1) << 32) | seq;
}

/* Fill a message: with -m msg, the id/seq word first, pattern after. */
static void fill_msg(const struct incast *in, uint8_t *buf, uint32_t id,
		     uint64_t seq)
{
	uint64_t word = tag_of(id, seq);

	if (in->o.tagged) {
		sft_fill(buf, in->size, seed_of(id, seq));
		return;
	}
	memcpy(buf, &word, HDR_LEN);
	sft_fill(buf + HDR_LEN, in->size - HDR_LEN, seed_of(id, seq));
}

/* ------------------------------------------------------------------ */
/* option handling: -N and -A are taken out before sft_parse_opts      */

static void usage_extra(void)
{
	printf("sft_incast extra options:\n"
	       "  -N N          receiver: number of senders (default 1, max %d)\n"
	       "  -A ADDR:PORT  provider source address and port\n",
	       MAX_SENDERS);
}

static int take_opt(int *i, int argc, char **argv, char opt,
		    const char **val)
{
	const char *a = argv[*i];

	if (a[0] != '-' || a[1] != opt)
		return 0;
	if (a[2]) {
		*val = a + 2;
		return 1;
	}
	if (*i + 1 >= argc) {
		fprintf(stderr, "-%c needs a value\n", opt);
		exit(SFT_EXIT_FAIL);
	}
	*val = argv[++*i];
	return 1;
}

static void parse(struct incast *in, int argc, char **argv)
{
	char **rest = calloc((size_t)argc + 1, sizeof(char *));
	const char *val;
	int i, n = 0;

	if (!rest)
		sft_die("out of memory");
	in->nsenders = 1;
	rest[n++] = argv[0];
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < argc)
				rest[n++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "-h"))
			usage_extra();
		if (take_opt(&i, argc, argv, 'N', &val))
			in->nsenders = atoi(val);
		else if (take_opt(&i, argc, argv, 'A', &val))
			in->src = val;
		else
			rest[n++] = argv[i];
	}
	sft_parse_opts(&in->o, n, rest);
	free(rest);		/* the options keep pointers into argv only */
	if (in->nsenders < 1 || in->nsenders > MAX_SENDERS)
		sft_die("-N must be 1..%d", MAX_SENDERS);
	if (in->o.nsizes > 1)
		sft_die("-S takes one size");
	in->size = in->o.nsizes ? in->o.sizes[0] : 65536;
	in->iters = in->o.iters ? (uint64_t)in->o.iters : 1000;
	if (in->iters >= (1ull << SEQ_BITS))
		sft_die("-I too large");
	if (!in->o.tagged && in->size < HDR_LEN)
		sft_die("-m msg needs -S >= %d (id/seq header)", HDR_LEN);
	in->window = in->o.window;
	if (in->size && (size_t)in->window * in->size > SEND_BYTES_MAX)
		in->window = (int)(SEND_BYTES_MAX / in->size);
	if (in->window < 1)
		in->window = 1;
}

/* ------------------------------------------------------------------ */
/* provider setup, optionally on a given source address                 */

static void setup(struct incast *in)
{
	struct sft_params p = { 0 };
	struct sft_ctx *c = &in->c;
	struct fi_info *hints;
	char host[256], *colon;
	int ret;

	p.caps = in->o.tagged ? FI_TAGGED : FI_MSG;
	if (!in->src) {
		sft_setup(c, &in->o, &p);
		return;
	}
	snprintf(host, sizeof(host), "%s", in->src);
	colon = strrchr(host, ':');
	if (!colon || colon == host || !colon[1])
		sft_die("-A wants ADDR:PORT, got '%s'", in->src);
	*colon = 0;
	memset(c, 0, sizeof(*c));
	c->opts = &in->o;
	c->params = p;
	c->oob_fd = -1;
	c->peer = FI_ADDR_UNSPEC;
	c->next_key = 1;
	hints = sft_hints(&in->o, &p);
	ret = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
			 host, colon + 1, FI_SOURCE, hints, &c->info);
	fi_freeinfo(hints);
	if (ret == -FI_ENODATA)
		sft_skip("provider '%s' offers no FI_EP_RDM on %s",
			 in->o.prov, in->src);
	if (ret)
		sft_die("fi_getinfo(%s): %d (%s)", in->src, ret,
			fi_strerror(-ret));
	sft_open_objects(c);
}

static void getname(struct incast *in, uint8_t *addr, uint32_t *len)
{
	size_t l = ADDR_MAX;

	SFT_TRY(fi_getname(&in->c.ep->fid, addr, &l));
	*len = (uint32_t)l;
}

static fi_addr_t insert(struct incast *in, const uint8_t *addr, uint32_t len)
{
	fi_addr_t fa = FI_ADDR_UNSPEC;
	int ret;

	if (!len || len > ADDR_MAX)
		sft_die("peer address length %u", len);
	ret = fi_av_insert(in->c.av, addr, 1, &fa, 0, NULL);
	if (ret != 1)
		sft_die("fi_av_insert returned %d", ret);
	return fa;
}

/* OOB I/O on one of several sockets: sft_oob_* use c->oob_fd. */
static void oob_send_on(struct incast *in, int fd, const void *b, size_t l)
{
	in->c.oob_fd = fd;
	sft_oob_send(&in->c, b, l);
	in->c.oob_fd = -1;
}

static void oob_recv_on(struct incast *in, int fd, void *b, size_t l)
{
	in->c.oob_fd = fd;
	sft_oob_recv(&in->c, b, l);
	in->c.oob_fd = -1;
}

/* ------------------------------------------------------------------ */
/* receiver                                                             */

static int oob_listen(int port)
{
	struct sockaddr_in sin;
	int one = 1, fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		sft_die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(fd, MAX_SENDERS))
		sft_die("OOB bind/listen on port %d: %s", port,
			strerror(errno));
	return fd;
}

static void accept_senders(struct incast *in, struct sender_stat *st)
{
	struct welcome w;
	struct hello h;
	char peer[64];
	struct sockaddr_in sin;
	socklen_t slen;
	int lfd, fd, one = 1, i;

	lfd = oob_listen(in->o.port);
	sft_log("receiver: OOB listening on port %d for %d senders",
		in->o.port, in->nsenders);
	memset(&w, 0, sizeof(w));
	w.magic = INCAST_MAGIC;
	w.nsenders = (uint32_t)in->nsenders;
	getname(in, w.addr, &w.addrlen);
	for (i = 0; i < in->nsenders; i++) {
		sft_step("receiver: waiting for sender %d of %d", i + 1,
			 in->nsenders);
		slen = sizeof(sin);
		fd = accept(lfd, (struct sockaddr *)&sin, &slen);
		if (fd < 0) {
			if (errno == EINTR) {
				i--;
				continue;
			}
			sft_die("accept: %s", strerror(errno));
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		st[i].fd = fd;
		oob_recv_on(in, fd, &h, sizeof(h));
		inet_ntop(AF_INET, &sin.sin_addr, peer, sizeof(peer));
		if (h.magic != INCAST_MAGIC)
			sft_die("sender %d (%s): bad hello", i, peer);
		if (h.size != in->size || h.iters != in->iters ||
		    h.tagged != (uint32_t)in->o.tagged)
			sft_die("sender %d (%s) sends %llu x %llu bytes (%s), "
				"receiver expects %llu x %zu (%s)", i, peer,
				(unsigned long long)h.iters,
				(unsigned long long)h.size,
				h.tagged ? "tagged" : "msg",
				(unsigned long long)in->iters, in->size,
				in->o.tagged ? "tagged" : "msg");
		st[i].addr = insert(in, h.addr, h.addrlen);
		w.id = (uint32_t)i;
		oob_send_on(in, fd, &w, sizeof(w));
		sft_log("receiver: sender %d from %s", i, peer);
	}
	close(lfd);
}

static void check_recv(struct incast *in, struct sender_stat *st,
		       const struct fi_cq_tagged_entry *e, const uint8_t *buf,
		       uint64_t now)
{
	struct sender_stat *s;
	struct sft_expect x;
	uint64_t word, seq;
	uint32_t id;
	char what[96];
	int bad;

	memset(&x, 0, sizeof(x));
	x.ctx = e->op_context;
	x.flags = FI_RECV | (in->o.tagged ? FI_TAGGED : FI_MSG);
	x.check_len = 1;
	x.len = in->size;
	sft_check_entry(e, &x, "receive");
	if (in->o.tagged)
		word = e->tag;
	else
		memcpy(&word, buf, HDR_LEN);
	id = (uint32_t)(word >> SEQ_BITS);
	seq = word & ((1ull << SEQ_BITS) - 1);
	if (id >= (uint32_t)in->nsenders || seq >= in->iters)
		sft_die("message with id %u seq %llu (%s 0x%llx): no such "
			"sender/sequence", id, (unsigned long long)seq,
			in->o.tagged ? "tag" : "header",
			(unsigned long long)word);
	s = &st[id];
	if (s->seen[seq / 8] & (1u << (seq % 8)))
		sft_die("sender %u message %llu received twice", id,
			(unsigned long long)seq);
	s->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
	snprintf(what, sizeof(what), "sender %u message %llu (%zu bytes)", id,
		 (unsigned long long)seq, in->size);
	if (in->o.tagged)
		bad = sft_verify(buf, in->size, seed_of(id, seq), what);
	else
		bad = sft_verify(buf + HDR_LEN, in->size - HDR_LEN,
				 seed_of(id, seq), what);
	if (bad)
		sft_die("data corruption (%s)", what);
	s->got++;
	s->bytes += in->size;
	s->last_us = now;
}

static void post_one(struct incast *in, struct sft_buf *b,
		     struct fi_context2 *ctx)
{
	struct sft_ctx *c = &in->c;

	if (in->o.tagged)
		SFT_POST(c, fi_trecv(c->ep, b->ptr, in->size, b->desc,
				     FI_ADDR_UNSPEC, 0, ~0ull, ctx));
	else
		SFT_POST(c, fi_recv(c->ep, b->ptr, in->size, b->desc,
				    FI_ADDR_UNSPEC, ctx));
}

static void print_missing(struct incast *in, struct sender_stat *st)
{
	int i;

	for (i = 0; i < in->nsenders; i++)
		printf("  sender %d: %llu of %llu messages\n", i,
		       (unsigned long long)st[i].got,
		       (unsigned long long)in->iters);
	fflush(stdout);
}

static double mbs(uint64_t bytes, uint64_t us)
{
	return us ? (double)bytes / (double)us : 0.0;
}

static void run_receiver(struct incast *in)
{
	struct sender_stat st[MAX_SENDERS];
	struct sft_buf *bufs;
	struct fi_context2 *ctxs;
	struct sft_comp comp;
	struct verdict v;
	struct report r;
	uint64_t total, done = 0, posted = 0, t0, now, last = 0, tbytes = 0;
	uint64_t minus = UINT64_MAX, maxus = 0;
	size_t nbuf, k;
	long slot;
	int i, fails = 0;
	char go = 'G';

	memset(st, 0, sizeof(st));
	for (i = 0; i < in->nsenders; i++) {
		st[i].fd = -1;
		st[i].seen = calloc((size_t)(in->iters / 8 + 1), 1);
		if (!st[i].seen)
			sft_die("out of memory");
	}
	accept_senders(in, st);

	total = (uint64_t)in->nsenders * in->iters;
	nbuf = (size_t)in->nsenders * (size_t)in->window;
	if (in->size && nbuf * in->size > RECV_BYTES_MAX)
		nbuf = RECV_BYTES_MAX / in->size;
	if (nbuf < 1)
		nbuf = 1;
	if (nbuf > total)
		nbuf = (size_t)total;
	bufs = calloc(nbuf ? nbuf : 1, sizeof(*bufs));
	ctxs = calloc(nbuf ? nbuf : 1, sizeof(*ctxs));
	if (!bufs || !ctxs)
		sft_die("out of memory");
	for (k = 0; k < nbuf; k++) {
		sft_buf_alloc(&in->c, &bufs[k], in->size);
		post_one(in, &bufs[k], &ctxs[k]);
		posted++;
	}

	t0 = sft_now_us();
	for (i = 0; i < in->nsenders; i++)
		oob_send_on(in, st[i].fd, &go, 1);
	while (done < total) {
		sft_step("receiver: %llu of %llu messages",
			 (unsigned long long)done, (unsigned long long)total);
		if (sft_get_comp(&in->c, &in->c.rxcq, &comp,
				 SFT_COMP_TIMEOUT_MS)) {
			print_missing(in, st);
			sft_die("no message for %d ms (%llu of %llu received)",
				SFT_COMP_TIMEOUT_MS, (unsigned long long)done,
				(unsigned long long)total);
		}
		if (comp.is_err)
			sft_die("error completion on rx cq: err %d (%s), "
				"prov_errno %d (%s)", comp.err.err,
				fi_strerror(comp.err.err),
				comp.err.prov_errno, comp.errstr);
		slot = (struct fi_context2 *)comp.e.op_context - ctxs;
		if (slot < 0 || (size_t)slot >= nbuf ||
		    (void *)&ctxs[slot] != comp.e.op_context)
			sft_die("receive op_context %p is not ours",
				comp.e.op_context);
		now = sft_now_us();
		check_recv(in, st, &comp.e, bufs[slot].ptr, now);
		done++;
		last = now;
		if (posted < total) {
			post_one(in, &bufs[slot], &ctxs[slot]);
			posted++;
		}
	}
	sft_expect_quiet(&in->c, &in->c.rxcq, 0);

	/* every sender reports what it sent; answer with what arrived */
	for (i = 0; i < in->nsenders; i++) {
		sft_step("receiver: report of sender %d", i);
		oob_recv_on(in, st[i].fd, &r, sizeof(r));
		if (r.magic != INCAST_MAGIC)
			sft_die("sender %d: bad report", i);
		st[i].sent_report = r.sent;
		st[i].usec_report = r.usec;
		memset(&v, 0, sizeof(v));
		v.magic = INCAST_MAGIC;
		v.received = st[i].got;
		v.usec = st[i].last_us - t0;
		v.ok = st[i].got == in->iters && r.sent == in->iters;
		if (!v.ok)
			fails++;
		oob_send_on(in, st[i].fd, &v, sizeof(v));
	}
	/* the senders close once they have the verdict */
	for (i = 0; i < in->nsenders; i++) {
		oob_recv_on(in, st[i].fd, &go, 1);
		close(st[i].fd);
	}

	printf("%-7s %10s %14s %9s %10s %10s\n", "sender", "messages",
	       "bytes", "time_s", "MB/s", "sender_MB/s");
	for (i = 0; i < in->nsenders; i++) {
		uint64_t us = st[i].last_us - t0;

		tbytes += st[i].bytes;
		minus = us < minus ? us : minus;
		maxus = us > maxus ? us : maxus;
		printf("%-7d %10llu %14llu %9.3f %10.2f %10.2f\n", i,
		       (unsigned long long)st[i].got,
		       (unsigned long long)st[i].bytes, us / 1e6,
		       mbs(st[i].bytes, us),
		       mbs(st[i].sent_report * in->size, st[i].usec_report));
	}
	printf("%-7s %10llu %14llu %9.3f %10.2f\n", "all",
	       (unsigned long long)done, (unsigned long long)tbytes,
	       (last - t0) / 1e6, mbs(tbytes, last - t0));
	fflush(stdout);

	for (k = 0; k < nbuf; k++)
		sft_buf_free(&bufs[k]);
	free(bufs);
	free(ctxs);
	for (i = 0; i < in->nsenders; i++)
		free(st[i].seen);
	sft_teardown(&in->c);
	if (fails)
		sft_die("%d sender(s) incomplete", fails);
	sft_pass("receiver: %d senders x %llu x %zu bytes (%s): aggregate "
		 "%.2f MB/s in %.3f s; per-sender finish %.3f..%.3f s",
		 in->nsenders, (unsigned long long)in->iters, in->size,
		 in->o.tagged ? "tagged" : "msg", mbs(tbytes, last - t0),
		 (last - t0) / 1e6, minus / 1e6, maxus / 1e6);
}

/* ------------------------------------------------------------------ */
/* sender                                                               */

static void run_sender(struct incast *in)
{
	struct sft_ctx *c = &in->c;
	struct sft_buf *bufs;
	struct fi_context2 *ctxs;
	struct fi_cq_tagged_entry e;
	struct sft_expect x;
	struct welcome w;
	struct hello h;
	struct report r;
	struct verdict v;
	uint64_t seq, t0, us, inflight = 0;
	int *freelist, nfree, k;
	long slot;
	uint32_t id;
	char go = 0;

	if (!in->o.dst)
		sft_die("sender needs the receiver address (or -s)");
	sft_oob_connect(c);
	memset(&h, 0, sizeof(h));
	h.magic = INCAST_MAGIC;
	h.tagged = (uint32_t)in->o.tagged;
	h.size = in->size;
	h.iters = in->iters;
	getname(in, h.addr, &h.addrlen);
	sft_oob_send(c, &h, sizeof(h));
	sft_oob_recv(c, &w, sizeof(w));
	if (w.magic != INCAST_MAGIC)
		sft_die("bad welcome from the receiver");
	id = w.id;
	c->peer = insert(in, w.addr, w.addrlen);

	bufs = calloc((size_t)in->window, sizeof(*bufs));
	ctxs = calloc((size_t)in->window, sizeof(*ctxs));
	freelist = calloc((size_t)in->window, sizeof(int));
	if (!bufs || !ctxs || !freelist)
		sft_die("out of memory");
	for (k = 0; k < in->window; k++) {
		sft_buf_alloc(c, &bufs[k], in->size);
		freelist[k] = k;
	}
	nfree = in->window;

	sft_step("sender %u: waiting for the start signal", id);
	sft_oob_recv(c, &go, 1);
	if (go != 'G')
		sft_die("bad start signal 0x%02x", (unsigned char)go);
	t0 = sft_now_us();
	memset(&x, 0, sizeof(x));
	x.flags = FI_SEND | (in->o.tagged ? FI_TAGGED : FI_MSG);
	for (seq = 0; seq < in->iters || inflight; ) {
		if (seq < in->iters && nfree) {
			k = freelist[--nfree];
			fill_msg(in, bufs[k].ptr, id, seq);
			sft_step("sender %u: posting message %llu", id,
				 (unsigned long long)seq);
			if (in->o.tagged)
				SFT_POST(c, fi_tsend(c->ep, bufs[k].ptr,
						     in->size, bufs[k].desc,
						     c->peer, tag_of(id, seq),
						     &ctxs[k]));
			else
				SFT_POST(c, fi_send(c->ep, bufs[k].ptr,
						    in->size, bufs[k].desc,
						    c->peer, &ctxs[k]));
			seq++;
			inflight++;
			continue;
		}
		sft_step("sender %u: waiting for a send completion (%llu "
			 "posted, %llu in flight)", id,
			 (unsigned long long)seq,
			 (unsigned long long)inflight);
		sft_wait_ok(c, &c->txcq, &e);
		slot = (struct fi_context2 *)e.op_context - ctxs;
		if (slot < 0 || slot >= in->window ||
		    (void *)&ctxs[slot] != e.op_context)
			sft_die("send op_context %p is not ours", e.op_context);
		x.ctx = e.op_context;
		sft_check_entry(&e, &x, "send");
		freelist[nfree++] = (int)slot;
		inflight--;
	}
	us = sft_now_us() - t0;
	sft_expect_quiet(c, &c->txcq, 0);

	sft_step("sender %u: waiting for the receiver's verdict", id);
	memset(&r, 0, sizeof(r));
	r.magic = INCAST_MAGIC;
	r.sent = seq;
	r.usec = us;
	sft_oob_send(c, &r, sizeof(r));
	sft_oob_recv(c, &v, sizeof(v));
	if (v.magic != INCAST_MAGIC)
		sft_die("bad verdict from the receiver");
	sft_oob_send(c, &go, 1);

	for (k = 0; k < in->window; k++)
		sft_buf_free(&bufs[k]);
	free(bufs);
	free(ctxs);
	free(freelist);
	sft_teardown(c);
	if (!v.ok)
		sft_die("sender %u: receiver got %llu of %llu messages", id,
			(unsigned long long)v.received,
			(unsigned long long)in->iters);
	sft_pass("sender %u of %u: %llu x %zu bytes (%s) sent in %.3f s, "
		 "%.2f MB/s; receiver had all %llu after %.3f s, %.2f MB/s",
		 id, w.nsenders, (unsigned long long)seq, in->size,
		 in->o.tagged ? "tagged" : "msg", us / 1e6,
		 mbs(seq * in->size, us), (unsigned long long)v.received,
		 v.usec / 1e6, mbs(v.received * in->size, v.usec));
}

int main(int argc, char **argv)
{
	static struct incast in;

	sft_init_opts(&in.o, "sft_incast");
	parse(&in, argc, argv);
	setup(&in);
	if (in.size > in.c.info->ep_attr->max_msg_size)
		sft_skip("size %zu above max_msg_size %zu", in.size,
			 in.c.info->ep_attr->max_msg_size);
	if (in.o.server)
		run_receiver(&in);
	else
		run_sender(&in);
	return 0;
}
