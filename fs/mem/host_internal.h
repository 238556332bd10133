/* What the host backend's two files share: backend_host.c (an object per tensor, the
 * backend's operations) and host_pack.c (small tensors packed into blocks, docs/handles.md).
 * Private to fs/mem. */
#ifndef TFS_FS_HOST_INTERNAL_H
#define TFS_FS_HOST_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "host_handle.h"
#include "mem/backend.h"
#include "mem/tiers.h"

struct tfs_pool;
struct tfs_pool_chunk;

/* An object the keeper held when this daemon started: a restart adopts it (host_adopt). */
struct found {
	uint64_t id;
	int fd;                  /* -1 once adopted */
	struct tfs_alloc *blk;   /* adopted as a block of packed tensors (host_pack.c) */
	char name[TFS_HOST_PATH_MAX];
};

/* One tier's figures: the stand-in devices 0..ndev-1, then the host tier "cpu" (slot
 * ndev). Every tier is shared memory here; each has its own cap and counts. */
struct htier {
	uint64_t used, reserved, total, nallocs;
};

struct tfs_backend {
	pthread_mutex_t lock;
	struct htier tier[TFS_HOST_DEVICES_MAX + 1];
	int ndev;
	size_t page;
	struct found *found;
	size_t nfound;
	/* Packing (host_pack.c): a pool per stand-in device, NULL where tensors are not
	 * packed (packing off, the host tier, the host tier of another backend). */
	struct tfs_pool *pool[TFS_HOST_DEVICES_MAX];
};

/* A tensor's memory, or a block of packed tensors (the pool's cookie: an object of its
 * own that no tensor is). A packed tensor (chunk set) borrows its block's fd and name;
 * base is the block's mapping plus off, mapped its chunk's capacity. */
struct tfs_alloc {
	int fd;
	void *base;
	uint64_t bytes, mapped;
	uint64_t kid;            /* the keeper's id; 0 without a keeper */
	int damaged;             /* a copy found pages gone: logged once */
	int slot;                /* its tier (struct htier) */
	void *kpriv;             /* without a keeper: keeper_host.c's state, in this process */
	char name[TFS_HOST_PATH_MAX];  /* the object's path in /dev/shm, as the handle has it */
	struct tfs_pool_chunk *chunk;  /* packed: its place in the block; NULL otherwise */
	struct tfs_alloc *blk;   /* packed: the block */
	uint64_t off;            /* packed: the offset in the block, the handle's ipc_offset */
};

/* backend_host.c's helpers for host_pack.c. */
uint64_t tfs_host_round_page(struct tfs_backend *be, uint64_t n);
/* Charges used and reserved bytes to the tier of slot; a positive reserved is checked
 * against the tier's cap and the memory available: -ENOSPC, nothing charged. */
int tfs_host_charge(struct tfs_backend *be, int slot, int64_t used, int64_t reserved);
/* Charges without the cap (adopted memory). */
void tfs_host_charge_force(struct tfs_backend *be, int slot, int64_t used, int64_t reserved);
/* A new object of size bytes (pages reserved) for the owner, mode 'mode & 0666', from the
 * keeper (or made here without one): fills a->fd, a->name, a->kid or a->kpriv. 0 or
 * -errno, nothing made. */
int tfs_host_obtain(struct tfs_alloc *a, uint64_t size, uid_t uid, gid_t gid, mode_t mode);
/* The object of a goes (closes a->fd; the keeper removes it). */
void tfs_host_give_back(struct tfs_alloc *a);
/* The pages of [p, p+len) mapped for writing in one call (best effort). */
void tfs_host_prefault(void *p, size_t len);

/* host_pack.c. Packing is on for slot when be->pool[slot] is set. */

/* Makes the pools (tfs_mem.host_pack: the largest tensor packed, 0 for none). 0, -ENOMEM. */
int tfs_host_pack_init(struct tfs_backend *be);
void tfs_host_pack_fini(struct tfs_backend *be);
/* bytes for the owner in directory dir, packed into a block of that owner, mode and
 * directory: 0 with *a filled (charged: used, and reserved per block), -E2BIG when this
 * tensor is not packed (too large, packing off, or no block fits under the cap: the caller
 * makes an object of its own), another -errno. */
int tfs_host_pack_alloc(struct tfs_backend *be, int slot, uint64_t bytes, uid_t uid,
			gid_t gid, mode_t mode, uint64_t dir, struct tfs_alloc *a);
/* Gives a packed tensor's chunk back (the block goes with its last tensor, or stays cached
 * for reuse); uncharges its bytes. a itself is the caller's. */
void tfs_host_pack_free(struct tfs_backend *be, struct tfs_alloc *a);
/* resize for a packed tensor: in place, into another chunk, or (above the packing size)
 * into an object of its own, made by make_own(a, bytes) which fills a from scratch.
 * Zeroes what grows. On error a is unchanged. */
int tfs_host_pack_resize(struct tfs_backend *be, struct tfs_alloc *a, uint64_t bytes);
/* set_owner for a packed tensor (see backend.h): alone in its block, the block takes the
 * new owner and mode and is retired from packing; else a moves to a block of the new key
 * (its handle and offset change), or -EBUSY with TFS_BE_NOMOVE. */
int tfs_host_pack_set_owner(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid,
			    gid_t gid, mode_t mode, uint64_t dir, unsigned flags);
/* A restart: the record m names a packed tensor in the object f (when it does: 1 with *a
 * filled and f's descriptor taken by its block), 0 when it names an object of its own,
 * -errno when it contradicts what the block holds. */
int tfs_host_pack_adopt(struct tfs_backend *be, int slot, const struct tfs_meta *m,
			struct found *f, struct tfs_alloc *a);
/* After the last adopt: the blocks' free ranges are the pool's again. */
void tfs_host_pack_adopt_end(struct tfs_backend *be);
/* Bytes of blocks held with no tensor (not counted as reserved in stats). */
uint64_t tfs_host_pack_cached(struct tfs_backend *be, int slot);
/* Gives cached blocks back (an allocation of its own did not fit the cap). */
void tfs_host_pack_trim(struct tfs_backend *be, int slot);

#endif
