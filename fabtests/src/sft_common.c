/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_common.c - option parsing, watchdog, provider setup, OOB address
 * exchange, buffers and data patterns shared by the sft_* tests
 * (completion handling is in sft_cq.c).
 */
#include "sft_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct sft_opts *sft_cur_opts;
static char watchdog_msg[256];

/* ------------------------------------------------------------------ */
/* process helpers                                                      */

static const char *test_name(void)
{
	return sft_cur_opts && sft_cur_opts->test ? sft_cur_opts->test : "sft";
}

void sft_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	printf("FAIL %s: ", test_name());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(SFT_EXIT_FAIL);
}

void sft_skip(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(SFT_EXIT_SKIP);
}

void sft_pass(const char *fmt, ...)
{
	va_list ap;

	printf("PASS %s", test_name());
	if (fmt && *fmt) {
		printf(" ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	fflush(stdout);
	exit(SFT_EXIT_PASS);
}

void sft_log(const char *fmt, ...)
{
	va_list ap;

	if (!sft_cur_opts || !sft_cur_opts->verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

uint64_t sft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t sft_now_us(void)
{
	return sft_now_ns() / 1000;
}

static char step_msg[160];

void sft_step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(step_msg, sizeof(step_msg), fmt, ap);
	va_end(ap);
	sft_log("step: %s", step_msg);
}

static void watchdog_handler(int sig)
{
	ssize_t r;

	(void)sig;
	r = write(STDOUT_FILENO, watchdog_msg, strlen(watchdog_msg));
	if (step_msg[0]) {
		r = write(STDOUT_FILENO, " (at: ", 6);
		r = write(STDOUT_FILENO, step_msg, strnlen(step_msg,
							   sizeof(step_msg)));
		r = write(STDOUT_FILENO, ")", 1);
	}
	r = write(STDOUT_FILENO, "\n", 1);
	(void)r;
	_exit(SFT_EXIT_FAIL);
}

void sft_start_watchdog(struct sft_opts *o)
{
	snprintf(watchdog_msg, sizeof(watchdog_msg),
		 "FAIL %s: watchdog: not finished after %d s",
		 o->test, o->timeout);
	signal(SIGALRM, watchdog_handler);
	alarm((unsigned)o->timeout);
}

/* ------------------------------------------------------------------ */
/* options                                                              */

size_t sft_parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		sft_die("bad size '%s'", s);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		sft_die("bad size '%s'", s);
	return (size_t)v;
}

static void parse_sizes(struct sft_opts *o, const char *arg)
{
	char *copy, *tok, *save = NULL;
	size_t s;

	o->nsizes = 0;
	o->sizes_set = 1;
	if (!strcmp(arg, "all")) {
		o->sizes[o->nsizes++] = 0;
		for (s = 1; s <= 64 * SFT_MIB; s <<= 1)
			o->sizes[o->nsizes++] = s;
		return;
	}
	copy = strdup(arg);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == SFT_MAX_SIZES)
			sft_die("too many sizes");
		o->sizes[o->nsizes++] = sft_parse_size(tok);
	}
	free(copy);
	if (!o->nsizes)
		sft_die("empty size list");
}

void sft_default_sizes(struct sft_opts *o, const size_t *def, int n)
{
	int i;

	if (o->sizes_set)
		return;
	for (i = 0; i < n && i < SFT_MAX_SIZES; i++)
		o->sizes[i] = def[i];
	o->nsizes = i;
}

void sft_init_opts(struct sft_opts *o, const char *test)
{
	setvbuf(stdout, NULL, _IOLBF, 0);	/* nothing lost on _exit */
	memset(o, 0, sizeof(*o));
	o->test = test;
	o->port = 47592;
	o->timeout = 60;
	o->window = 64;
	sft_cur_opts = o;
}

static void usage(const struct sft_opts *o)
{
	printf("usage: %s -p PROVIDER [-s | SERVER_ADDR] [options]\n"
	       "  -p PROV   provider name, e.g. srd or \"tcp;ofi_rxm\" (required)\n"
	       "  -P PORT   OOB TCP port (default 47592)\n"
	       "  -s        server mode; the client names the server address\n"
	       "  -b ADDR   bind here: the OOB socket (server: listen on ADDR,\n"
	       "            default 127.0.0.1 or $SFT_OOB_ADDR) and the provider\n"
	       "            endpoint (fi_getinfo node ADDR with FI_SOURCE: the\n"
	       "            interface holding ADDR); across hosts, give the\n"
	       "            server -b and the client the server's ADDR\n"
	       "  -S SIZES  comma list (k/m suffix) or 'all' (0,1,2,4..64m)\n"
	       "  -I N      iterations / message count\n"
	       "  -m MODE   msg | tagged\n"
	       "  -W N      window (sft_bw, default 64)\n"
	       "  -t SEC    watchdog, exit non-zero after SEC s (default 60)\n"
	       "  -o OP     operation, for programs that have several\n"
	       "  -v        verbose\n", o->test);
}

