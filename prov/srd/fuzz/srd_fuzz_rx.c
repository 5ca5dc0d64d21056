/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_fuzz_rx.c: libFuzzer harness for everything a datagram reaches.
 *
 * Each input runs two real endpoints (the provider's own fi_getinfo,
 * fabric, domain, AV, CQ, MR and endpoint objects) over the in-memory
 * network: "a", a genuine peer, and "b", the victim, with receives
 * posted (msg and tagged), a registered RMA/atomic target region and a
 * rendezvous send of its own to a.  After a warm-up exchange (sessions
 * up both ways) the input's datagrams are delivered to b, each as if
 * from a, from a stranger, from a's host on another port or from b
 * itself; then both endpoints run 40 ms of virtual time, answering each
 * other, and are closed.  Any crash, sanitizer report or leak is a bug,
 * and so is a completion with a context b never posted or a length
 * larger than the buffer.
 *
 * The run is reproducible: the network is seeded, time is virtual, MR
 * keys and connection ids come from this file's srd_random_u64() (which
 * the linker takes instead of the kernel-entropy one in libsrdutil),
 * and the RMA regions sit at fixed addresses between PROT_NONE guards.
 * So the packets the generator mode captures (SRD_FUZZ_GEN=dir: every
 * datagram b receives while a and b run every operation type) are valid
 * in later runs: that is the committed seed corpus.
 *
 * Input: records of [ctl:1][len:2 LE][datagram:len]; ctl bits 0-1 pick
 * the source (0 a, 1 stranger, 2 a's host on another port, 3 b),
 * bits 2-3 the virtual time passed before it (0, 20 us, 1 ms, 50 ms);
 * bit 4 makes a non-handshake datagram speak as a in its genuine
 * session: the harness writes a's port, both connection ids and the
 * session's token into its base header (spec 4.1, 5.5), so that
 * mutated packets get past the session checks to the state machines
 * behind them (the seeds carry valid ones already: the run is
 * reproducible).
 */
#include "config.h"
#include "srd.h"
#include "srd_memnet.h"
#include "srd_rng.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FZ_VISIBLE __attribute__((visibility("default")))
#define FZ_REGION 65536
#define FZ_PAGE 4096
#define FZ_BASE_B ((uintptr_t)0x520000000000ULL)
#define FZ_BASE_A ((uintptr_t)0x520000100000ULL)
#define FZ_MTU 1500
#define FZ_NCTX 32
#define FZ_RECV_MAX 8
/* Small protocol thresholds keep every packet type in short inputs: a
 * rendezvous from 4 KiB, granted 2 KiB per CTS. */
#define FZ_EAGER_MAX 4096
#define FZ_RDV_WINDOW 2048
#define FZ_RDV 10000

struct fi_provider *fi_prov_ini(void);
int LLVMFuzzerInitialize(int *argc, char ***argv) FZ_VISIBLE;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) FZ_VISIBLE;

/* --- reproducible "entropy" -------------------------------------------- */

static uint64_t fz_entropy;

uint64_t srd_random_u64(void)
{
	uint64_t v = srd_splitmix64(&fz_entropy);

	return v ? v : 1;
}

/* --- the in-memory network under the endpoints ------------------------- */

static struct srd_memnet *fz_net;
static unsigned fz_next_port;

static union srd_wire_addr fz_addr(const char *ip, unsigned port)
{
	union srd_wire_addr a;

	memset(&a, 0, sizeof(a));
	a.sin.sin_family = AF_INET;
	a.sin.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &a.sin.sin_addr);
	return a;
}

static int fz_wire_open(const struct srd_wire_udp_attr *attr,
			struct srd_wire **wire)
{
	union srd_wire_addr addr = fz_addr("127.0.0.1", 7000 + fz_next_port++);

	return srd_wire_mem_open(fz_net, &addr, attr->npaths, wire);
}

/* --- hosts ---------------------------------------------------------------- */

