/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_ops_atomic.c: the fi_ops_atomic entry points, fi_query_atomic's
 * and fi_*atomicvalid's answers.  Each entry point describes its call in
 * a struct srd_atomic_args and hands it, under the endpoint lock, to the
 * message layer's one atomic post (msg/srd_atomic.c).  No packets here.
 */
#include "config.h"
#include "srd.h"

static ssize_t atomic_locked(struct fid_ep *ep_fid, const struct srd_atomic_args *a,
			     uint64_t flags)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);

	srd_ep_post_enter(ep);
	return srd_ep_post_leave(ep, srd_atomic_post(&ep->msg, a, flags));
}

/* Builds the message of the non-msg calls: one local and one remote
 * segment of count elements. */
#define ATOMIC_MSG(name, ioc_ptr, ioc_n, dest, raddr, rkey, dt, aop, ctx) \
	struct fi_rma_ioc name##_rioc = {				\
		.addr = (raddr), .count = srd_ioc_count(ioc_ptr, ioc_n),	\
		.key = (rkey),						\
	};								\
	struct fi_msg_atomic name = {					\
		.msg_iov = (ioc_ptr), .iov_count = (ioc_n),		\
		.addr = (dest), .rma_iov = &name##_rioc,		\
		.rma_iov_count = 1, .datatype = (dt), .op = (aop),	\
		.context = (ctx),					\
	}

/* --- fi_ops_atomic: base ------------------------------------------------ */

static ssize_t atomic_writev(struct fid_ep *ep_fid, const struct fi_ioc *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t addr, uint64_t key,
			     enum fi_datatype datatype, enum fi_op op,
			     void *context)
{
	ATOMIC_MSG(msg, iov, count, dest, addr, key, datatype, op, context);
	struct srd_atomic_args a = { .msg = &msg, .kind = SRD_ATOMIC_BASE };

	(void)desc;
	if (count > SRD_IOV_LIMIT || (count && !iov))
		return -FI_EINVAL;
	return atomic_locked(ep_fid, &a, srd_ep_of(ep_fid)->tx_op_flags);
}

static ssize_t atomic_write(struct fid_ep *ep_fid, const void *buf,
			    size_t count, void *desc, fi_addr_t dest,
			    uint64_t addr, uint64_t key,
			    enum fi_datatype datatype, enum fi_op op,
			    void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };

	return atomic_writev(ep_fid, &ioc, &desc, 1, dest, addr, key,
			     datatype, op, context);
}

static ssize_t atomic_writemsg(struct fid_ep *ep_fid,
			       const struct fi_msg_atomic *msg, uint64_t flags)
{
	struct srd_atomic_args a = { .msg = msg, .kind = SRD_ATOMIC_BASE };

	return atomic_locked(ep_fid, &a, flags & ~SRD_OP_NO_COMP);
}

static ssize_t atomic_inject(struct fid_ep *ep_fid, const void *buf,
			     size_t count, fi_addr_t dest, uint64_t addr,
			     uint64_t key, enum fi_datatype datatype,
			     enum fi_op op)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	ATOMIC_MSG(msg, &ioc, 1, dest, addr, key, datatype, op, NULL);
	struct srd_atomic_args a = { .msg = &msg, .kind = SRD_ATOMIC_BASE };

	return atomic_locked(ep_fid, &a, FI_INJECT | SRD_OP_NO_COMP);
}

/* --- fetch ------------------------------------------------------------------ */

static ssize_t atomic_readwritev(struct fid_ep *ep_fid,
				 const struct fi_ioc *iov, void **desc,
				 size_t count, struct fi_ioc *resultv,
				 void **result_desc, size_t result_count,
				 fi_addr_t dest, uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	ATOMIC_MSG(msg, iov, count, dest, addr, key, datatype, op, context);
	struct srd_atomic_args a = {
		.msg = &msg, .result = resultv, .result_count = result_count,
		.kind = SRD_ATOMIC_FETCH,
	};

	(void)desc;
	(void)result_desc;
	if (count > SRD_IOV_LIMIT || (count && !iov))
		return -FI_EINVAL;
	return atomic_locked(ep_fid, &a, srd_ep_of(ep_fid)->tx_op_flags);
}

static ssize_t atomic_readwrite(struct fid_ep *ep_fid, const void *buf,
				size_t count, void *desc, void *result,
				void *result_desc, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	/* FI_ATOMIC_READ takes no operand; buf may be NULL. */
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };

	return atomic_readwritev(ep_fid, &ioc, &desc, 1, &res, &result_desc,
				 1, dest, addr, key, datatype, op, context);
}

