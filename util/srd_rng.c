/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_rng.c: seeded pseudo-random numbers (xoshiro256**).  Owns no
 * global state; kernel entropy lives in srd_entropy.c.
 */
#include "config.h"
#include "srd_rng.h"

uint64_t srd_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void srd_rng_seed(struct srd_rng *rng, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		rng->s[i] = srd_splitmix64(&seed);
}

uint64_t srd_rng_next(struct srd_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t srd_rng_below(struct srd_rng *rng, uint64_t bound)
{
	if (!bound)
		return 0;
	return srd_rng_next(rng) % bound;
}

int srd_rng_chance_ppm(struct srd_rng *rng, uint32_t ppm)
{
	return ppm && srd_rng_below(rng, 1000000) < ppm;
}