struct fz_host {
	const char *name;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	uint8_t *region;		/* FZ_REGION bytes, guarded */
	union srd_wire_addr addr;
	fi_addr_t peer;
	struct fi_context ctx[FZ_NCTX];
	int recv_of_ctx[FZ_NCTX];	/* index into recv_*, or -1 */
	unsigned nctx;
	void *recv_buf[FZ_RECV_MAX];	/* exact-size heap buffers */
	size_t recv_len[FZ_RECV_MAX];
	unsigned nrecv;
	unsigned done;			/* completions read, errors included */
	unsigned errors;
	uint8_t scratch[3][256];	/* local sources and results */
	uint8_t *big;			/* rendezvous send buffer */
};

struct fz_capture;
static struct fi_info *fz_info;
static struct fz_capture *fz_gen;	/* generator mode: the capture */
static bool fz_verbose;			/* SRD_FUZZ_VERBOSE: b's counters */
static struct fz_host fz_a = { .name = "a" }, fz_b = { .name = "b" };

#define FZ_CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "srd_fuzz_rx: %s:%d: %s\n", __FILE__, \
			__LINE__, #cond); \
		abort(); \
	} \
} while (0)

/* A region at a fixed address with an inaccessible page on each side:
 * an RMA that strays past it faults instead of passing unnoticed. */
static uint8_t *fz_region_map(uintptr_t base)
{
	size_t total = FZ_REGION + 2 * FZ_PAGE;
	void *p = mmap((void *)base, total, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	FZ_CHECK(p == (void *)base);
	FZ_CHECK(!mprotect(p, FZ_PAGE, PROT_NONE));
	FZ_CHECK(!mprotect((uint8_t *)p + FZ_PAGE + FZ_REGION, FZ_PAGE,
			   PROT_NONE));
	return (uint8_t *)p + FZ_PAGE;
}

static void fz_host_open(struct fz_host *h)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	size_t len = sizeof(h->addr);

	FZ_CHECK(!srd_fabric_open(fz_info->fabric_attr, &h->fabric, NULL));
	FZ_CHECK(!fi_domain(h->fabric, fz_info, &h->domain, NULL));
	FZ_CHECK(!fi_av_open(h->domain, &av_attr, &h->av, NULL));
	FZ_CHECK(!fi_cq_open(h->domain, &cq_attr, &h->cq, NULL));
	FZ_CHECK(!fi_endpoint(h->domain, fz_info, &h->ep, NULL));
	FZ_CHECK(!fi_ep_bind(h->ep, &h->av->fid, 0));
	FZ_CHECK(!fi_ep_bind(h->ep, &h->cq->fid, FI_TRANSMIT | FI_RECV));
	FZ_CHECK(!fi_enable(h->ep));
	FZ_CHECK(!fi_getname(&h->ep->fid, &h->addr, &len));
	memset(h->region, 0xEE, FZ_REGION);
	FZ_CHECK(!fi_mr_reg(h->domain, h->region, FZ_REGION,
			    FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
			    &h->mr, NULL));
	h->nctx = h->nrecv = h->done = h->errors = 0;
}

static void fz_host_close(struct fz_host *h)
{
	FZ_CHECK(!fi_close(&h->ep->fid));
	FZ_CHECK(!fi_close(&h->mr->fid));
	FZ_CHECK(!fi_close(&h->cq->fid));
	FZ_CHECK(!fi_close(&h->av->fid));
	FZ_CHECK(!fi_close(&h->domain->fid));
	FZ_CHECK(!fi_close(&h->fabric->fid));
	for (unsigned i = 0; i < h->nrecv; i++)
		free(h->recv_buf[i]);
	free(h->big);
	h->big = NULL;
}

static struct fi_context *fz_ctx(struct fz_host *h)
{
	FZ_CHECK(h->nctx < FZ_NCTX);
	h->recv_of_ctx[h->nctx] = -1;
	return &h->ctx[h->nctx++];
}

static bool fz_ctx_known(const struct fz_host *h, const void *ctx)
{
	return ctx >= (const void *)&h->ctx[0] &&
	       ctx < (const void *)&h->ctx[h->nctx];
}

