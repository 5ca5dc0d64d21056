/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp_auth.c: the job key's MAC on every datagram (spec 5.15), with
 * libsodium: AES-256-GCM where the CPU has AES-NI and PCLMUL (measured
 * the cheapest of what Debian's libraries offer on such CPUs), else
 * ChaCha20-Poly1305; the packet is associated data, nothing is
 * encrypted.  It owns the derived key and the nonce counter; it must
 * not look at what a packet means.
 *
 * The nonce is (the sender's connection id, a 64-bit counter that
 * starts at random and counts every datagram): two senders under one
 * key repeat a nonce only if both their random ids and their counter
 * ranges meet.  Both ends of a job must take the same algorithm: all
 * nodes with AES-NI, or none.
 */
#include "config.h"
#include "srd_tp_int.h"
#include "srd_rng.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

struct srd_tp_auth {
	bool aes;
	crypto_aead_aes256gcm_state gcm;	/* aligned by its type */
	uint8_t key[32];			/* ChaCha20-Poly1305's */
	uint64_t counter;
	uint8_t scratch[65536 + 64];		/* a datagram, contiguous */
};

int srd_tp_auth_init(struct srd_tp *tp, const void *key, size_t len)
{
	/* BLAKE2b's personalisation is 16 bytes: the string, zero-padded */
	static const unsigned char personal[16] = "srd job key v2";
	struct srd_tp_auth *auth;
	uint8_t derived[32];

	if (!len)
		return -EINVAL;
	if (sodium_init() < 0) {
		SRD_WARN(FI_LOG_DOMAIN, "libsodium failed to initialise\n");
		return -ENOSYS;
	}
	if (posix_memalign((void **)&auth, 64, sizeof(*auth)))
		return -ENOMEM;
	memset(auth, 0, sizeof(*auth));
	/* one 32-byte key from a job key of any length */
	crypto_generichash_blake2b_salt_personal(derived, sizeof(derived), key,
						 len, NULL, 0, NULL, personal);
	auth->aes = crypto_aead_aes256gcm_is_available();
	if (auth->aes)
		crypto_aead_aes256gcm_beforenm(&auth->gcm, derived);
	else
		memcpy(auth->key, derived, sizeof(auth->key));
	sodium_memzero(derived, sizeof(derived));
	auth->counter = srd_random_u64();
	tp->auth = auth;
	tp->trailer_len = sizeof(struct srd_mac_trailer);
	SRD_INFO(FI_LOG_DOMAIN,
		 "job key set: every packet carries a %s MAC (%zu bytes)\n",
		 auth->aes ? "AES-256-GCM" : "ChaCha20-Poly1305",
		 sizeof(struct srd_mac_trailer));
	return 0;
}

const char *srd_tp_auth_alg(const struct srd_tp *tp)
{
	return tp->auth->aes ? "AES-256-GCM" : "ChaCha20-Poly1305";
}

void srd_tp_auth_fini(struct srd_tp *tp)
{
	if (!tp->auth)
		return;
	sodium_memzero(tp->auth, sizeof(*tp->auth));
	free(tp->auth);
	tp->auth = NULL;
}

static void auth_nonce(uint8_t nonce[12], const uint8_t *pkt,
		       uint64_t counter)
{
	const struct srd_base_hdr *base = (const void *)pkt;

	memcpy(nonce, &base->src_conn, 4);
	memcpy(nonce + 4, &counter, 8);
}

static void auth_tag(struct srd_tp_auth *auth, const uint8_t *ad,
		     size_t len, const uint8_t nonce[12], uint8_t tag[16])
{
	unsigned long long tag_len;
	uint8_t none[1] = { 0 };	/* no message: the library wants a pointer */

	if (auth->aes)
		crypto_aead_aes256gcm_encrypt_detached_afternm(
			none, tag, &tag_len, none, 0, ad, len, NULL, nonce,
			&auth->gcm);
	else
		crypto_aead_chacha20poly1305_ietf_encrypt_detached(
			none, tag, &tag_len, none, 0, ad, len, NULL, nonce,
			auth->key);
}

void srd_tp_auth_seal(struct srd_tp *tp, const struct iovec *iov, int iovcnt,
		      struct srd_mac_trailer *mac)
{
	struct srd_tp_auth *auth = tp->auth;
	const uint8_t *ad = iov[0].iov_base;
	size_t len = iov[0].iov_len;
	uint8_t nonce[12];

	/* the library wants the associated data in one piece */
	if (iovcnt > 1) {
		len = 0;
		for (int i = 0; i < iovcnt; i++) {
			memcpy(auth->scratch + len, iov[i].iov_base,
			       iov[i].iov_len);
			len += iov[i].iov_len;
		}
		ad = auth->scratch;
	}
	mac->counter = auth->counter++;
	auth_nonce(nonce, ad, mac->counter);
	auth_tag(auth, ad, len, nonce, mac->tag);
}

bool srd_tp_auth_open(struct srd_tp *tp, const uint8_t *buf, size_t len)
{
	struct srd_tp_auth *auth = tp->auth;
	struct srd_mac_trailer mac;
	size_t ad_len = len - sizeof(mac);
	uint8_t nonce[12], none[1] = { 0 };

	memcpy(&mac, buf + ad_len, sizeof(mac));
	auth_nonce(nonce, buf, mac.counter);
	if (auth->aes)
		return !crypto_aead_aes256gcm_decrypt_detached_afternm(
			none, NULL, none, 0, mac.tag, buf, ad_len, nonce,
			&auth->gcm);
	return !crypto_aead_chacha20poly1305_ietf_decrypt_detached(
		none, NULL, none, 0, mac.tag, buf, ad_len, nonce, auth->key);
}
