/*
 * srd_atomic.c: the fi_ops_atomic entry points, fi_query_atomic's and
 * fi_*atomicvalid's answers, and the one atomic post they all reach:
 * checks, a copy of the operands (and compare values) into the
 * operation, where the fetched values go.  An atomic is one request
 * packet and one response (srd_pke_rma.c); the op itself runs at the
 * target (srd_atomic_apply.c).  No packet is built here.
 */
#include "config.h"
#include "srd_msgl.h"

#include <stdlib.h>

/* Elements of dt one atomic carries; 0 when (op, dt) is not offered. */
static size_t atomic_max_count(const struct srd_domain *dom, enum fi_op op,
			       enum fi_datatype dt, enum srd_atomic_kind kind)
{
	if (!srd_atomic_valid(op, dt, kind))
		return 0;
	return dom->atomic_max_bytes / srd_atomic_dt_size(dt);
}

static size_t ioc_count(const struct fi_ioc *ioc, size_t n)
{
	size_t count = 0;

	if (!ioc || n > SRD_IOV_LIMIT)
		return 0;	/* refused by the caller's checks */
	for (size_t i = 0; i < n; i++)
		count += ioc[i].count;
	return count;
}

static size_t ioc_gather(uint8_t *dst, const struct fi_ioc *ioc, size_t n,
			 size_t size)
{
	size_t off = 0;

	for (size_t i = 0; i < n; i++) {
		memcpy(dst + off, ioc[i].addr, ioc[i].count * size);
		off += ioc[i].count * size;
	}
	return off;
}

struct atomic_args {
	const struct fi_msg_atomic *msg;
	const struct fi_ioc *compare;
	size_t compare_count;
	const struct fi_ioc *result;
	size_t result_count;
	enum srd_atomic_kind kind;
};

static int atomic_check(struct srd_ep *ep, const struct atomic_args *a,
			uint64_t flags, size_t *count)
{
	const struct fi_msg_atomic *msg = a->msg;
	uint64_t need = FI_ATOMIC |
			(a->kind == SRD_ATOMIC_BASE ? FI_WRITE : FI_READ);
	size_t max;
	int ret = srd_rma_check_post(ep, need, msg->iov_count, msg->msg_iov,
				     msg->rma_iov_count, msg->rma_iov);

	if (ret)
		return ret;
	if (flags & FI_REMOTE_CQ_DATA)
		return -FI_EBADFLAGS;
	if (a->compare_count > SRD_IOV_LIMIT || a->result_count > SRD_IOV_LIMIT)
		return -FI_EINVAL;
	max = atomic_max_count(ep->dom, msg->op, msg->datatype, a->kind);
	if (!max)
		return -FI_EOPNOTSUPP;
	*count = ioc_count(msg->msg_iov, msg->iov_count);
	if (!*count || *count > max || msg->rma_iov[0].count != *count)
		return -FI_EINVAL;
	if (a->kind != SRD_ATOMIC_BASE &&
	    (!a->result ||
	     ioc_count(a->result, a->result_count) != *count))
		return -FI_EINVAL;
	if (a->kind == SRD_ATOMIC_COMPARE &&
	    (!a->compare ||
	     ioc_count(a->compare, a->compare_count) != *count))
		return -FI_EINVAL;
	if ((flags & FI_INJECT) &&
	    *count * srd_atomic_dt_size(msg->datatype) > ep->inject_size)
		return -FI_EMSGSIZE;
	return 0;
}