/* Receives into exact-size heap buffers, so an overrun is an ASan
 * report. */
static void fz_post_recv(struct fz_host *h, size_t len, bool tagged,
			 uint64_t tag, uint64_t ignore)
{
	struct fi_context *ctx = fz_ctx(h);
	void *buf = malloc(len);

	FZ_CHECK(buf && h->nrecv < FZ_RECV_MAX);
	h->recv_of_ctx[ctx - h->ctx] = (int)h->nrecv;
	h->recv_buf[h->nrecv] = buf;
	h->recv_len[h->nrecv++] = len;
	if (tagged)
		FZ_CHECK(!fi_trecv(h->ep, buf, len, NULL, FI_ADDR_UNSPEC, tag,
				   ignore, ctx));
	else
		FZ_CHECK(!fi_recv(h->ep, buf, len, NULL, FI_ADDR_UNSPEC, ctx));
}

/* Reads a's and b's CQs (which progresses them); checks every entry. */
static void fz_drain(struct fz_host *h)
{
	struct fi_cq_tagged_entry e[8];
	struct fi_cq_err_entry err;
	ssize_t n;

	while ((n = fi_cq_read(h->cq, e, 8)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			FZ_CHECK(!e[i].op_context ||
				 fz_ctx_known(h, e[i].op_context));
			if (e[i].op_context && (e[i].flags & FI_RECV)) {
				int k = h->recv_of_ctx[(struct fi_context *)
						       e[i].op_context - h->ctx];

				FZ_CHECK(k >= 0 && e[i].len <= h->recv_len[k]);
			}
		}
		h->done += (unsigned)n;
	}
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		FZ_CHECK(fi_cq_readerr(h->cq, &err, 0) == 1);
		FZ_CHECK(err.err > 0);
		FZ_CHECK(!err.op_context || fz_ctx_known(h, err.op_context));
		h->done++;
		h->errors++;
		return;
	}
	FZ_CHECK(n == -FI_EAGAIN);
}

/* Runs both endpoints for ns of virtual time: short steps while packets
 * are in flight, 200 us ones (timer granularity) when idle. */
static void fz_run(uint64_t ns)
{
	uint64_t end = srd_memnet_now(fz_net) + ns;

	while (srd_memnet_now(fz_net) < end) {
		uint64_t now = srd_memnet_now(fz_net);
		uint64_t next = srd_memnet_next_event(fz_net);
		uint64_t step = 200 * SRD_NS_PER_US;

		if (next > now && next - now < step)
			step = next - now;
		if (step < 1000)
			step = 1000;
		srd_memnet_advance(fz_net, step);
		fz_drain(&fz_a);
		fz_drain(&fz_b);
	}
}

/* Runs until h has read want completions (or 200 ms: a harness bug). */
static void fz_run_until(struct fz_host *h, unsigned want)
{
	for (int i = 0; i < 1000 && h->done < want; i++)
		fz_run(200 * SRD_NS_PER_US);
	FZ_CHECK(h->done >= want);
}

static void fz_insert(struct fz_host *h, const struct fz_host *peer)
{
	FZ_CHECK(fi_av_insert(h->av, &peer->addr, 1, &h->peer, 0, NULL) == 1);
}

static void fz_tap(void *arg, const union srd_wire_addr *src,
		   const union srd_wire_addr *dst, const void *buf,
		   size_t len);
static void fz_as_peer(uint8_t *buf, size_t len);

/* --- the scenario both modes share ----------------------------------------- */

