/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_names.h: comma-separated allow lists of names ("eth0,ens5",
 * "mlx5_0"): FI_SRD_IFACE and FI_SRD_VERBS_DEVICE share the matcher.
 */
#ifndef SRD_NAMES_H
#define SRD_NAMES_H

#include <stdbool.h>

/* Is name in the comma-separated list (NULL or "": every name is)? */
bool srd_name_listed(const char *list, const char *name);

#endif /* SRD_NAMES_H */
