/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_atomic_apply.c: which (op, datatype) pairs srd executes, and
 * executing them on target memory.  One function per datatype, generated
 * from three families: integers take every op; real types no bitwise op
 * and no MSWAP; complex types additionally no MIN/MAX and no ordered
 * compare.  ATOMIC_READ is a fetching op only; CSWAP* and MSWAP need
 * fi_compare_atomic.  Values are loaded and stored with memcpy, since
 * neither target addresses nor packet payloads need be aligned.
 * The caller holds its endpoint's lock; this file knows nothing of packets.
 */
#include "config.h"
#include "srd_msg.h"

#include <complex.h>

typedef __int128 srd_i128;
typedef unsigned __int128 srd_u128;
typedef float _Complex srd_cf;
typedef double _Complex srd_cd;
typedef long double _Complex srd_cld;

size_t srd_atomic_dt_size(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT8: case FI_UINT8: return 1;
	case FI_INT16: case FI_UINT16: return 2;
	case FI_INT32: case FI_UINT32: return 4;
	case FI_INT64: case FI_UINT64: return 8;
	case FI_FLOAT: return sizeof(float);
	case FI_DOUBLE: return sizeof(double);
	case FI_FLOAT_COMPLEX: return sizeof(srd_cf);
	case FI_DOUBLE_COMPLEX: return sizeof(srd_cd);
	case FI_LONG_DOUBLE: return sizeof(long double);
	case FI_LONG_DOUBLE_COMPLEX: return sizeof(srd_cld);
	case FI_INT128: case FI_UINT128: return 16;
	default: return 0;
	}
}

static bool dt_is_int(enum fi_datatype dt)
{
	return dt <= FI_UINT64 || dt == FI_INT128 || dt == FI_UINT128;
}

static bool dt_is_complex(enum fi_datatype dt)
{
	return dt == FI_FLOAT_COMPLEX || dt == FI_DOUBLE_COMPLEX ||
	       dt == FI_LONG_DOUBLE_COMPLEX;
}

bool srd_atomic_valid(enum fi_op op, enum fi_datatype dt,
		      enum srd_atomic_kind kind)
{
	if (!srd_atomic_dt_size(dt) || (unsigned)op >= FI_ATOMIC_OP_LAST)
		return false;
	switch (kind) {
	case SRD_ATOMIC_BASE:
		if (op > FI_ATOMIC_WRITE || op == FI_ATOMIC_READ)
			return false;
		break;
	case SRD_ATOMIC_FETCH:
		if (op > FI_ATOMIC_WRITE)
			return false;
		break;
	case SRD_ATOMIC_COMPARE:
		if (op < FI_CSWAP)
			return false;
		break;
	default:
		return false;
	}
	switch (op) {
	case FI_BOR: case FI_BAND: case FI_BXOR: case FI_MSWAP:
		return dt_is_int(dt);
	case FI_MIN: case FI_MAX:
	case FI_CSWAP_LE: case FI_CSWAP_LT: case FI_CSWAP_GE: case FI_CSWAP_GT:
		return !dt_is_complex(dt);
	default:
		return true;
	}
}

/*
 * The body shared by every type: t is the target value, o the operand,
 * c the compare value.  Sets w when t must be stored back.  ORDERED and
 * BITWISE add the ops that exist only for ordered or integer types.
 */
#define ATOMIC_COMMON_OPS						\
	case FI_SUM: t = t + o; break;					\
	case FI_PROD: t = t * o; break;					\
	case FI_LOR: t = (t != 0) || (o != 0); break;			\
	case FI_LAND: t = (t != 0) && (o != 0); break;			\
	case FI_LXOR: t = (t != 0) != (o != 0); break;			\
	case FI_ATOMIC_READ: w = false; break;				\
	case FI_ATOMIC_WRITE: t = o; break;				\
	case FI_CSWAP: w = c == t; t = w ? o : t; break;		\
	case FI_CSWAP_NE: w = c != t; t = w ? o : t; break;

#define ATOMIC_ORDERED_OPS						\
	case FI_MIN: t = o < t ? o : t; break;				\
	case FI_MAX: t = o > t ? o : t; break;				\
	case FI_CSWAP_LE: w = c <= t; t = w ? o : t; break;		\
	case FI_CSWAP_LT: w = c < t; t = w ? o : t; break;		\
	case FI_CSWAP_GE: w = c >= t; t = w ? o : t; break;		\
	case FI_CSWAP_GT: w = c > t; t = w ? o : t; break;