static void fz_setup(void)
{
	struct srd_memnet_attr attr = {
		.seed = 7, .delay_ns = 2000, .mtu = FZ_MTU,
	};

	fz_entropy = 0x5eed5eedULL;
	fz_next_port = 0;
	FZ_CHECK(!srd_memnet_open(&attr, &fz_net));
	if (fz_gen)
		srd_memnet_set_tap(fz_net, fz_tap, fz_gen);
	fz_host_open(&fz_a);
	fz_host_open(&fz_b);
	/* Both endpoints are on the in-memory network: the link's
	 * --wrap=srd_wire_udp_open seam took their wire opens (without it
	 * they would run over real UDP and the fuzzer test nothing). */
	FZ_CHECK(fz_next_port == 2);
	fz_insert(&fz_a, &fz_b);
	fz_insert(&fz_b, &fz_a);

	/* b: msg receives 64 (warm-up), 4 KiB, 4 KiB, 16 KiB; tagged 64
	 * for tag 1 and 16 KiB for any tag. */
	fz_post_recv(&fz_b, 64, false, 0, 0);
	fz_post_recv(&fz_b, 4096, false, 0, 0);
	fz_post_recv(&fz_b, 4096, false, 0, 0);
	fz_post_recv(&fz_b, 16384, false, 0, 0);
	fz_post_recv(&fz_b, 64, true, 1, 0);
	fz_post_recv(&fz_b, 16384, true, 0, ~0ULL);
	/* a: 64 (warm-up); none yet for b's rendezvous */
	fz_post_recv(&fz_a, 64, false, 0, 0);

	/* Warm-up: a session each way. */
	memset(fz_a.scratch, 'a', sizeof(fz_a.scratch));
	memset(fz_b.scratch, 'b', sizeof(fz_b.scratch));
	FZ_CHECK(!fi_send(fz_a.ep, fz_a.scratch[0], 8, NULL, fz_a.peer,
			  fz_ctx(&fz_a)));
	FZ_CHECK(!fi_send(fz_b.ep, fz_b.scratch[0], 8, NULL, fz_b.peer,
			  fz_ctx(&fz_b)));
	fz_run_until(&fz_a, 2);
	fz_run_until(&fz_b, 2);
	FZ_CHECK(fz_a.errors == 0 && fz_b.errors == 0);

	/* b's own rendezvous to a waits for a receive a has not posted:
	 * fuzzed CTS packets find an operation to act on.  (Nothing a
	 * sends here takes a psn: the seeds' psns stay valid.) */
	fz_b.big = malloc(FZ_RDV);
	FZ_CHECK(fz_b.big);
	memset(fz_b.big, 'B', FZ_RDV);
	FZ_CHECK(!fi_send(fz_b.ep, fz_b.big, FZ_RDV, NULL, fz_b.peer,
			  fz_ctx(&fz_b)));
	fz_run(100 * SRD_NS_PER_US);
}

static void fz_teardown(void)
{
	fz_host_close(&fz_a);
	fz_host_close(&fz_b);
	srd_memnet_close(fz_net);
	fz_net = NULL;
}

/* --- generator mode: capture what b receives --------------------------------- */

struct fz_capture {
	const char *dir;
	unsigned count;
	unsigned by_type[SRD_PKT_TYPE_MAX];
	uint8_t first_ack[sizeof(struct srd_base_hdr)];
	bool have_ack;
	bool in_ops;			/* past the warm-up */
	FILE *all;			/* every datagram of the operations */
};

static void fz_write_seed(struct fz_capture *cap, unsigned type,
			  const void *buf, size_t len)
{
	char path[512];
	uint8_t hdr[3] = { 0, (uint8_t)len, (uint8_t)(len >> 8) };
	FILE *f;

	snprintf(path, sizeof(path), "%s/t%02u-%03u", cap->dir, type,
		 cap->count++);
	f = fopen(path, "wb");
	FZ_CHECK(f);
	FZ_CHECK(fwrite(hdr, 1, 3, f) == 3 && fwrite(buf, 1, len, f) == len);
	FZ_CHECK(!fclose(f));
}

