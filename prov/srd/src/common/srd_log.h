/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_log.h: the one set of log macros every layer of the provider uses
 * (wire, transport, messages, objects), over libfabric's fi_log: the
 * level and the subsystem filter come from FI_LOG_LEVEL, FI_LOG_PROV=srd
 * and FI_LOG_SUBSYS as for any provider.  A message that names a peer
 * names it by its wire address (srd_wire_addr_str).
 * Nothing else belongs here: this folder is seen by every layer.
 */
#ifndef SRD_LOG_H
#define SRD_LOG_H

#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

/* fi/srd_init.c */
extern struct fi_provider srd_prov;

#define SRD_WARN(subsys, ...) FI_WARN(&srd_prov, subsys, __VA_ARGS__)
#define SRD_INFO(subsys, ...) FI_INFO(&srd_prov, subsys, __VA_ARGS__)
/* Unlike libfabric's FI_DBG, compiled into every build (FI_LOG_LEVEL=debug
 * shows it): keep it off the data path, where each call costs a level
 * test. */
#define SRD_DBG(subsys, ...) FI_LOG(&srd_prov, FI_LOG_DEBUG, subsys, __VA_ARGS__)

#endif /* SRD_LOG_H */