void sft_parse_opts(struct sft_opts *o, int argc, char **argv)
{
	int ch;

	while ((ch = getopt(argc, argv, "p:P:sb:S:I:m:W:t:o:vh")) != -1) {
		switch (ch) {
		case 'p': o->prov = optarg; break;
		case 'P': o->port = atoi(optarg); break;
		case 's': o->server = 1; break;
		case 'b': o->bind = optarg; break;
		case 'S': parse_sizes(o, optarg); break;
		case 'I': o->iters = atoi(optarg); break;
		case 'W': o->window = atoi(optarg); break;
		case 't': o->timeout = atoi(optarg); break;
		case 'o': o->op = optarg; break;
		case 'v': o->verbose = 1; break;
		case 'm':
			if (!strcmp(optarg, "msg"))
				o->tagged = 0;
			else if (!strcmp(optarg, "tagged"))
				o->tagged = 1;
			else
				sft_die("-m must be msg or tagged");
			break;
		case 'h': usage(o); exit(0);
		default: usage(o); exit(SFT_EXIT_FAIL);
		}
	}
	if (optind < argc)
		o->dst = o->subtest = argv[optind];
	if (!o->prov) {
		usage(o);
		sft_die("-p PROVIDER is required");
	}
	if (o->bind) {
		struct in_addr a;

		if (inet_pton(AF_INET, o->bind, &a) != 1)
			sft_die("-b wants an IPv4 address, got '%s'", o->bind);
	}
	if (o->window < 1 || o->timeout < 1 || o->iters < 0 ||
	    o->port <= 0 || o->port > 65535)
		sft_die("bad -W/-t/-I/-P value");
	sft_start_watchdog(o);
}

/* ------------------------------------------------------------------ */
/* provider setup                                                       */

struct fi_info *sft_hints(const struct sft_opts *o, const struct sft_params *p)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		sft_die("fi_allocinfo failed");
	h->caps = p->caps;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->fabric_attr->prov_name = strdup(o->prov);
	if (p->msg_order) {
		h->tx_attr->msg_order = p->msg_order;
		h->rx_attr->msg_order = p->msg_order;
	}
	return h;
}

/* With -b, the entries of the interface that holds the address, the
 * endpoint bound to it (any port); else the provider's own order. */
int sft_getinfo(const struct sft_opts *o, const struct sft_params *p,
		struct fi_info **info)
{
	struct fi_info *h = sft_hints(o, p);
	int ret;

	ret = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
			 o->bind, NULL, o->bind ? FI_SOURCE : 0, h, info);
	fi_freeinfo(h);
	return ret;
}

static void cq_open(struct sft_ctx *c, struct sft_cq *cq, const char *name)
{
	struct fi_cq_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.format = FI_CQ_FORMAT_TAGGED;
	attr.wait_obj = FI_WAIT_NONE;
	memset(cq, 0, sizeof(*cq));
	cq->name = name;
	SFT_TRY(fi_cq_open(c->domain, &attr, &cq->cq, NULL));
}

static void cq_close(struct sft_cq *cq)
{
	if (cq->cq)
		SFT_TRY(fi_close(&cq->cq->fid));
	free(cq->q);
	memset(cq, 0, sizeof(*cq));
}

void sft_open_ep(struct sft_ctx *c)
{
	size_t min = c->params.min_multi_recv;

	cq_open(c, &c->txcq, "tx cq");
	cq_open(c, &c->rxcq, "rx cq");
	SFT_TRY(fi_endpoint(c->domain, c->info, &c->ep, NULL));
	SFT_TRY(fi_ep_bind(c->ep, &c->av->fid, 0));
	SFT_TRY(fi_ep_bind(c->ep, &c->txcq.cq->fid,
			   FI_TRANSMIT | c->params.tx_bind_flags));
	SFT_TRY(fi_ep_bind(c->ep, &c->rxcq.cq->fid, FI_RECV));
	if (min)
		SFT_TRY(fi_setopt(&c->ep->fid, FI_OPT_ENDPOINT,
				  FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)));
	SFT_TRY(fi_enable(c->ep));
}