static void fz_tap(void *arg, const union srd_wire_addr *src,
		   const union srd_wire_addr *dst, const void *buf, size_t len)
{
	struct fz_capture *cap = arg;
	const struct srd_base_hdr *base = buf;

	if (!srd_wire_addr_equal(dst, &fz_b.addr) ||
	    !srd_wire_addr_equal(src, &fz_a.addr) || len < sizeof(*base) ||
	    base->type >= SRD_PKT_TYPE_MAX)
		return;
	if (cap->in_ops) {
		uint8_t hdr[3] = { 0, (uint8_t)len, (uint8_t)(len >> 8) };

		FZ_CHECK(fwrite(hdr, 1, 3, cap->all) == 3 &&
			 fwrite(buf, 1, len, cap->all) == len);
	}
	if (base->type == SRD_PKT_ACK && !cap->have_ack) {
		memcpy(cap->first_ack, buf, sizeof(cap->first_ack));
		cap->have_ack = true;
	}
	/* A few of each type are enough; the rest repeat them. */
	if (cap->by_type[base->type]++ < 4)
		fz_write_seed(cap, base->type, buf, len);
}

/* Types the scenario does not produce on a clean network, made from a
 * captured header: path probe, echo and ping. */
static void fz_synthesize(struct fz_capture *cap)
{
	static const uint8_t types[] = { SRD_PKT_PATH_PROBE, SRD_PKT_PATH_ECHO,
					 SRD_PKT_PING };
	uint8_t pkt[sizeof(struct srd_base_hdr) +
		    sizeof(struct srd_path_probe_hdr)];
	struct srd_base_hdr *base = (struct srd_base_hdr *)pkt;
	struct srd_path_probe_hdr *probe = (void *)(base + 1);

	FZ_CHECK(cap->have_ack);
	for (size_t i = 0; i < sizeof(types); i++) {
		size_t len = sizeof(pkt);

		if (cap->by_type[types[i]])
			continue;
		memset(pkt, 0, sizeof(pkt));
		memcpy(base, cap->first_ack, sizeof(*base));
		base->type = types[i];
		base->flags = 0;
		probe->path = 1;
		if (types[i] == SRD_PKT_PING)
			len = sizeof(*base);
		fz_as_peer(pkt, len);	/* a probe or ping: a's own session */
		fz_write_seed(cap, types[i], pkt, len);
		cap->by_type[types[i]]++;
	}
}

