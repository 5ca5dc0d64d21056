/*
 * srd_pke_type.c: the one table of message packet types (ID -> name and
 * receive handler), and the three entry points the transport calls back:
 * a packet arrived, a packet was acked or failed, a peer's session
 * changed.  Adding a type means adding a row here, nothing else.
 */
#include "config.h"
#include "srd_msgl.h"

#include <errno.h>

const struct srd_pke_type srd_pke_types[SRD_PKT_TYPE_MAX] = {
	[SRD_PKT_HS_REQ] = { .name = "HS_REQ" },
	[SRD_PKT_HS_RESP] = { .name = "HS_RESP" },
	[SRD_PKT_ACK] = { .name = "ACK" },
	[SRD_PKT_EAGER] = { "EAGER", srd_pke_rtm_recv },
	[SRD_PKT_MEDIUM] = { "MEDIUM", srd_pke_rtm_recv },
	[SRD_PKT_RTS] = { "RTS", srd_pke_rtm_recv },
	[SRD_PKT_CTS] = { "CTS", srd_pke_cts_recv },
	[SRD_PKT_DATA] = { "DATA", srd_pke_data_recv },
	[SRD_PKT_WRITE] = { "WRITE", srd_pke_write_recv },
	[SRD_PKT_READ_REQ] = { "READ_REQ", srd_pke_read_req_recv },
	[SRD_PKT_ATOMIC] = { "ATOMIC", srd_pke_atomic_recv },
	[SRD_PKT_RMA_RESP] = { "RMA_RESP", srd_pke_resp_recv },
	[SRD_PKT_PING] = { "PING", srd_pke_ping_recv },
};

int srd_pke_recv(void *ctx, struct srd_tp_peer *tp_peer, const uint8_t *pkt,
		 size_t len)
{
	const struct srd_base_hdr *base = (const void *)pkt;
	const struct srd_pke_type *type = &srd_pke_types[base->type];
	struct srd_ep *ep = ctx;

	if (!type->handle_recv) {
		ep->rx_drop_malformed++;
		return -EINVAL;
	}
	return type->handle_recv(ep, srd_peer_of(tp_peer), pkt, len);
}

void srd_pke_done(void *ctx, struct srd_tp_pkt *pkt, int err)
{
	struct srd_pke *pke = srd_pke_of(pkt);
	struct srd_ep *ep = ctx;
	const struct srd_base_hdr *base = (const void *)pkt->hdr;

	if (base->type == SRD_PKT_CTS)
		srd_pke_cts_done(ep, pke, err);
	else if (!pke->txe)
		srd_pool_put(&ep->pke_pool, pke);	/* PING */
	else
		srd_txe_pkt_done(ep, pke, err);
}

void srd_pke_peer_event(void *ctx, struct srd_tp_peer *tp_peer,
			enum srd_tp_peer_event event, int err)
{
	struct srd_peer *peer = srd_peer_of(tp_peer);
	struct srd_ep *ep = ctx;

	if (event == SRD_TP_PEER_RX_RESTART) {
		srd_peer_rx_reset(ep, peer);
		return;
	}
	SRD_WARN(FI_LOG_EP_DATA, "peer unreachable or restarted: %s\n",
		 fi_strerror(-err));
	srd_txe_peer_failed(ep, peer, err);
	/* Receives that granted it credit wait on it: they fail too.  What
	 * arrives unasked stays, in case the peer is alive after all. */
	srd_inprog_fail_peer(ep, peer, err, true);
}
