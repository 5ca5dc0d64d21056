/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_verbs_emu.h: an RDMA device emulated in the test process, behind
 * struct srd_verbs_ops, for the verbs wire's tests on machines without
 * one.  UD semantics the wire relies on: QP states (a QP sends only in
 * RTS and receives from RTR), Q_Key checks, a 40-byte GRH (or, on a
 * RoCE v2 IPv4 port, an IPv4 header in its last 20 bytes) in front of
 * every receive, written only when the sender's address handle is global
 * (IBV_WC_GRH; InfiniBand may send without, and then the 40 bytes keep
 * the buffer's last contents), the source QP and LID of each datagram as
 * the device stamps them, the port MTU, datagrams dropped when no
 * receive is posted, inline limits, lkey checks, CQ overrun, completion
 * channels and async events, and the faults a real device shows (a QP
 * in error, a device that goes away).  Not a model of timing or of a
 * NIC's speed.
 */
#ifndef SRD_VERBS_EMU_H
#define SRD_VERBS_EMU_H

#include "srd_verbs.h"

/* In libsrdemu-fi.so the fault switches are exported, so a test that
 * loads the provider through libfabric can reach them with dlsym. */
#ifdef SRD_EMU_EXPORT
#define SRD_EMU_API __attribute__((visibility("default")))
#else
#define SRD_EMU_API
#endif

struct srd_emu_dev_attr {
	const char *name;
	bool roce_v2_ipv4;	/* else an IB port (GID fe80::<host>) */
	uint32_t mtu;		/* 256..4096 */
	uint8_t host;		/* the address's last byte */
	bool down;		/* port not active */
};

struct srd_emu_stats {
	uint64_t sent, delivered, signaled;
	uint64_t drop_no_recv, drop_state, drop_qkey, drop_mtu, drop_no_qp;
	uint64_t flushed, qp_errors, cq_overruns;
};

/* Installs the emulation (srd_verbs_ops_set) with these devices. */
void srd_emu_init(int ndev, const struct srd_emu_dev_attr *devs);
/* Back to libibverbs; every object must be gone. */
void srd_emu_fini(void);
/* The QP moves to error: its queued receives flush, an async
 * QP_FATAL is raised. */
SRD_EMU_API void srd_emu_qp_error(uint32_t qpn);
/* The QP created k after qpn on the same device context (0: none). */
SRD_EMU_API uint32_t srd_emu_qpn_sibling(uint32_t qpn, int k);
/* The device goes away: DEVICE_FATAL, every QP in error, later calls
 * fail. */
SRD_EMU_API void srd_emu_device_remove(const char *name);
SRD_EMU_API void srd_emu_get_stats(struct srd_emu_stats *stats);
/* Objects alive (contexts, PDs, MRs, CQs, QPs, AHs, channels): 0 after
 * every wire closed. */
int srd_emu_live_objects(void);

extern const struct srd_verbs_ops srd_emu_ops;

#endif /* SRD_VERBS_EMU_H */
