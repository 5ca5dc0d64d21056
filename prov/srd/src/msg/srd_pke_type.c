/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_pke_type.c: the one table of message packet types (ID -> name,
 * receive handler and send-completion handler), and the two packet entry
 * points the transport calls back: a packet arrived, a packet was acked
 * or failed.  Adding a type means adding a row here (and its handlers in
 * its family's file), nothing else.  Peer events are srd_peer.c's.
 */
#include "config.h"
#include "srd_msg.h"

#include <errno.h>

const struct srd_pke_type srd_pke_types[SRD_PKT_TYPE_MAX] = {
	[SRD_PKT_HS_REQ] = { .name = "HS_REQ" },
	[SRD_PKT_HS_RESP] = { .name = "HS_RESP" },
	[SRD_PKT_ACK] = { .name = "ACK" },
	[SRD_PKT_EAGER] = { "EAGER", srd_pke_rtm_recv, srd_txe_pkt_done },
	[SRD_PKT_MEDIUM] = { "MEDIUM", srd_pke_rtm_recv, srd_txe_pkt_done },
	[SRD_PKT_RTS] = { "RTS", srd_pke_rtm_recv, srd_txe_pkt_done },
	[SRD_PKT_CTS] = { "CTS", srd_pke_cts_recv, srd_pke_cts_done },
	[SRD_PKT_DATA] = { "DATA", srd_pke_data_recv, srd_txe_pkt_done },
	[SRD_PKT_WRITE] = { "WRITE", srd_pke_write_recv, srd_txe_pkt_done },
	[SRD_PKT_READ_REQ] = { "READ_REQ", srd_pke_read_req_recv,
			       srd_txe_pkt_done },
	[SRD_PKT_ATOMIC] = { "ATOMIC", srd_pke_atomic_recv, srd_txe_pkt_done },
	[SRD_PKT_RMA_RESP] = { "RMA_RESP", srd_pke_resp_recv,
			       srd_pke_resp_done },
	[SRD_PKT_PING] = { "PING", srd_pke_ping_recv, srd_pke_ping_done },
};

int srd_pke_recv(void *ctx, struct srd_tp_peer *tp_peer, const uint8_t *pkt,
		 size_t len)
{
	const struct srd_base_hdr *base = (const void *)pkt;
	const struct srd_pke_type *type = &srd_pke_types[base->type];
	struct srd_msg_ep *ep = ctx;

	if (!type->handle_recv) {
		ep->rx_drop_malformed++;
		return -EINVAL;
	}
	return type->handle_recv(ep, srd_peer_of(tp_peer), pkt, len);
}

/* Only this layer's packets are sent through the transport, so every
 * type that reaches here has a row with a completion handler. */
void srd_pke_done(void *ctx, struct srd_tp_pkt *pkt, int err)
{
	const struct srd_base_hdr *base = (const void *)pkt->hdr;

	srd_pke_types[base->type].handle_done(ctx, srd_pke_of(pkt), err);
}
