/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_ops_none.c: entry points for what this build of the provider does
 * not offer (binding where nothing binds, extra ops), each answering
 * -FI_ENOSYS so that a caller gets an error, never a crash on a NULL
 * table.  Nothing else belongs here.
 */
#include "config.h"
#include "srd.h"

int srd_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int srd_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int srd_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	return -FI_ENOSYS;
}
