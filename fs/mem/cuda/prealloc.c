/* --preallocate of GPUs (docs/tiers.md#preallocation): a device's pool reserved at start as
 * segments and runs of segments (pool.h's layout), blocks made (cudaMalloc, or the
 * keeper's) and zeroed once, that no key had yet; the pool carves every tensor up to the
 * largest run out of them, so a create or a move onto the device makes no block. A
 * segment or run goes whole to the first key that needs it (a CUDA IPC handle maps the
 * whole block: pool.h's isolation) and stays with it, empty or not, until the device runs
 * short. The reserve is filled at start (alloc.c, adopt_end), before any
 * allocation, and read and changed afterwards only by block_get under the pool's lock. A
 * leaf: the blocks are made and dropped by the callers. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "mem/cuda/cuda_internal.h"

int tfs_cuda_prealloc_cfg(struct cdev *d, struct tfs_pool_config *cfg)
{
	const struct tfs_backend *be = d->be;
	uint64_t want, seg;

	if (d->ordinal >= TFS_DEVICES_MAX || !(be->prealloc.devmask >> d->ordinal & 1))
		return 0;
	want = be->prealloc.dev[d->ordinal];
	seg = want / 8;
	seg = seg < 2 * MiB ? 2 * MiB : seg > GiB ? GiB : seg;
	seg = (seg + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
	/* One class of segments and runs, kept with their keys when empty (a tensor that
	 * sleeps and wakes finds its memory where it left it); a tensor larger than every
	 * idle run gets a block of its own. */
	tfs_pool_config_prealloc(cfg, seg);
	d->seg = seg;
	d->prealloc = want;
	return 1;
}

int tfs_cuda_prealloc_push(struct cdev *d, struct cblock *cb)
{
	if (d->nidle == d->idle_cap) {
		size_t cap = d->idle_cap ? d->idle_cap * 2 : 16;
		struct cblock **n = realloc(d->idle, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		d->idle = n;
		d->idle_cap = cap;
	}
	d->idle[d->nidle++] = cb;
	return 0;
}

struct cblock *tfs_cuda_prealloc_take(struct cdev *d, uint64_t size)
{
	size_t best = d->nidle;
	struct cblock *cb;

	for (size_t i = 0; i < d->nidle; i++)
		if (d->idle[i]->size >= size &&
		    (best == d->nidle || d->idle[i]->size < d->idle[best]->size))
			best = i;
	if (best == d->nidle)
		return NULL;
	cb = d->idle[best];
	d->idle[best] = d->idle[--d->nidle];
	return cb;
}

struct cblock *tfs_cuda_prealloc_pop(struct cdev *d)
{
	return d->nidle ? d->idle[--d->nidle] : NULL;
}

void tfs_cuda_prealloc_end(struct cdev *d)
{
	free(d->idle);
	d->idle = NULL;
	d->nidle = d->idle_cap = 0;
}
