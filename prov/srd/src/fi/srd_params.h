/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_params.h: the provider's FI_SRD_* parameters, as values the objects
 * read (struct srd_params) and as the one table (srd_params.c) that
 * declares them to libfabric (fi_info -e), reads them with their range
 * checks, and that the documentation check compares README.md and
 * fi_srd(7) against (fabtests/scripts/params_check.sh).
 */
#ifndef SRD_PARAMS_H
#define SRD_PARAMS_H

#include <stddef.h>

/* Provider parameters (FI_SRD_*), read once at load (srd_params_load). */
struct srd_params {
	char *iface;			/* comma-separated allow list */
	int paths;
	size_t inject_size;
	size_t eager_max;		/* largest message sent without rendezvous */
	size_t rdv_window;		/* bytes one CTS grants */
	size_t unexp_max_bytes;		/* unexpected store per endpoint */
	int unexp_max_msgs;		/* unexpected messages per endpoint */
	int unexp_peer_share;		/* percent of both one peer may hold */
	int reorder_max;		/* messages a peer's held packets span */
	int rma_resp_max;		/* answers to peers' RMA per endpoint */
	int tx_window;			/* packets in flight per peer */
	int rto_min_us;
	int peer_timeout_ms;
	int ack_delay_us;
	int cc_target_us;		/* delay target over base RTT; 0: no CC */
	int cwnd_init;			/* packets */
	int rx_grant;			/* packets shared among senders */
	int path_step_us;		/* path steering by RTT; 0: off */
	int path_burst;			/* packets a path takes in a row */
	int path_recycle;		/* bool: reuse the paths that deliver fast */
	int gso;			/* bool: UDP segmentation offload */
	int gro;			/* bool: UDP receive coalescing */
	int ctrl_tos;			/* TOS of control datagrams; 0: none */
	int stats;			/* bool: print counters at close */
	char *stats_dir;		/* snapshot files for srd_stat */
	int stats_interval_ms;
	int progress_thread;		/* bool */
	int progress_idle_us;		/* app silence before the thread acts */
	int poll_yield_us;		/* idle reads before they yield */
	size_t sockbuf;			/* socket buffer bytes requested */
	int port_low, port_high;	/* UDP ports every socket binds in;
					 * 0, 0 (or refused): no range */
	int max_peers;			/* transport peers per endpoint */
	char *wire;			/* "auto", "udp" or "verbs" */
	char *verbs_device;		/* comma-separated allow list */
	int verbs_gid_index;		/* -1: srd picks */
	int verbs_qps;			/* send QPs per endpoint */
	int verbs_rx_depth;		/* posted receive buffers */
	int verbs_tx_depth;		/* send slots per QP */
	int peer_idle_ms;		/* at max_peers, idle peers reclaimed */
	char *auth_key_file;		/* the job key, when no auth_key */
	char *gpu_pci;			/* order domains by distance to it */
};
extern struct srd_params srd_params;

/* Defines every parameter with fi_param_define, then reads each; a value
 * out of range, or not one of a string's choices, is logged (the name,
 * the value, what is used instead) and the default kept. */
void srd_params_load(void);

#endif /* SRD_PARAMS_H */