void sft_close_ep(struct sft_ctx *c)
{
	if (c->ep)
		SFT_TRY(fi_close(&c->ep->fid));
	c->ep = NULL;
	cq_close(&c->txcq);
	cq_close(&c->rxcq);
}

void sft_setup(struct sft_ctx *c, struct sft_opts *o,
	       const struct sft_params *p)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->opts = o;
	c->params = *p;
	c->oob_fd = -1;
	c->peer = FI_ADDR_UNSPEC;
	c->next_key = 1;
	ret = sft_getinfo(o, p, &c->info);
	if (ret == -FI_ENODATA)
		sft_skip("provider '%s' offers no FI_EP_RDM with caps %s",
			 o->prov, fi_tostr(&p->caps, FI_TYPE_CAPS));
	if (ret)
		sft_die("fi_getinfo: %d (%s)", ret, fi_strerror(-ret));
	sft_log("using %s, fabric %s, domain %s, mr_mode 0x%x",
		c->info->fabric_attr->prov_name, c->info->fabric_attr->name,
		c->info->domain_attr->name, c->info->domain_attr->mr_mode);
	sft_open_objects(c);
}

void sft_open_objects(struct sft_ctx *c)
{
	struct fi_av_attr av_attr;

	c->need_mr = !!(c->info->domain_attr->mr_mode & FI_MR_LOCAL);
	SFT_TRY(fi_fabric(c->info->fabric_attr, &c->fabric, NULL));
	SFT_TRY(fi_domain(c->fabric, c->info, &c->domain, NULL));
	memset(&av_attr, 0, sizeof(av_attr));
	av_attr.type = c->info->domain_attr->av_type;
	SFT_TRY(fi_av_open(c->domain, &av_attr, &c->av, NULL));
	sft_open_ep(c);
}

void sft_teardown(struct sft_ctx *c)
{
	sft_close_ep(c);
	if (c->av)
		SFT_TRY(fi_close(&c->av->fid));
	if (c->domain)
		SFT_TRY(fi_close(&c->domain->fid));
	if (c->fabric)
		SFT_TRY(fi_close(&c->fabric->fid));
	if (c->info)
		fi_freeinfo(c->info);
	if (c->oob_fd >= 0)
		close(c->oob_fd);
	c->av = NULL;
	c->domain = NULL;
	c->fabric = NULL;
	c->info = NULL;
	c->oob_fd = -1;
}

/* ------------------------------------------------------------------ */
/* out-of-band socket                                                   */

static void oob_server(struct sft_ctx *c, struct sockaddr_in *sin)
{
	const char *oob_addr = getenv("SFT_OOB_ADDR");
	int one = 1, lfd;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		sft_die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* Loopback unless -b (or, from before -b, SFT_OOB_ADDR) names the
	 * address to listen on: a client in another host or namespace. */
	if (c->opts->bind)
		oob_addr = c->opts->bind;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (oob_addr && inet_pton(AF_INET, oob_addr, &sin->sin_addr) != 1)
		sft_die("bad SFT_OOB_ADDR '%s'", oob_addr);
	if (bind(lfd, (struct sockaddr *)sin, sizeof(*sin)) ||
	    listen(lfd, 1))
		sft_die("OOB bind/listen on port %d: %s", c->opts->port,
			strerror(errno));
	sft_log("server: OOB listening on %s port %d",
		oob_addr ? oob_addr : "127.0.0.1", c->opts->port);
	c->oob_fd = accept(lfd, NULL, NULL);
	if (c->oob_fd < 0)
		sft_die("accept: %s", strerror(errno));
	close(lfd);
}

/* The client's -b: its OOB connection leaves from that address too. */
static void oob_bind_source(int fd, const char *addr)
{
	struct sockaddr_in me;

	memset(&me, 0, sizeof(me));
	me.sin_family = AF_INET;
	inet_pton(AF_INET, addr, &me.sin_addr);
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)))
		sft_die("OOB bind to %s: %s", addr, strerror(errno));
}

static void oob_client(struct sft_ctx *c, struct sockaddr_in *sin)
{
	uint64_t t0 = sft_now_us();
	int fd;

	if (!c->opts->dst)
		sft_die("client needs the server address (or -s for server)");
	if (inet_pton(AF_INET, c->opts->dst, &sin->sin_addr) != 1)
		sft_die("bad server address '%s'", c->opts->dst);
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			sft_die("socket: %s", strerror(errno));
		if (c->opts->bind)
			oob_bind_source(fd, c->opts->bind);
		if (!connect(fd, (struct sockaddr *)sin, sizeof(*sin)))
			break;
		close(fd);
		if (sft_now_us() - t0 > 10000000ull)
			sft_die("OOB connect to %s:%d: %s", c->opts->dst,
				c->opts->port, strerror(errno));
		usleep(50000);
	}
	c->oob_fd = fd;
}

