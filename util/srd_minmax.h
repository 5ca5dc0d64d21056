/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_minmax.h: SRD_MIN / SRD_MAX, each argument evaluated once.
 */
#ifndef SRD_MINMAX_H
#define SRD_MINMAX_H

#define SRD_MIN(a, b) __extension__ ({					\
	__typeof__(a) srd_min_a_ = (a);					\
	__typeof__(b) srd_min_b_ = (b);					\
	srd_min_a_ < srd_min_b_ ? srd_min_a_ : srd_min_b_;		\
})
#define SRD_MAX(a, b) __extension__ ({					\
	__typeof__(a) srd_max_a_ = (a);					\
	__typeof__(b) srd_max_b_ = (b);					\
	srd_max_a_ > srd_max_b_ ? srd_max_a_ : srd_max_b_;		\
})

#endif /* SRD_MINMAX_H */
