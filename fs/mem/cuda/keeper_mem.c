/* The cuda backend's memory as the keeper makes it (keeper.h): cudaMalloc blocks, exported
 * with cudaIpcGetMemHandle. The handles clients find in user.tensor.ipc_handle are the
 * keeper's, so they stay valid for as long as the keeper lives, whatever happens to the
 * daemon, which maps each block with cudaIpcOpenMemHandle for its own copies (alloc.c).
 * The keeper starts CUDA at its first allocation, after the fork that made it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "mem/keeper/keeper.h"
#include "log.h"

struct cmem {
	void *ptr;
	int device;
};

static int cuda_mem_alloc(uint64_t size, int device, uid_t uid, gid_t gid, mode_t mode,
			  uint8_t handle[TFS_IPC_HANDLE_SIZE], int *fd, void **priv)
{
	struct cmem *m;
	cudaIpcMemHandle_t h;
	cudaError_t e;

	(void)uid; (void)gid; (void)mode;
	*fd = -1;
	if (cudaSetDevice(device) != cudaSuccess) {
		(void)cudaGetLastError();
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->device = device;
	e = cudaMalloc(&m->ptr, size);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		free(m);
		return e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
	}
	e = cudaIpcGetMemHandle(&h, m->ptr);
	if (e != cudaSuccess) {
		tfs_log(LOG_ERR, "keeper: cudaIpcGetMemHandle: %s", cudaGetErrorString(e));
		cudaFree(m->ptr);
		free(m);
		return -EIO;
	}
	memcpy(handle, &h, TFS_IPC_HANDLE_SIZE);
	*priv = m;
	return 0;
}

static void cuda_mem_free(void *priv, uint64_t size, int device)
{
	struct cmem *m = priv;
	cudaError_t e;

	(void)size; (void)device;
	cudaSetDevice(m->device);
	e = cudaFree(m->ptr);
	if (e != cudaSuccess)
		tfs_log(LOG_ERR, "keeper: cudaFree: %s", cudaGetErrorString(e));
	free(m);
}

/* Peer access between two devices, asked for once per pair: where the hardware has none,
 * cudaMemcpyPeer goes through host memory by itself. */
static void peer_enable(int a, int b)
{
	static unsigned char asked[64][64];
	int can = 0;

	if (a < 0 || b < 0 || a >= 64 || b >= 64 || asked[a][b])
		return;
	asked[a][b] = 1;
	if (cudaDeviceCanAccessPeer(&can, a, b) == cudaSuccess && can &&
	    cudaSetDevice(a) == cudaSuccess)
		cudaDeviceEnablePeerAccess(b, 0);
	(void)cudaGetLastError();     /* already enabled, or impossible */
}

static int cuda_mem_copy(void *dst, uint64_t dst_off, void *src, uint64_t src_off,
			 uint64_t len)
{
	struct cmem *d = dst, *s = src;
	cudaError_t e;

	if (d->device != s->device) {
		peer_enable(d->device, s->device);
		peer_enable(s->device, d->device);
	}
	if ((e = cudaSetDevice(d->device)) == cudaSuccess)
		e = cudaMemcpyPeer((char *)d->ptr + dst_off, d->device,
				   (const char *)s->ptr + src_off, s->device, len);
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		tfs_log(LOG_ERR, "keeper: cudaMemcpyPeer %d -> %d: %s", s->device, d->device,
			cudaGetErrorString(e));
		(void)cudaGetLastError();
		return -EIO;
	}
	return 0;
}

const struct tfs_keeper_mem tfs_keeper_mem_cuda = {
	.name = "cuda",
	.alloc = cuda_mem_alloc,
	.free = cuda_mem_free,
	.fd = NULL,
	.copy = cuda_mem_copy,
};
