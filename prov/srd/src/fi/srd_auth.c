/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_auth.c: where an endpoint's job key comes from (fi_srd(7),
 * SECURITY): the auth_key of the endpoint's attributes, else of the
 * domain's, else the bytes of FI_SRD_AUTH_KEY_FILE; none of them: no
 * key.  It owns reading and checking the key; the MAC itself is the
 * transport's (tp/srd_tp_auth.c).
 */
#include "config.h"
#include "srd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <sodium.h>

static int auth_key_copy(const void *src, size_t len, uint8_t **key,
			 size_t *key_len)
{
	if (!src || len > SRD_AUTH_KEY_MAX) {
		SRD_WARN(FI_LOG_EP_CTRL,
			 "auth_key: %s (a key is 1 to %d bytes)\n",
			 src ? "too long" : "NULL with a non-zero size",
			 SRD_AUTH_KEY_MAX);
		return -FI_EINVAL;
	}
	*key = malloc(len);
	if (!*key)
		return -FI_ENOMEM;
	memcpy(*key, src, len);
	*key_len = len;
	return 0;
}

static int auth_key_file(const char *path, uint8_t **key, size_t *key_len)
{
	uint8_t buf[SRD_AUTH_KEY_MAX + 1];
	struct stat st;
	ssize_t n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		SRD_WARN(FI_LOG_EP_CTRL,
			 "FI_SRD_AUTH_KEY_FILE %s: cannot read it: %s\n",
			 path, strerror(-ret));
		if (fd >= 0)
			close(fd);
		return -FI_EINVAL;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		SRD_WARN(FI_LOG_EP_CTRL,
			 "FI_SRD_AUTH_KEY_FILE %s: readable by others than its owner (mode %o): they can join the job\n",
			 path, (unsigned)(st.st_mode & 0777));
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || n > SRD_AUTH_KEY_MAX) {
		SRD_WARN(FI_LOG_EP_CTRL,
			 "FI_SRD_AUTH_KEY_FILE %s: %s (a key is 1 to %d bytes)\n",
			 path, n <= 0 ? "empty" : "too long", SRD_AUTH_KEY_MAX);
		return -FI_EINVAL;
	}
	ret = auth_key_copy(buf, (size_t)n, key, key_len);
	sodium_memzero(buf, sizeof(buf));
	return ret;
}

int srd_auth_key_load(const struct fi_info *info, const struct fi_info *dom_info,
		      uint8_t **key, size_t *key_len)
{
	*key = NULL;
	*key_len = 0;
	/* the endpoint's own, else the domain's (fixed at fi_domain), else
	 * the one in the info handed to fi_endpoint */
	if (info && info->ep_attr && info->ep_attr->auth_key_size)
		return auth_key_copy(info->ep_attr->auth_key,
				     info->ep_attr->auth_key_size, key, key_len);
	if (dom_info && dom_info->domain_attr &&
	    dom_info->domain_attr->auth_key_size)
		return auth_key_copy(dom_info->domain_attr->auth_key,
				     dom_info->domain_attr->auth_key_size, key,
				     key_len);
	if (info && info->domain_attr && info->domain_attr->auth_key_size)
		return auth_key_copy(info->domain_attr->auth_key,
				     info->domain_attr->auth_key_size, key,
				     key_len);
	if (srd_params.auth_key_file && *srd_params.auth_key_file)
		return auth_key_file(srd_params.auth_key_file, key, key_len);
	return 0;
}

/* A key in hints: accepted when it fits and is there; copied out. */
int srd_auth_key_hint(const void *want, size_t want_len, void **out,
		      size_t *out_len)
{
	if (!want_len)
		return 0;
	if (!want || want_len > SRD_AUTH_KEY_MAX)
		return srd_info_refuse("auth_key_size %zu: a key is 1 to %d bytes%s",
				       want_len, SRD_AUTH_KEY_MAX,
				       want ? "" : " (auth_key NULL)");
	*out = malloc(want_len);
	if (!*out)
		return -FI_ENOMEM;
	memcpy(*out, want, want_len);
	*out_len = want_len;
	return 0;
}