static ssize_t atomic_readwritemsg(struct fid_ep *ep_fid,
				   const struct fi_msg_atomic *msg,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{
	struct srd_atomic_args a = {
		.msg = msg, .result = resultv, .result_count = result_count,
		.kind = SRD_ATOMIC_FETCH,
	};

	(void)result_desc;
	return atomic_locked(ep_fid, &a, flags & ~SRD_OP_NO_COMP);
}

/* --- compare ---------------------------------------------------------------- */

static ssize_t atomic_compwritev(struct fid_ep *ep_fid,
				 const struct fi_ioc *iov, void **desc,
				 size_t count, const struct fi_ioc *comparev,
				 void **compare_desc, size_t compare_count,
				 struct fi_ioc *resultv, void **result_desc,
				 size_t result_count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	ATOMIC_MSG(msg, iov, count, dest, addr, key, datatype, op, context);
	struct srd_atomic_args a = {
		.msg = &msg, .compare = comparev,
		.compare_count = compare_count, .result = resultv,
		.result_count = result_count, .kind = SRD_ATOMIC_COMPARE,
	};

	(void)desc;
	(void)compare_desc;
	(void)result_desc;
	if (count > SRD_IOV_LIMIT || (count && !iov))
		return -FI_EINVAL;
	return atomic_locked(ep_fid, &a, srd_ep_of(ep_fid)->tx_op_flags);
}

static ssize_t atomic_compwrite(struct fid_ep *ep_fid, const void *buf,
				size_t count, void *desc, const void *compare,
				void *compare_desc, void *result,
				void *result_desc, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	struct fi_ioc cmp = { .addr = (void *)compare, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };

	return atomic_compwritev(ep_fid, &ioc, &desc, 1, &cmp, &compare_desc,
				 1, &res, &result_desc, 1, dest, addr, key,
				 datatype, op, context);
}

static ssize_t atomic_compwritemsg(struct fid_ep *ep_fid,
				   const struct fi_msg_atomic *msg,
				   const struct fi_ioc *comparev,
				   void **compare_desc, size_t compare_count,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{
	struct srd_atomic_args a = {
		.msg = msg, .compare = comparev,
		.compare_count = compare_count, .result = resultv,
		.result_count = result_count, .kind = SRD_ATOMIC_COMPARE,
	};

	(void)compare_desc;
	(void)result_desc;
	return atomic_locked(ep_fid, &a, flags & ~SRD_OP_NO_COMP);
}

/* --- valid ------------------------------------------------------------------ */

static int atomic_valid_answer(const struct srd_domain *dom,
			       enum fi_datatype dt, enum fi_op op,
			       enum srd_atomic_kind kind, size_t *count)
{
	size_t max = srd_atomic_max_count(dom->atomic_max_bytes, op, dt, kind);

	if (!max)
		return -FI_EOPNOTSUPP;
	if (count)
		*count = max;
	return 0;
}

static int atomic_writevalid(struct fid_ep *ep, enum fi_datatype dt,
			     enum fi_op op, size_t *count)
{
	return atomic_valid_answer(srd_ep_of(ep)->dom, dt, op, SRD_ATOMIC_BASE,
				   count);
}

static int atomic_readwritevalid(struct fid_ep *ep, enum fi_datatype dt,
				 enum fi_op op, size_t *count)
{
	return atomic_valid_answer(srd_ep_of(ep)->dom, dt, op, SRD_ATOMIC_FETCH,
				   count);
}

static int atomic_compwritevalid(struct fid_ep *ep, enum fi_datatype dt,
				 enum fi_op op, size_t *count)
{
	return atomic_valid_answer(srd_ep_of(ep)->dom, dt, op,
				   SRD_ATOMIC_COMPARE, count);
}

/* fi_query_atomic: the same answers at domain level. */
int srd_query_atomic(const struct srd_domain *dom, enum fi_datatype dt,
		     enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
	enum srd_atomic_kind kind = SRD_ATOMIC_BASE;
	size_t count;
	int ret;

	if (!attr || (flags & ~(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC |
				FI_TAGGED)))
		return -FI_EINVAL;
	if ((flags & FI_FETCH_ATOMIC) && (flags & FI_COMPARE_ATOMIC))
		return -FI_EINVAL;
	if (flags & FI_TAGGED)
		return -FI_EOPNOTSUPP;	/* no tagged atomics */
	if (flags & FI_FETCH_ATOMIC)
		kind = SRD_ATOMIC_FETCH;
	else if (flags & FI_COMPARE_ATOMIC)
		kind = SRD_ATOMIC_COMPARE;
	ret = atomic_valid_answer(dom, dt, op, kind, &count);
	if (ret)
		return ret;
	attr->size = srd_atomic_dt_size(dt);
	attr->count = count;
	return 0;
}

struct fi_ops_atomic srd_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = atomic_write,
	.writev = atomic_writev,
	.writemsg = atomic_writemsg,
	.inject = atomic_inject,
	.readwrite = atomic_readwrite,
	.readwritev = atomic_readwritev,
	.readwritemsg = atomic_readwritemsg,
	.compwrite = atomic_compwrite,
	.compwritev = atomic_compwritev,
	.compwritemsg = atomic_compwritemsg,
	.writevalid = atomic_writevalid,
	.readwritevalid = atomic_readwritevalid,
	.compwritevalid = atomic_compwritevalid,
};
