/* The host backend's memory as the host tier of another backend uses it
 * (mem/tiers_backend.c): where an allocation of tfs_backend_host is mapped in this process. */
#ifndef TFS_FS_HOST_MEM_H
#define TFS_FS_HOST_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mem/backend.h"

/* a's mapping (the shared-memory object, writable), valid until a is freed, resized or
 * moved; *mapped its length (whole pages, at least its bytes). Only for allocations of
 * tfs_backend_host. */
void *tfs_host_mem(struct tfs_alloc *a, uint64_t *mapped);

/* a lies in a segment of a preallocated pool that is registered with the driver through
 * the pin hook, for the segment's life: copies may DMA to and from it as it is. */
int tfs_host_mem_pinned(struct tfs_alloc *a);

/* host_alloc without zeroing what a pool hands out: the caller writes every byte before
 * anyone may read it (a move into the tier). */
int tfs_host_alloc_uninit(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid,
			  gid_t gid, mode_t mode, uint64_t dir, struct tfs_alloc **out);

/* How the host backend registers its pool segments with a device driver (the tiers
 * backend's host_register of the cuda backend), once each, when made or taken back: set
 * before the host backend's init; reg 0 or an error (the segment stays usable, its copies
 * staged); unreg before the segment is unmapped. NULL: none. */
void tfs_host_pin_hook(int (*reg)(void *ctx, void *p, size_t len),
		       void (*unreg)(void *ctx, void *p), void *ctx);

#endif
