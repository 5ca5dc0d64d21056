/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_seqwin.c: the receive window of sequence numbers (srd_seqwin.h).
 * Owns its bit ring; knows nothing of packets.
 */
#include "config.h"
#include "srd_seqwin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static inline uint32_t win_slot(const struct srd_seqwin *win, uint32_t seq)
{
	return seq & (win->size - 1);
}

static inline bool win_bit(const struct srd_seqwin *win, uint32_t seq)
{
	uint32_t s = win_slot(win, seq);

	return (win->bits[s / 64] >> (s % 64)) & 1;
}

static inline void win_set(struct srd_seqwin *win, uint32_t seq, bool on)
{
	uint32_t s = win_slot(win, seq);
	uint64_t mask = 1ULL << (s % 64);

	if (on)
		win->bits[s / 64] |= mask;
	else
		win->bits[s / 64] &= ~mask;
}

int srd_seqwin_init(struct srd_seqwin *win, uint32_t size, uint32_t base)
{
	if (size < 64 || (size & (size - 1)))
		return -EINVAL;
	win->bits = calloc(size / 64, sizeof(uint64_t));
	if (!win->bits)
		return -ENOMEM;
	win->size = size;
	win->base = base;
	win->highest = base;
	return 0;
}

int srd_seqwin_init_lazy(struct srd_seqwin *win, uint32_t size,
			 uint32_t base)
{
	if (size < 64 || (size & (size - 1)))
		return -EINVAL;
	win->bits = NULL;
	win->size = size;
	win->base = base;
	win->highest = base;
	return 0;
}

void srd_seqwin_fini(struct srd_seqwin *win)
{
	free(win->bits);
	win->bits = NULL;
}

int srd_seqwin_reserve(struct srd_seqwin *win, uint32_t seq)
{
	if (!srd_seqwin_ring_due(win, seq))
		return 0;
	win->bits = calloc(win->size / 64, sizeof(uint64_t));
	return win->bits ? 0 : -ENOMEM;
}

uint32_t srd_seqwin_trim(struct srd_seqwin *win)
{
	uint32_t bytes = srd_seqwin_bytes(win);

	/* no hole: every bit is clear (they are cleared as base passes) */
	if (!bytes || srd_seqwin_has_holes(win))
		return 0;
	srd_seqwin_fini(win);
	return bytes;
}

void srd_seqwin_reset(struct srd_seqwin *win, uint32_t base)
{
	if (win->bits)
		memset(win->bits, 0, win->size / 8);
	win->base = base;
	win->highest = base;
}

enum srd_seqwin_result srd_seqwin_check(const struct srd_seqwin *win,
					uint32_t seq)
{
	if (srd_seq_lt(seq, win->base))
		return SRD_SEQWIN_DUP;
	if (seq - win->base >= win->size)
		return SRD_SEQWIN_AHEAD;
	/* no ring: no hole, nothing seen at or above base */
	if (!win->bits)
		return SRD_SEQWIN_NEW;
	return win_bit(win, seq) ? SRD_SEQWIN_DUP : SRD_SEQWIN_NEW;
}

enum srd_seqwin_result srd_seqwin_mark(struct srd_seqwin *win, uint32_t seq)
{
	enum srd_seqwin_result res = srd_seqwin_check(win, seq);

	if (res != SRD_SEQWIN_NEW)
		return res;
	/* out of order without a ring: not recorded (srd_seqwin_reserve
	 * comes first; this only keeps a caller's slip from writing NULL) */
	if (seq != win->base && srd_seqwin_reserve(win, seq))
		return SRD_SEQWIN_AHEAD;
	if (srd_seq_lt(win->highest, seq + 1))
		win->highest = seq + 1;
	if (seq != win->base) {
		win_set(win, seq, true);
		return res;
	}
	/* In order: slide base over it and every number already seen. */
	win->base++;
	while (win->base != win->highest && win_bit(win, win->base)) {
		win_set(win, win->base, false);
		win->base++;
	}
	return res;
}

uint32_t srd_seqwin_export(const struct srd_seqwin *win, uint8_t *out,
			   uint32_t max_bytes)
{
	uint32_t span = win->highest - win->base;
	uint32_t nbytes = (span + 7) / 8;

	if (nbytes > max_bytes)
		nbytes = max_bytes;
	memset(out, 0, nbytes);
	for (uint32_t i = 0; i < nbytes * 8 && i < span; i++)
		if (win_bit(win, win->base + i))
			out[i / 8] |= (uint8_t)(1u << (i % 8));
	return nbytes;
}
