/* The sleep checksum (core/tier.h) taken on the GPU: a sleep sums the tensor where it is
 * before its bytes leave, a wake sums what landed, so the host memory is read once, by the
 * DMA, and not again by the CPU (which halved a sleep's speed: both then compete for the
 * host's memory bandwidth). Equal bit for bit to tfs_sum_piece: the same steps, from
 * tier.h. Built where nvcc is (TFS_HAVE_SUM_KERNEL); host_tier.c sums on the host
 * otherwise. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "tier.h"

/* Four threads of a warp per piece, one per lane; a block of 64 threads, so that a small
 * tensor's few pieces spread over several multiprocessors. */
#define LANES 4
#define BLOCK 64

__global__ void sum_pieces(const unsigned char *b, uint64_t len, uint64_t off0,
			   unsigned long long *acc)
{
	uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t piece = g / LANES, np = (len + TFS_SUM_PIECE - 1) / TFS_SUM_PIECE;
	uint64_t at = piece * TFS_SUM_PIECE, plen = 0, v, v0, v1, v2, v3, nw;
	int k = (int)(g % LANES), base = (int)(threadIdx.x & ~(LANES - 1));

	if (piece < np)
		plen = len - at < TFS_SUM_PIECE ? len - at : TFS_SUM_PIECE;
	v = tfs_sum_seed(off0 + at, k);
	nw = plen / 32;
	/* The caller checked the 8-byte alignment of b; at is a multiple of the piece. */
	const uint64_t *w = (const uint64_t *)(b + at) + k;
#pragma unroll 8
	for (uint64_t i = 0; i < nw; i++)
		v = tfs_sum_round(v, __ldg(w + 4 * i));
	/* Every thread of the warp takes part in the shuffles, those past the last piece too. */
	v0 = __shfl_sync(0xffffffffu, v, base + 0);
	v1 = __shfl_sync(0xffffffffu, v, base + 1);
	v2 = __shfl_sync(0xffffffffu, v, base + 2);
	v3 = __shfl_sync(0xffffffffu, v, base + 3);
	if (k != 0 || !plen)
		return;
	uint64_t h = tfs_sum_merge(v0, v1, v2, v3, plen);

	for (uint64_t i = nw * 32; i < plen; i++)
		h = tfs_sum_byte(h, b[at + i]);
	atomicAdd(acc, (unsigned long long)tfs_sum_mix(h));
}

extern "C" int tfs_cuda_sum_launch(const void *dev, uint64_t len, uint64_t off,
				   unsigned long long *acc, cudaStream_t stream)
{
	uint64_t np = (len + TFS_SUM_PIECE - 1) / TFS_SUM_PIECE;
	uint64_t blocks = (np * LANES + BLOCK - 1) / BLOCK;

	if (!len)
		return cudaSuccess;
	if (((uintptr_t)dev & 7) || blocks > 0x7fffffffu)
		return cudaErrorInvalidValue;
	sum_pieces<<<(unsigned)blocks, BLOCK, 0, stream>>>((const unsigned char *)dev, len, off,
							   acc);
	return cudaGetLastError();
}