/* Operands, then compare values, into one buffer the packet carries. */
static int atomic_copy_operands(struct srd_txe *txe,
				const struct atomic_args *a, size_t size)
{
	const struct fi_msg_atomic *msg = a->msg;
	size_t n = txe->atomic_count * size;
	size_t len = 0;

	if (msg->op != FI_ATOMIC_READ)
		len = a->kind == SRD_ATOMIC_COMPARE ? 2 * n : n;
	if (!srd_txe_bounce(txe->ep, txe, len))
		return -FI_ENOMEM;
	if (len)
		ioc_gather(txe->bounce, msg->msg_iov, msg->iov_count, size);
	if (a->kind == SRD_ATOMIC_COMPARE)
		ioc_gather(txe->bounce + n, a->compare, a->compare_count, size);
	txe->iov[0].iov_base = txe->bounce;
	txe->iov[0].iov_len = len;
	txe->iov_count = 1;
	txe->total_len = len;
	return 0;
}

static ssize_t atomic_post(struct srd_ep *ep, const struct atomic_args *a,
			   uint64_t flags)
{
	const struct fi_msg_atomic *msg = a->msg;
	size_t size = srd_atomic_dt_size(msg->datatype);
	struct srd_peer *peer;
	struct srd_txe *txe;
	size_t count;
	int ret = atomic_check(ep, a, flags, &count);

	if (ret)
		return ret;
	ret = srd_rma_peer(ep, msg->addr, &peer);
	if (ret)
		return ret;
	txe = srd_txe_new(ep, peer, SRD_PKT_ATOMIC);
	if (!txe)
		return -FI_EAGAIN;
	txe->flags = flags;
	txe->context = msg->context;
	txe->addr = msg->addr;
	txe->rma_addr = msg->rma_iov[0].addr;
	txe->rma_key = msg->rma_iov[0].key;
	txe->resp_wait = true;
	txe->atomic_op = (uint8_t)msg->op;
	txe->atomic_dt = (uint8_t)msg->datatype;
	txe->atomic_kind = (uint8_t)a->kind;
	txe->atomic_count = (uint32_t)count;
	ret = atomic_copy_operands(txe, a, size);
	if (ret) {
		srd_txe_release(ep, txe);
		return ret;
	}
	for (size_t i = 0; a->kind != SRD_ATOMIC_BASE &&
			   i < a->result_count; i++) {
		txe->res_iov[i].iov_base = a->result[i].addr;
		txe->res_iov[i].iov_len = a->result[i].count * size;
	}
	txe->res_count = a->kind != SRD_ATOMIC_BASE ? a->result_count : 0;
	srd_txe_start(ep, txe);
	return 0;
}

static ssize_t atomic_locked(struct fid_ep *ep_fid, const struct atomic_args *a,
			     uint64_t flags)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);

	srd_ep_post_enter(ep);
	return srd_ep_post_leave(ep, atomic_post(ep, a, flags));
}

/* Builds the message of the non-msg calls: one local and one remote
 * segment of count elements. */
#define ATOMIC_MSG(name, ioc_ptr, ioc_n, dest, raddr, rkey, dt, aop, ctx) \
	struct fi_rma_ioc name##_rioc = {				\
		.addr = (raddr), .count = ioc_count(ioc_ptr, ioc_n),	\
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
	struct atomic_args a = { .msg = &msg, .kind = SRD_ATOMIC_BASE };

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
	struct atomic_args a = { .msg = msg, .kind = SRD_ATOMIC_BASE };

	return atomic_locked(ep_fid, &a, flags & ~SRD_OP_NO_COMP);
}

static ssize_t atomic_inject(struct fid_ep *ep_fid, const void *buf,
			     size_t count, fi_addr_t dest, uint64_t addr,
			     uint64_t key, enum fi_datatype datatype,
			     enum fi_op op)
{
	struct fi_ioc ioc = { .addr = (void *)buf, .count = count };
	ATOMIC_MSG(msg, &ioc, 1, dest, addr, key, datatype, op, NULL);
	struct atomic_args a = { .msg = &msg, .kind = SRD_ATOMIC_BASE };

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
	struct atomic_args a = {
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
	struct atomic_args a = {
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
	struct atomic_args a = {
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
	struct atomic_args a = {
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
	size_t max = atomic_max_count(dom, op, dt, kind);

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
