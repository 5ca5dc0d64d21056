/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_rng.h: a small seeded generator (xoshiro256** seeded through
 * splitmix64) for deterministic simulation, and an entropy source for
 * values that must be unguessable (connection ids, MR keys).
 */
#ifndef SRD_RNG_H
#define SRD_RNG_H

#include <stdint.h>

struct srd_rng {
	uint64_t s[4];
};

void srd_rng_seed(struct srd_rng *rng, uint64_t seed);
uint64_t srd_rng_next(struct srd_rng *rng);
/* Uniform in [0, bound); bound 0 returns 0. */
uint64_t srd_rng_below(struct srd_rng *rng, uint64_t bound);
/* True with probability ppm / 1e6. */
int srd_rng_chance_ppm(struct srd_rng *rng, uint32_t ppm);

/* One step of splitmix64: a well-mixed sequence from any start. */
uint64_t srd_splitmix64(uint64_t *state);

/* 64 bits from the kernel's entropy pool (getrandom), never zero. */
uint64_t srd_random_u64(void);

#endif /* SRD_RNG_H */
