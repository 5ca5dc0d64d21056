/*
 * srd_ops_none.c: entry points for what this build of the provider does
 * not offer (RMA and atomics until they land, opening extra ops), each
 * answering -FI_ENOSYS so that a caller gets an error, never a crash on
 * a NULL table.  Nothing else belongs here.
 */
#include "config.h"
#include "srd.h"

int srd_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int srd_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int srd_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rma_no_read(struct fid_ep *ep, void *buf, size_t len,
			   void *desc, fi_addr_t src, uint64_t addr,
			   uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rma_no_readv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src,
			    uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rma_no_msg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			  uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t rma_no_write(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rma_no_writev(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rma_no_inject(struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest, uint64_t addr, uint64_t key)
{
	return -FI_ENOSYS;
}

static ssize_t rma_no_writedata(struct fid_ep *ep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, uint64_t addr, uint64_t key,
				void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rma_no_injectdata(struct fid_ep *ep, const void *buf,
				 size_t len, uint64_t data, fi_addr_t dest,
				 uint64_t addr, uint64_t key)
{
	return -FI_ENOSYS;
}

struct fi_ops_rma srd_rma_none_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_no_read,
	.readv = rma_no_readv,
	.readmsg = rma_no_msg,
	.write = rma_no_write,
	.writev = rma_no_writev,
	.writemsg = rma_no_msg,
	.inject = rma_no_inject,
	.writedata = rma_no_writedata,
	.injectdata = rma_no_injectdata,
};

static ssize_t atomic_no_write(struct fid_ep *ep, const void *buf,
			       size_t count, void *desc, fi_addr_t dest,
			       uint64_t addr, uint64_t key,
			       enum fi_datatype dt, enum fi_op op,
			       void *context)
{
	return -FI_ENOSYS;
}

static ssize_t atomic_no_writev(struct fid_ep *ep, const struct fi_ioc *iov,
				void **desc, size_t count, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype dt, enum fi_op op,
				void *context)
{
	return -FI_ENOSYS;
}

static ssize_t atomic_no_writemsg(struct fid_ep *ep,
				  const struct fi_msg_atomic *msg,
				  uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t atomic_no_inject(struct fid_ep *ep, const void *buf,
				size_t count, fi_addr_t dest, uint64_t addr,
				uint64_t key, enum fi_datatype dt,
				enum fi_op op)
{
	return -FI_ENOSYS;
}

static ssize_t atomic_no_readwrite(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc, void *result,
				   void *result_desc, fi_addr_t dest,
				   uint64_t addr, uint64_t key,
				   enum fi_datatype dt, enum fi_op op,
				   void *context)
{
	return -FI_ENOSYS;
}

static ssize_t atomic_no_readwritev(struct fid_ep *ep,
				    const struct fi_ioc *iov, void **desc,
				    size_t count, struct fi_ioc *resultv,
				    void **result_desc, size_t result_count,
				    fi_addr_t dest, uint64_t addr,
				    uint64_t key, enum fi_datatype dt,
				    enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t atomic_no_readwritemsg(struct fid_ep *ep,
				      const struct fi_msg_atomic *msg,
				      struct fi_ioc *resultv,
				      void **result_desc,
				      size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t atomic_no_compwrite(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc,
				   const void *compare, void *compare_desc,
				   void *result, void *result_desc,
				   fi_addr_t dest, uint64_t addr,
				   uint64_t key, enum fi_datatype dt,
				   enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t atomic_no_compwritev(struct fid_ep *ep,
				    const struct fi_ioc *iov, void **desc,
				    size_t count,
				    const struct fi_ioc *comparev,
				    void **compare_desc,
				    size_t compare_count,
				    struct fi_ioc *resultv,
				    void **result_desc, size_t result_count,
				    fi_addr_t dest, uint64_t addr,
				    uint64_t key, enum fi_datatype dt,
				    enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t atomic_no_compwritemsg(struct fid_ep *ep,
				      const struct fi_msg_atomic *msg,
				      const struct fi_ioc *comparev,
				      void **compare_desc,
				      size_t compare_count,
				      struct fi_ioc *resultv,
				      void **result_desc,
				      size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int atomic_no_valid(struct fid_ep *ep, enum fi_datatype dt,
			   enum fi_op op, size_t *count)
{
	return -FI_ENOSYS;
}

struct fi_ops_atomic srd_atomic_none_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = atomic_no_write,
	.writev = atomic_no_writev,
	.writemsg = atomic_no_writemsg,
	.inject = atomic_no_inject,
	.readwrite = atomic_no_readwrite,
	.readwritev = atomic_no_readwritev,
	.readwritemsg = atomic_no_readwritemsg,
	.compwrite = atomic_no_compwrite,
	.compwritev = atomic_no_compwritev,
	.compwritemsg = atomic_no_compwritemsg,
	.writevalid = atomic_no_valid,
	.readwritevalid = atomic_no_valid,
	.compwritevalid = atomic_no_valid,
};
