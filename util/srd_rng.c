/*
 * srd_rng.c: seeded pseudo-random numbers and kernel entropy.
 * Owns no global state except a fallback generator used only if the
 * kernel refuses getrandom().
 */
#include "config.h"
#include "srd_rng.h"
#include "srd_clock.h"

#include <errno.h>
#include <unistd.h>
#include <sys/random.h>

static uint64_t splitmix64(uint64_t *x)
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
		rng->s[i] = splitmix64(&seed);
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

uint64_t srd_random_u64(void)
{
	static __thread uint64_t fallback_state;
	uint64_t v = 0;
	ssize_t n;

	do {
		n = getrandom(&v, sizeof(v), 0);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(v)) {
		/* Only when the kernel lacks getrandom: still never repeats. */
		fallback_state ^= srd_clock_now_ns() ^ ((uint64_t)getpid() << 32);
		v = splitmix64(&fallback_state);
	}
	return v ? v : 0x5ad5ad5ad5ad5ad5ULL;
}