static void fz_generate(struct fz_capture *cap)
{
	uint8_t *src = fz_a.scratch[0], *res = fz_a.scratch[1];
	uint8_t *cmp = fz_a.scratch[2];
	char path[512];
	uint64_t key_b, base_b = (uint64_t)FZ_BASE_B + FZ_PAGE;
	uint64_t key_a, base_a = (uint64_t)FZ_BASE_A + FZ_PAGE;
	static uint8_t medium[3000], rdv[FZ_RDV], rma_src[5000];
	static uint8_t rma_dst[5000];
	unsigned want;

	key_b = fi_mr_key(fz_b.mr);
	key_a = fi_mr_key(fz_a.mr);
	memset(medium, 'm', sizeof(medium));
	memset(rdv, 'r', sizeof(rdv));
	memset(rma_src, 'w', sizeof(rma_src));
	memset(cmp, 0xEE, 8);

	snprintf(path, sizeof(path), "%s/all-operations", cap->dir);
	cap->all = fopen(path, "wb");
	FZ_CHECK(cap->all);
	cap->in_ops = true;
	want = fz_a.done;
	FZ_CHECK(!fi_send(fz_a.ep, src, 8, NULL, fz_a.peer, fz_ctx(&fz_a)));
	FZ_CHECK(!fi_send(fz_a.ep, medium, sizeof(medium), NULL, fz_a.peer,
			  fz_ctx(&fz_a)));
	FZ_CHECK(!fi_send(fz_a.ep, rdv, sizeof(rdv), NULL, fz_a.peer,
			  fz_ctx(&fz_a)));
	FZ_CHECK(!fi_tsenddata(fz_a.ep, src, 16, NULL, 0x1234, fz_a.peer, 1,
			       fz_ctx(&fz_a)));
	FZ_CHECK(!fi_tinject(fz_a.ep, src, 16, fz_a.peer, 7));
	FZ_CHECK(!fi_write(fz_a.ep, src, 64, NULL, fz_a.peer, base_b + 128,
			   key_b, fz_ctx(&fz_a)));
	FZ_CHECK(!fi_write(fz_a.ep, rma_src, sizeof(rma_src), NULL, fz_a.peer,
			   base_b + 4096, key_b, fz_ctx(&fz_a)));
	FZ_CHECK(!fi_writedata(fz_a.ep, src, 32, NULL, 99, fz_a.peer,
			       base_b + 512, key_b, fz_ctx(&fz_a)));
	FZ_CHECK(!fi_read(fz_a.ep, res, 64, NULL, fz_a.peer, base_b,
			  key_b, fz_ctx(&fz_a)));
	FZ_CHECK(!fi_read(fz_a.ep, rma_dst, sizeof(rma_dst), NULL, fz_a.peer,
			  base_b + 30000, key_b, fz_ctx(&fz_a)));
	FZ_CHECK(!fi_atomic(fz_a.ep, src, 1, NULL, fz_a.peer, base_b + 1024,
			    key_b, FI_UINT64, FI_SUM, fz_ctx(&fz_a)));
	FZ_CHECK(!fi_fetch_atomic(fz_a.ep, src, 2, NULL, res + 64, NULL,
				  fz_a.peer, base_b + 1032, key_b, FI_UINT32,
				  FI_BOR, fz_ctx(&fz_a)));
	FZ_CHECK(!fi_compare_atomic(fz_a.ep, src, 1, NULL, cmp, NULL,
				    res + 128, NULL, fz_a.peer, base_b + 1040,
				    key_b, FI_UINT64, FI_CSWAP,
				    fz_ctx(&fz_a)));
	/* a wrong key and an address out of range: error responses */
	FZ_CHECK(!fi_write(fz_a.ep, src, 8, NULL, fz_a.peer, base_b,
			   key_b ^ 1, fz_ctx(&fz_a)));
	FZ_CHECK(!fi_read(fz_a.ep, res, 8, NULL, fz_a.peer,
			  base_b + FZ_REGION - 4, key_b, fz_ctx(&fz_a)));
	want += 14;
	fz_run_until(&fz_a, want);
	FZ_CHECK(fz_a.errors == 2);

	/* b as initiator: a answers its rendezvous with CTS (a posts the
	 * receive now), its read with data, its atomic with the result. */
	fz_post_recv(&fz_a, FZ_RDV, false, 0, 0);
	want = fz_b.done + 3;
	FZ_CHECK(!fi_read(fz_b.ep, fz_b.scratch[1], 100, NULL, fz_b.peer,
			  base_a, key_a, fz_ctx(&fz_b)));
	FZ_CHECK(!fi_fetch_atomic(fz_b.ep, fz_b.scratch[0], 1, NULL,
				  fz_b.scratch[2], NULL, fz_b.peer, base_a + 8,
				  key_a, FI_INT64, FI_SUM, fz_ctx(&fz_b)));
	fz_run_until(&fz_b, want);
	fz_run(50 * SRD_NS_PER_MS);
	fz_synthesize(cap);
	srd_memnet_set_tap(fz_net, NULL, NULL);
	FZ_CHECK(!fclose(cap->all));
	fprintf(stderr, "srd_fuzz_rx: %u seeds in %s; by type:", cap->count,
		cap->dir);
	for (unsigned t = 0; t < SRD_PKT_TYPE_MAX; t++)
		if (cap->by_type[t])
			fprintf(stderr, " %u:%u", t, cap->by_type[t]);
	fprintf(stderr, "\n");
}