#define ATOMIC_BITWISE_OPS						\
	case FI_BOR: t = t | o; break;					\
	case FI_BAND: t = t & o; break;					\
	case FI_BXOR: t = t ^ o; break;					\
	case FI_MSWAP: t = (o & c) | (t & ~c); break;

#define ATOMIC_FN(NAME, T, EXTRA_OPS)					\
static void NAME(enum fi_op op, uint8_t *dst, const uint8_t *opnd,	\
		 const uint8_t *cmp, uint8_t *old, size_t count)	\
{									\
	for (size_t i = 0; i < count; i++) {				\
		T t, o = 0, c = 0;					\
		bool w = true;						\
									\
		memcpy(&t, dst + i * sizeof(T), sizeof(T));		\
		if (old)						\
			memcpy(old + i * sizeof(T), &t, sizeof(T));	\
		if (op != FI_ATOMIC_READ)				\
			memcpy(&o, opnd + i * sizeof(T), sizeof(T));	\
		if (op >= FI_CSWAP)					\
			memcpy(&c, cmp + i * sizeof(T), sizeof(T));	\
		switch (op) {						\
		ATOMIC_COMMON_OPS					\
		EXTRA_OPS						\
		default: w = false; break;				\
		}							\
		if (w)							\
			memcpy(dst + i * sizeof(T), &t, sizeof(T));	\
	}								\
}

#define ATOMIC_INT_OPS		ATOMIC_ORDERED_OPS ATOMIC_BITWISE_OPS

ATOMIC_FN(atomic_i8, int8_t, ATOMIC_INT_OPS)
ATOMIC_FN(atomic_u8, uint8_t, ATOMIC_INT_OPS)
ATOMIC_FN(atomic_i16, int16_t, ATOMIC_INT_OPS)
ATOMIC_FN(atomic_u16, uint16_t, ATOMIC_INT_OPS)
ATOMIC_FN(atomic_i32, int32_t, ATOMIC_INT_OPS)
ATOMIC_FN(atomic_u32, uint32_t, ATOMIC_INT_OPS)
ATOMIC_FN(atomic_i64, int64_t, ATOMIC_INT_OPS)
ATOMIC_FN(atomic_u64, uint64_t, ATOMIC_INT_OPS)
ATOMIC_FN(atomic_i128, srd_i128, ATOMIC_INT_OPS)
ATOMIC_FN(atomic_u128, srd_u128, ATOMIC_INT_OPS)
ATOMIC_FN(atomic_flt, float, ATOMIC_ORDERED_OPS)
ATOMIC_FN(atomic_dbl, double, ATOMIC_ORDERED_OPS)
ATOMIC_FN(atomic_ldbl, long double, ATOMIC_ORDERED_OPS)
ATOMIC_FN(atomic_cflt, srd_cf, )
ATOMIC_FN(atomic_cdbl, srd_cd, )
ATOMIC_FN(atomic_cldbl, srd_cld, )

typedef void (*atomic_fn)(enum fi_op op, uint8_t *dst, const uint8_t *opnd,
			  const uint8_t *cmp, uint8_t *old, size_t count);

static atomic_fn atomic_fn_of(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT8: return atomic_i8;
	case FI_UINT8: return atomic_u8;
	case FI_INT16: return atomic_i16;
	case FI_UINT16: return atomic_u16;
	case FI_INT32: return atomic_i32;
	case FI_UINT32: return atomic_u32;
	case FI_INT64: return atomic_i64;
	case FI_UINT64: return atomic_u64;
	case FI_INT128: return atomic_i128;
	case FI_UINT128: return atomic_u128;
	case FI_FLOAT: return atomic_flt;
	case FI_DOUBLE: return atomic_dbl;
	case FI_LONG_DOUBLE: return atomic_ldbl;
	case FI_FLOAT_COMPLEX: return atomic_cflt;
	case FI_DOUBLE_COMPLEX: return atomic_cdbl;
	case FI_LONG_DOUBLE_COMPLEX: return atomic_cldbl;
	default: return NULL;
	}
}

void srd_atomic_apply(enum fi_op op, enum fi_datatype dt, void *dst,
		      const void *operand, const void *compare, void *old,
		      size_t count)
{
	atomic_fn fn = atomic_fn_of(dt);

	if (fn)
		fn(op, dst, operand, compare, old, count);
}