void sft_oob_connect(struct sft_ctx *c)
{
	struct sockaddr_in sin;
	int one = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)c->opts->port);
	if (c->opts->server)
		oob_server(c, &sin);
	else
		oob_client(c, &sin);
	setsockopt(c->oob_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void sft_oob_send(struct sft_ctx *c, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(c->oob_fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			sft_die("OOB send: %s", n ? strerror(errno) : "closed");
		p += n;
		len -= (size_t)n;
	}
}

/* Wait for OOB data while driving provider progress (manual progress). */
static void oob_wait_readable(struct sft_ctx *c)
{
	struct pollfd pfd = { .fd = c->oob_fd, .events = POLLIN };

	for (;;) {
		if (poll(&pfd, 1, c->ep ? 0 : 100) > 0)
			return;
		if (c->ep)
			sft_progress(c);
	}
}

void sft_oob_recv(struct sft_ctx *c, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		oob_wait_readable(c);
		n = recv(c->oob_fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			sft_die("OOB recv: %s (peer gone?)",
				n ? strerror(errno) : "connection closed");
		p += n;
		len -= (size_t)n;
	}
}

void sft_oob_sync(struct sft_ctx *c)
{
	char out = 'S', in = 0;

	sft_oob_send(c, &out, 1);
	sft_oob_recv(c, &in, 1);
	if (in != 'S')
		sft_die("OOB sync: got 0x%02x", (unsigned char)in);
}

/* The two ends of a benchmark size their buffers, windows and rounds
 * from their own options; if those differ, one end waits for operations
 * the other never posts and the run ends in a timeout or a false data
 * error.  Compare them once, before any traffic, and say which differs. */
void sft_oob_agree(struct sft_ctx *c)
{
	enum { OP, WINDOW, ITERS, TAGGED, NSIZES, SIZES };
	const struct sft_opts *o = c->opts;
	uint64_t mine[SIZES + SFT_MAX_SIZES] = { 0 };
	uint64_t theirs[SIZES + SFT_MAX_SIZES];
	static const char *const what[] = {
		[WINDOW] = "-W", [ITERS] = "-I",
		[NSIZES] = "the number of -S sizes",
	};
	const char *end = "(give both ends the same options)";

	/* -o by name, at most 8 characters, for the message below */
	if (o->op)
		memcpy(&mine[OP], o->op, strnlen(o->op, sizeof(mine[OP])));
	mine[WINDOW] = (uint64_t)o->window;
	mine[ITERS] = (uint64_t)o->iters;
	mine[TAGGED] = (uint64_t)o->tagged;
	mine[NSIZES] = (uint64_t)o->nsizes;
	for (int i = 0; i < o->nsizes && i < SFT_MAX_SIZES; i++)
		mine[SIZES + i] = o->sizes[i];
	sft_oob_send(c, mine, sizeof(mine));
	sft_oob_recv(c, theirs, sizeof(theirs));
	for (int i = 0; i < SIZES + SFT_MAX_SIZES; i++) {
		char a[9] = "", b[9] = "";

		if (mine[i] == theirs[i])
			continue;
		switch (i) {
		case OP:
			memcpy(a, &mine[OP], 8);
			memcpy(b, &theirs[OP], 8);
			sft_die("client and server disagree on -o: %s here, %s "
				"at the other end %s", a[0] ? a : "none",
				b[0] ? b : "none", end);
		case TAGGED:
			sft_die("client and server disagree on -m: %s here, %s "
				"at the other end %s",
				mine[i] ? "tagged" : "msg",
				theirs[i] ? "tagged" : "msg", end);
		case WINDOW: case ITERS: case NSIZES:
			sft_die("client and server disagree on %s: %" PRIu64
				" here, %" PRIu64 " at the other end %s",
				what[i], mine[i], theirs[i], end);
		default:
			sft_die("client and server disagree on -S: size %d is "
				"%" PRIu64 " here, %" PRIu64 " at the other "
				"end %s", i - SIZES, mine[i], theirs[i], end);
		}
	}
}

void sft_exchange_addr(struct sft_ctx *c)
{
	char mine[512], theirs[512];
	size_t len = sizeof(mine);
	uint32_t n;
	int ret;

	if (c->oob_fd < 0)
		sft_oob_connect(c);
	SFT_TRY(fi_getname(&c->ep->fid, mine, &len));
	n = (uint32_t)len;
	sft_oob_send(c, &n, sizeof(n));
	sft_oob_send(c, mine, len);
	sft_oob_recv(c, &n, sizeof(n));
	if (n == 0 || n > sizeof(theirs))
		sft_die("peer address length %u", n);
	sft_oob_recv(c, theirs, n);
	ret = fi_av_insert(c->av, theirs, 1, &c->peer, 0, NULL);
	if (ret != 1)
		sft_die("fi_av_insert of peer returned %d", ret);
	len = sizeof(mine);
	sft_log("%s: peer %s inserted as fi_addr %llu",
		c->opts->server ? "server" : "client",
		fi_av_straddr(c->av, theirs, mine, &len),
		(unsigned long long)c->peer);
}

/* ------------------------------------------------------------------ */
/* buffers and data patterns                                            */

void sft_buf_alloc(struct sft_ctx *c, struct sft_buf *b, size_t len)
{
	void *p;

	memset(b, 0, sizeof(*b));
	if (posix_memalign(&p, 4096, len ? len : 1))
		sft_die("out of memory (%zu bytes)", len);
	b->ptr = p;
	b->len = len;
	memset(b->ptr, 0, len ? len : 1);
	if (!c->need_mr)
		return;
	SFT_TRY(fi_mr_reg(c->domain, b->ptr, len ? len : 1,
			  FI_SEND | FI_RECV, 0, c->next_key++, 0, &b->mr,
			  NULL));
	b->desc = fi_mr_desc(b->mr);
}

void sft_buf_free(struct sft_buf *b)
{
	if (b->mr)
		SFT_TRY(fi_close(&b->mr->fid));
	free(b->ptr);
	memset(b, 0, sizeof(*b));
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* 8 pattern bytes for word index w; bytes depend on seed and offset. */
static uint64_t pattern_word(uint64_t seed, size_t w)
{
	return mix64((seed << 40) ^ (uint64_t)w ^ (seed >> 24));
}

void sft_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	size_t off, k;
	uint64_t w;

	for (off = 0; off < len; off += 8) {
		w = pattern_word(seed, off >> 3);
		for (k = 0; k < 8 && off + k < len; k++)
			p[off + k] = (uint8_t)(w >> (k * 8));
	}
}

/* Check every byte; report the first mismatch and how many differ. */
int sft_verify(const void *buf, size_t len, uint64_t seed, const char *what)
{
	const uint8_t *p = buf;
	size_t off, k, bad = 0, first = 0;
	uint8_t exp, first_exp = 0;
	uint64_t w;

	for (off = 0; off < len; off += 8) {
		w = pattern_word(seed, off >> 3);
		for (k = 0; k < 8 && off + k < len; k++) {
			exp = (uint8_t)(w >> (k * 8));
			if (p[off + k] == exp)
				continue;
			if (!bad++) {
				first = off + k;
				first_exp = exp;
			}
		}
	}
	if (!bad)
		return 0;
	printf("data mismatch in %s: first at offset %zu of %zu: expected "
	       "0x%02x got 0x%02x (%zu bytes differ)\n", what, first, len,
	       first_exp, p[first], bad);
	return -1;
}

/* The pattern of bytes [off, off + len) of a message filled by
 * sft_fill(seed): a piece at a time, so a program can fill or check a
 * large buffer between polls instead of in one stretch.  off is a
 * multiple of 8. */
void sft_fill_range(void *msg, size_t off, size_t len, uint64_t seed)
{
	uint8_t *p = msg;
	size_t end = off + len, k;
	uint64_t w;

	for (; off < end; off += 8) {
		w = pattern_word(seed, off >> 3);
		if (end - off >= 8) {
			memcpy(p + off, &w, 8);	/* little-endian: sft_fill's order */
			continue;
		}
		for (k = 0; off + k < end; k++)
			p[off + k] = (uint8_t)(w >> (k * 8));
	}
}

/* 0 when bytes [off, off + len) hold sft_fill(seed)'s pattern; -1 (and
 * nothing printed) when one differs: sft_verify then says where. */
int sft_check_range(const void *msg, size_t off, size_t len, uint64_t seed)
{
	const uint8_t *p = msg;
	size_t end = off + len, k;
	uint64_t w, got;

	for (; off < end; off += 8) {
		w = pattern_word(seed, off >> 3);
		if (end - off >= 8) {
			memcpy(&got, p + off, 8);
			if (got != w)
				return -1;
			continue;
		}
		for (k = 0; off + k < end; k++)
			if (p[off + k] != (uint8_t)(w >> (k * 8)))
				return -1;
	}
	return 0;
}
