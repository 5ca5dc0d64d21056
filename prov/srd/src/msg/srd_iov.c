/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_iov.c: copies between flat buffers and iovec / fi_ioc lists at an
 * offset, and their lengths.  Pure helpers: no endpoint, no packets.
 */
#include "config.h"
#include "srd_msg.h"

uint64_t srd_iov_len(const struct iovec *iov, size_t count)
{
	uint64_t len = 0;

	for (size_t i = 0; i < count; i++)
		len += iov[i].iov_len;
	return len;
}

/* Copies len bytes between buf and the iovs from offset; to_iov picks the
 * direction.  Returns the bytes copied (fewer when the iovs end). */
static size_t iov_copy(const struct iovec *iov, size_t count, uint64_t offset,
		       uint8_t *buf, size_t len, bool to_iov)
{
	size_t done = 0;

	for (size_t i = 0; i < count && done < len; i++) {
		uint8_t *base = iov[i].iov_base;
		size_t n;

		if (offset >= iov[i].iov_len) {
			offset -= iov[i].iov_len;
			continue;
		}
		n = SRD_MIN(iov[i].iov_len - offset, len - done);
		if (to_iov)
			memcpy(base + offset, buf + done, n);
		else
			memcpy(buf + done, base + offset, n);
		done += n;
		offset = 0;
	}
	return done;
}

size_t srd_iov_copy_to(const struct iovec *iov, size_t count,
		       uint64_t offset, const void *src, size_t len)
{
	return iov_copy(iov, count, offset, (uint8_t *)src, len, true);
}

size_t srd_iov_copy_from(void *dst, const struct iovec *iov, size_t count,
			 uint64_t offset, size_t len)
{
	return iov_copy(iov, count, offset, dst, len, false);
}

size_t srd_ioc_count(const struct fi_ioc *ioc, size_t n)
{
	size_t count = 0;

	if (!ioc || n > SRD_IOV_LIMIT)
		return 0;	/* refused by the caller's checks */
	for (size_t i = 0; i < n; i++)
		count += ioc[i].count;
	return count;
}
