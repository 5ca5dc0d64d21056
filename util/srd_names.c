/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_names.c: the allow-list matcher of srd_names.h.
 */
#include "config.h"
#include "srd_names.h"

#include <string.h>

bool srd_name_listed(const char *list, const char *name)
{
	size_t len = strlen(name);

	if (!list || !*list)
		return true;
	while (*list) {
		const char *end = strchr(list, ',');
		size_t n = end ? (size_t)(end - list) : strlen(list);

		if (n == len && !strncmp(list, name, n))
			return true;
		if (!end)
			break;
		list = end + 1;
	}
	return false;
}