/* --- libFuzzer entry points -------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fi_info *hints = fi_allocinfo();
	const char *gen = getenv("SRD_FUZZ_GEN");

	(void)argc;
	(void)argv;
	setenv("FI_SRD_IFACE", "lo", 1);
	fi_prov_ini();
	srd_params.progress_thread = 0;
	srd_params.paths = 4;
	srd_params.peer_timeout_ms = 5000;
	srd_params.eager_max = FZ_EAGER_MAX;
	srd_params.rdv_window = FZ_RDV_WINDOW;
	srd_test_wire_open = fz_wire_open;
	fz_a.region = fz_region_map(FZ_BASE_A);
	fz_b.region = fz_region_map(FZ_BASE_B);

	FZ_CHECK(hints);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	FZ_CHECK(!srd_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
			      &fz_info));
	fi_freeinfo(hints);

	fz_verbose = getenv("SRD_FUZZ_VERBOSE") != NULL;
	if (gen) {
		static struct fz_capture cap;

		cap.dir = gen;
		mkdir(gen, 0755);
		fz_gen = &cap;
		fz_setup();
		fz_generate(&cap);
		fz_teardown();
		fi_freeinfo(fz_info);
		exit(0);
	}
	return 0;
}

static const union srd_wire_addr *fz_source(unsigned sel,
					    union srd_wire_addr *tmp)
{
	switch (sel & 3) {
	case 0:
		return &fz_a.addr;
	case 1:
		*tmp = fz_addr("127.0.0.9", 7000);
		return tmp;
	case 2:
		*tmp = fz_a.addr;
		srd_wire_addr_set_port(tmp, srd_wire_addr_port(tmp) + 100);
		return tmp;
	default:
		return &fz_b.addr;
	}
}

/* ctl bit 4: the base header's session fields, as a would write them
 * (b's view of a's sessions). */
static void fz_as_peer(uint8_t *buf, size_t len)
{
	struct srd_tp *tp = &srd_ep_of(fz_b.ep)->msg.tp;
	struct srd_tp_peer *peer = srd_tp_peer_find(tp, &fz_a.addr);
	struct srd_base_hdr *base = (struct srd_base_hdr *)buf;
	bool answer;

	if (len < sizeof(*base) || !peer || base->type == SRD_PKT_HS_REQ ||
	    base->type == SRD_PKT_HS_RESP || base->type == SRD_PKT_HS_COOKIE)
		return;
	answer = base->type == SRD_PKT_ACK || base->type == SRD_PKT_PATH_ECHO;
	base->src_port = srd_wire_addr_port(&fz_a.addr);
	base->src_conn = answer ? peer->tx_remote_conn : peer->rx_conn;
	base->dst_conn = tp->conn_id;
	base->token = answer ? peer->tx_token : peer->rx_token;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t waits[4] = { 0, 20 * SRD_NS_PER_US,
					   SRD_NS_PER_MS, 50 * SRD_NS_PER_MS };
	static uint8_t pkt[65536];
	size_t off = 0;

	fz_setup();
	while (size - off >= 3) {
		uint8_t ctl = data[off];
		size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
		union srd_wire_addr tmp;

		off += 3;
		if (len > size - off)
			len = size - off;
		if (waits[ctl >> 2 & 3])
			fz_run(waits[ctl >> 2 & 3]);
		/* Copied by the network into a buffer of exactly len bytes:
		 * a read past the datagram is an ASan report. */
		if (ctl & 0x10 && len <= sizeof(pkt)) {
			memcpy(pkt, data + off, len);
			fz_as_peer(pkt, len);
			srd_memnet_inject(fz_net, fz_source(ctl, &tmp),
					  &fz_b.addr, pkt, len);
		} else {
			srd_memnet_inject(fz_net, fz_source(ctl, &tmp),
					  &fz_b.addr, data + off, len);
		}
		off += len;
		fz_run(5 * SRD_NS_PER_US);
	}
	fz_run(40 * SRD_NS_PER_MS);
	if (fz_verbose) {
		const struct srd_tp_counters *c = &srd_ep_of(fz_b.ep)->msg.tp.cnt;

		fprintf(stderr, "b: rx %" PRIu64 " dup %" PRIu64 " malformed %"
			PRIu64 " unknown %" PRIu64 " conn %" PRIu64 " token %"
			PRIu64 " window %" PRIu64 "; completions %u (%u errors)\n",
			c->rx_pkts, c->rx_dup, c->rx_drop_malformed,
			c->rx_drop_unknown, c->rx_drop_conn, c->rx_drop_token,
			c->rx_drop_window, fz_b.done, fz_b.errors);
	}
	fz_teardown();
	return 0;
}
