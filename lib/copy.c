/* Direct copies between a mapped tensor and caller memory, bypassing FUSE: the consumer
 * maps the handle (already done at open) and copies itself. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "client_internal.h"
#include "fileio.h"

/* Another node's tensor whose memory does not map here: pread/pwrite on its descriptor, which the daemon forwards to
 * the owning node; a short count before len means the tensor changed size there. */
static int copy_remote(tfs_tensor *t, uint64_t off, char *buf, size_t len, int to_tensor)
{
	const char *what = to_tensor ? "tfs_write" : "tfs_read";
	ssize_t n;

	while (len > 0) {
		n = to_tensor ? pwrite(t->fd, buf, len, (off_t)off) : pread(t->fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return tfs_seterr(-errno, "%s: node %s: %s", what, t->meta.node,
					  tfs_strerror(errno));
		if (n == 0)
			return tfs_seterr(-EIO, "%s: node %s answered %zu bytes short", what,
					  t->meta.node, len);
		buf += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* A host tensor's bytes through the descriptor of its object (tfs_ipc_host_fd) rather
 * than its mapping, for copies of at least FD_COPY_MIN bytes: the kernel copies through
 * its own mapping of the pages. On a virtual machine that shadows its guests' page tables
 * (the development VM), a process's first write to a page that another process (the
 * daemon zeroing it, another client) wrote since costs a trap per page, and a 64 KiB
 * memcpy into a packed tensor took longer than the pwrite (tests/bench/RESULTS-small.md).
 * 0 when done, 1 when not tried or cut short (the caller copies through the mapping: the
 * same bytes, and an object truncated under it is the caller's fault, as it was). */
#define FD_COPY_MIN (16u << 10)
static int copy_fd(tfs_tensor *t, uint64_t off, char *buf, size_t len, int to_tensor)
{
	int fd = tfs_ipc_host_fd(t->map);
	uint64_t at = t->meta.ipc_offset + off;

	if (fd < 0 || len < FD_COPY_MIN)
		return 1;
	return (to_tensor ? tfs_pwrite_full(fd, buf, len, at) : tfs_pread_full(fd, buf, len, at)) ?
	       1 : 0;
}

/* to_tensor: buf -> tensor, else tensor -> buf. */
static int copy(tfs_tensor *t, uint64_t off, void *buf, size_t len, int to_tensor)
{
	const char *what = to_tensor ? "tfs_write" : "tfs_read";
	const struct tfs_cudart *cu;
	char *dev;
	int rc, prev, err;

	if (!t || !buf)
		return tfs_seterr(-EINVAL, "%s: NULL argument", what);
	if (to_tensor && !t->writable)
		return tfs_seterr(-EBADF, "tfs_write: the tensor was opened read-only");
	if (off > t->meta.bytes || len > t->meta.bytes - off)
		return tfs_seterr(-EINVAL, "%s: range %llu+%zu outside the tensor's %llu bytes", what,
				  (unsigned long long)off, len, (unsigned long long)t->meta.bytes);
	if (len == 0)
		return 0;
	if (t->via_fd)
		return copy_remote(t, off, buf, len, to_tensor);
	dev = (char *)t->data + off;
	if (tfs_tensor_on_host(t)) {
		if (copy_fd(t, off, buf, len, to_tensor) == 0)
			return 0;
		memcpy(to_tensor ? dev : buf, to_tensor ? buf : dev, len);
		return 0;
	}
	if (!(cu = tfs_cudart_get(&rc)))
		return rc;
	if ((rc = tfs_cuda_enter(cu, t->meta.device, &prev)))
		return rc;
	err = cu->Memcpy(to_tensor ? dev : buf, to_tensor ? buf : dev, len, TFS_CUDA_MEMCPY_DEFAULT);
	/* cudaMemcpy returns before its DMA ends from pageable host memory to the device
	 * (once the bytes are staged) and between two device buffers: the stream's wait
	 * makes the copy done at return, as the contract says, before another process reads
	 * the tensor or a close unmaps it (a VMM mapping goes at once, docs/vmm.md). */
	if (!err)
		err = cu->StreamSynchronize(NULL);
	if (err)
		rc = tfs_seterr(-EIO, "%s: cudaMemcpy: %s", what, cu->GetErrorString(err));
	if (prev != t->meta.device)
		cu->SetDevice(prev);
	return rc;
}

int tfs_read(tfs_tensor *t, uint64_t off, void *dst, size_t len)
{
	return copy(t, off, dst, len, 0);
}

int tfs_write(tfs_tensor *t, uint64_t off, const void *src, size_t len)
{
	return copy(t, off, (void *)src, len, 1);
}
