/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_seqwin.h: 32-bit sequence-number arithmetic and a receive window.
 *
 * The window records which sequence numbers in [base, base + size) have
 * been seen, in a ring of bits, so that out-of-order arrivals are kept
 * and duplicates recognised.  base is the cumulative point: every number
 * below it has been seen.  size is a power of two.
 *
 * The ring holds a bit only for numbers seen above base, so a window
 * with no hole (highest == base) has every bit clear: it can do without
 * the ring.  bits is NULL then or not at all (srd_seqwin_init_lazy,
 * srd_seqwin_trim); srd_seqwin_reserve allocates it again before the
 * next out-of-order number is marked.  Either way the window classifies
 * the same: what it forgets is a ring of zeros.
 */
#ifndef SRD_SEQWIN_H
#define SRD_SEQWIN_H

#include <stdbool.h>
#include <stdint.h>

/* Wrap-safe comparisons: a before b when (a - b) is negative as int32. */
static inline bool srd_seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}
static inline bool srd_seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

enum srd_seqwin_result {
	SRD_SEQWIN_NEW,		/* first time seen: accepted */
	SRD_SEQWIN_DUP,		/* seen before */
	SRD_SEQWIN_AHEAD,	/* beyond the window: not recorded */
};

struct srd_seqwin {
	uint32_t base;
	uint32_t size;		/* bits; a power of two, multiple of 64 */
	uint32_t highest;	/* highest sequence number seen + 1 */
	uint64_t *bits;
};

int srd_seqwin_init(struct srd_seqwin *win, uint32_t size, uint32_t base);
/* The same without the ring (allocated on the first hole). */
int srd_seqwin_init_lazy(struct srd_seqwin *win, uint32_t size,
			 uint32_t base);
void srd_seqwin_fini(struct srd_seqwin *win);
/* Makes sure marking seq will not need memory: allocates the ring if seq
 * would open a hole and there is none (srd_seqwin_ring_due).  -ENOMEM:
 * seq must not be marked (nor whatever it stands for be consumed). */
int srd_seqwin_reserve(struct srd_seqwin *win, uint32_t seq);
/* Whether srd_seqwin_reserve(win, seq) would allocate the ring. */
static inline bool srd_seqwin_ring_due(const struct srd_seqwin *win,
				       uint32_t seq)
{
	return !win->bits && seq != win->base;
}
/* Frees the ring when no hole needs it; returns the bytes freed. */
uint32_t srd_seqwin_trim(struct srd_seqwin *win);
/* Bytes of ring held now. */
static inline uint32_t srd_seqwin_bytes(const struct srd_seqwin *win)
{
	return win->bits ? win->size / 8 : 0;
}
void srd_seqwin_reset(struct srd_seqwin *win, uint32_t base);
/* Classifies seq without recording it. */
enum srd_seqwin_result srd_seqwin_check(const struct srd_seqwin *win,
					uint32_t seq);
/* Records seq (if NEW) and advances base over every seen number.  An
 * out-of-order seq needs the ring: srd_seqwin_reserve first. */
enum srd_seqwin_result srd_seqwin_mark(struct srd_seqwin *win, uint32_t seq);
/* True when something above base has been seen: a hole exists. */
static inline bool srd_seqwin_has_holes(const struct srd_seqwin *win)
{
	return win->highest != win->base;
}
/*
 * Writes a bitmap of which numbers in [base, base + nbits) were seen
 * (bit i of byte i / 8 for base + i) and returns the bytes written:
 * only as many as needed to cover the highest seen number.
 */
uint32_t srd_seqwin_export(const struct srd_seqwin *win, uint8_t *out,
			   uint32_t max_bytes);

#endif /* SRD_SEQWIN_H */
