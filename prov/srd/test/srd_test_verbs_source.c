/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_verbs_source.c: who the verbs wire says sent a datagram, on
 * the emulated device (srd_verbs_emu.c), against a sender that is not
 * srd's wire: a QP of the test's own posting what srd never would (no
 * GRH, or immediate data naming another endpoint's QP).  The wire must
 * report only what the device vouches for (the GRH's GID, the source LID,
 * the source QP) and drop what comes without a GRH, whatever its receive
 * buffer held before; and an InfiniBand address's LID is part of its
 * identity.  Whether to believe the srd header is the transport's
 * business, not tested here.
 */
#include "config.h"
#include "srd_verbs.h"
#include "srd_verbs_emu.h"

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_VERBS

/* three InfiniBand hosts (LID = host, GID fe80::<host>) */
static const struct srd_emu_dev_attr devs[] = {
	{ .name = "emu_ib0", .mtu = 2048, .host = 2 },
	{ .name = "emu_ib1", .mtu = 2048, .host = 4 },
	{ .name = "emu_ib2", .mtu = 2048, .host = 5 },
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct srd_wire *wire_open(const char *dev, uint32_t rx_depth)
{
	struct srd_wire_verbs_attr attr = {
		.npaths = 4, .nqps = 4, .rx_depth = rx_depth, .tx_depth = 64,
	};
	struct srd_verbs_port *ports;
	struct srd_wire *w;
	int count;

	cr_assert_eq(srd_verbs_port_list(dev, -1, &ports, &count), 0);
	cr_assert_eq(count, 1, "%s: %d ports", dev, count);
	attr.port = &ports[0];
	cr_assert_eq(srd_wire_verbs_open(&attr, &w), 0);
	free(ports);
	return w;
}

static void wire_post(struct srd_wire *from, const struct srd_wire *to,
		      uint16_t path, uint8_t mark)
{
	uint8_t buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct srd_wire_tx tx = { .dst = &to->addr, .path = path,
				  .iovcnt = 1, .iov = &iov };

	memset(buf, mark, sizeof(buf));
	cr_assert_eq(from->ops->post(from, &tx, 1), 1);
}

/* Polls w until it hands up one datagram (1), or drops one for want of a
 * GRH (0), or 2 s pass (-1). */
static int poll_one(struct srd_wire *w, struct srd_wire_rx *rx)
{
	uint64_t drops = w->rx_drop_nogrh, end = mono_ns() + 2000000000ull;

	while (mono_ns() < end) {
		int n = w->ops->poll(w, rx, 1);

		cr_assert_geq(n, 0);
		if (n)
			return 1;
		if (w->rx_drop_nogrh != drops)
			return 0;
	}
	return -1;
}

/* --- a QP of the test's own ------------------------------------------- */

struct raw_qp {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
};

static void raw_to_rts(struct ibv_qp *qp)
{
	const struct srd_verbs_ops *v = &srd_emu_ops;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = SRD_VERBS_QKEY };

	cr_assert_eq(v->modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(v->modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	cr_assert_eq(v->modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

/* A UD QP on dev with an address handle to `to`: global (a GRH goes
 * with each datagram) or routed by LID alone (none does). */
static void raw_open(struct raw_qp *r, const char *dev,
		     const struct srd_wire *to, bool grh)
{
	const struct srd_verbs_ops *v = &srd_emu_ops;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	struct ibv_ah_attr ah = { .is_global = grh, .port_num = 1,
				  .dlid = to->addr.ud.lid };
	struct ibv_device **list;
	int num = 0;

	memset(r, 0, sizeof(*r));
	list = v->get_device_list(&num);
	for (int i = 0; i < num && !r->ctx; i++)
		if (!strcmp(v->get_device_name(list[i]), dev))
			r->ctx = v->open_device(list[i]);
	v->free_device_list(list);
	cr_assert_not_null(r->ctx, "no device %s", dev);
	r->pd = v->alloc_pd(r->ctx);
	r->cq = v->create_cq(r->ctx, 16, NULL, NULL, 0);
	cr_assert(r->pd && r->cq);
	ia.send_cq = ia.recv_cq = r->cq;
	r->qp = v->create_qp(r->pd, &ia);
	cr_assert_not_null(r->qp);
	raw_to_rts(r->qp);
	memcpy(ah.grh.dgid.raw, to->addr.ud.gid, 16);
	r->ah = v->create_ah(r->pd, &ah);
	cr_assert_not_null(r->ah);
}

/* One inline send to `to`'s receive QP, its immediate data claiming to
 * come from endpoint QP imm_qpn. */
static void raw_send(struct raw_qp *r, const struct srd_wire *to,
		     uint32_t imm_qpn, uint8_t mark)
{
	uint8_t buf[64];
	struct ibv_sge sge = { (uintptr_t)buf, sizeof(buf), 0 };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_INLINE,
		.imm_data = htonl(imm_qpn),
	}, *bad = NULL;

	memset(buf, mark, sizeof(buf));
	wr.wr.ud.ah = r->ah;
	wr.wr.ud.remote_qpn = to->addr.ud.qpn;
	wr.wr.ud.remote_qkey = SRD_VERBS_QKEY;
	cr_assert_eq(srd_emu_ops.post_send(r->qp, &wr, &bad), 0);
}

static void raw_close(struct raw_qp *r)
{
	const struct srd_verbs_ops *v = &srd_emu_ops;

	v->destroy_ah(r->ah);
	v->destroy_qp(r->qp);
	v->destroy_cq(r->cq);
	v->dealloc_pd(r->pd);
	v->close_device(r->ctx);
}

static void all_closed(struct srd_wire *a, struct srd_wire *b)
{
	a->ops->close(a);
	b->ops->close(b);
	cr_expect_eq(srd_emu_live_objects(), 0, "%d emulated objects open",
		     srd_emu_live_objects());
	srd_emu_fini();
}

/* --- the tests ---------------------------------------------------------- */

Test(verbs_source, datagram_without_grh_is_not_given_the_last_senders_gid,
     .timeout = 30)
{
	struct srd_wire *r, *a;
	struct srd_wire_rx rx;
	struct srd_emu_stats st;
	struct raw_qp c;
	char s[96];
	int got;

	memset(&rx, 0, sizeof(rx));
	srd_emu_init(3, devs);
	r = wire_open("emu_ib0", 8);
	a = wire_open("emu_ib1", 8);
	/* A fills every one of R's 8 receive buffers, GRH space included */
	for (int i = 0; i < 8; i++) {
		wire_post(a, r, 0, 0xa0);
		cr_assert_eq(poll_one(r, &rx), 1, "datagram %d from A", i);
		cr_assert(srd_wire_addr_equal(&rx.src, &a->addr), "%s",
			  srd_wire_addr_str(&rx.src, s, sizeof(s)));
	}
	/* C, on a third host, sends without a GRH (InfiniBand local
	 * routing), its immediate naming A's QP: the device leaves the
	 * buffer's 40 bytes as A's datagram wrote them */
	raw_open(&c, "emu_ib2", r, false);
	raw_send(&c, r, a->addr.ud.qpn, 0xc0);
	got = poll_one(r, &rx);
	if (got == 1)
		cr_assert(memcmp(rx.src.ud.gid, a->addr.ud.gid, 16),
			  "C's datagram given A's GID: from %s",
			  srd_wire_addr_str(&rx.src, s, sizeof(s)));
	cr_assert_eq(got, 0, "C's datagram handed up (from %s), not dropped",
		     srd_wire_addr_str(&rx.src, s, sizeof(s)));
	srd_emu_get_stats(&st);
	cr_assert_eq(st.delivered, 9, "the device delivered it");
	cr_assert_eq(r->rx_drop_nogrh, 1);
	raw_close(&c);
	/* with a GRH, C is C: its GID, its LID, its QP */
	raw_open(&c, "emu_ib2", r, true);
	raw_send(&c, r, a->addr.ud.qpn, 0xc1);
	cr_assert_eq(poll_one(r, &rx), 1);
	cr_assert_eq(((uint8_t *)rx.buf)[0], 0xc1);
	cr_assert_eq(rx.src.ud.gid[15], 5, "%s",
		     srd_wire_addr_str(&rx.src, s, sizeof(s)));
	cr_assert_eq(rx.src.ud.lid, 5);
	cr_assert_eq(rx.src.ud.qpn, c.qp->qp_num);
	cr_assert_eq(r->rx_drop_nogrh, 1);
	raw_close(&c);
	/* and A's next datagram is still A's */
	wire_post(a, r, 0, 0xa1);
	cr_assert_eq(poll_one(r, &rx), 1);
	cr_assert(srd_wire_addr_equal(&rx.src, &a->addr));
	all_closed(r, a);
}

Test(verbs_source, source_qp_is_the_devices_not_the_immediates,
     .timeout = 30)
{
	struct srd_wire *r, *a;
	struct srd_wire_rx rx;
	union srd_wire_addr src;
	struct raw_qp c;
	char s[96];

	srd_emu_init(3, devs);
	r = wire_open("emu_ib0", 16);
	a = wire_open("emu_ib1", 16);
	/* C is a QP on A's own host, its immediate claiming A's QP */
	raw_open(&c, "emu_ib1", r, true);
	cr_assert_neq(c.qp->qp_num, a->addr.ud.qpn);
	raw_send(&c, r, a->addr.ud.qpn, 0xc0);
	cr_assert_eq(poll_one(r, &rx), 1);
	cr_assert_eq(((uint8_t *)rx.buf)[0], 0xc0);
	cr_assert(srd_wire_addr_same_host(&rx.src, &a->addr),
		  "the same GID and LID as A: %s",
		  srd_wire_addr_str(&rx.src, s, sizeof(s)));
	cr_assert_eq(rx.src.ud.qpn, c.qp->qp_num, "source QP %u, C is %u",
		     rx.src.ud.qpn, c.qp->qp_num);
	cr_assert(!srd_wire_addr_equal(&rx.src, &a->addr),
		  "C's datagram reported as A's");
	raw_close(&c);
	/* A's own datagram on path 1 leaves on its second send QP and shows
	 * that QP, whose bits above the 16 an srd header carries are its
	 * receive QP's: with the header's port, the transport finds A */
	wire_post(a, r, 1, 0xa0);
	cr_assert_eq(poll_one(r, &rx), 1);
	cr_assert_eq(rx.src.ud.qpn, srd_emu_qpn_sibling(a->addr.ud.qpn, 1));
	cr_assert_eq(rx.src.ud.qpn & 0xff0000, a->addr.ud.qpn & 0xff0000);
	src = rx.src;
	srd_wire_addr_set_port(&src, srd_wire_addr_port(&a->addr));
	cr_assert(srd_wire_addr_equal(&src, &a->addr));
	all_closed(r, a);
}

#endif /* HAVE_VERBS */

Test(verbs_source, infiniband_identity_includes_the_lid)
{
	union srd_wire_addr a, b;
	char s[96];

	memset(&a, 0, sizeof(a));
	a.ud.family = AF_IB;
	a.ud.gid[0] = 0xfe;
	a.ud.gid[1] = 0x80;
	a.ud.gid[15] = 9;
	a.ud.qpn = 0x1234;
	a.ud.lid = 7;
	b = a;
	cr_assert(srd_wire_addr_equal(&a, &b));
	cr_assert_eq(srd_wire_addr_hash(&a), srd_wire_addr_hash(&b));
	b.ud.lid = 8;
	cr_assert(!srd_wire_addr_equal(&a, &b), "another port's LID");
	cr_assert(!srd_wire_addr_same_host(&a, &b));
	cr_assert_neq(srd_wire_addr_hash(&a), srd_wire_addr_hash(&b));
	srd_wire_addr_str(&a, s, sizeof(s));
	cr_assert_str_eq(s, "[fe80::9]/lid7/qp4660");
	/* RoCE names carry LID 0 on both sides */
	a.ud.lid = b.ud.lid = 0;
	cr_assert(srd_wire_addr_equal(&a, &b));
	srd_wire_addr_str(&a, s, sizeof(s));
	cr_assert_str_eq(s, "[fe80::9]/qp4660");
}
