/* The host backend's private state (backend_host.c), shared with its preallocated pools
 * (backend_host_pool.c) and its small tensors packed into blocks (host_pack.c,
 * docs/handles.md); nothing else includes it. Counters of struct htier are read and
 * changed under the backend's lock (hb_charge). */
#ifndef TFS_FS_HOST_INTERNAL_H
#define TFS_FS_HOST_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "host_handle.h"
#include "mem/backend.h"
#include "mem/host_pool.h"
#include "mem/tiers.h"

struct tfs_pool;
struct tfs_pool_chunk;

/* An object the keeper held when this daemon started: a restart adopts it (host_adopt). */
struct found {
	uint64_t id;
	int fd;                  /* -1 once adopted */
	struct tfs_alloc *seg;   /* the pool segment made of it by a first adoption */
	struct tfs_alloc *blk;   /* adopted as a block of packed tensors (host_pack.c) */
	char name[TFS_HOST_PATH_MAX];
};

/* One tier's figures: the stand-in devices 0..ndev-1, then the host tier "cpu" (slot
 * ndev). Every tier is shared memory here; each has its own cap and counts. */
struct htier {
	uint64_t used, reserved, total, nallocs;
	/* --preallocate (docs/tiers.md#preallocation): the tier's tensors are carved from
	 * segments of its pool (host_pool.h); reserved then counts the segments. */
	struct tfs_host_pool *pool;
	uint64_t prealloc;
	struct tfs_backend *be;
	int slot;
};

struct tfs_backend {
	pthread_mutex_t lock;
	struct htier tier[TFS_HOST_DEVICES_MAX + 1];
	int ndev;
	size_t page;
	struct found *found;
	size_t nfound;
	/* Packing (host_pack.c): a pool per stand-in device, NULL where tensors are not
	 * packed (packing off, the host tier, the host tier of another backend). A tier
	 * --preallocate names carves every tensor from its own pool instead (htier.pool). */
	struct tfs_pool *pack[TFS_HOST_DEVICES_MAX];
};

struct tfs_alloc {
	int fd;
	void *base;
	uint64_t bytes, mapped;
	uint64_t kid;            /* the keeper's id; 0 without a keeper */
	int damaged;             /* a copy found pages gone: logged once */
	int spans;               /* host_span's lent (under be->lock) */
	int freed;               /* free() came while spans were lent: the last one frees */
	struct tfs_alloc *retired; /* memory a pooled or packed tensor left while spans were
				    * lent (hb_move_lent), each chained by its own retired:
				    * freed by the last span's end (under be->lock) */
	int slot;                /* its tier (struct htier) */
	void *kpriv;             /* without a keeper: keeper_host.c's state, in this process */
	char name[TFS_HOST_PATH_MAX];  /* the object's path in /dev/shm, as the handle has it */
	/* A tensor carved from a preallocated pool: its chunk and segment (whose kid and
	 * mapping it uses; fd is then -1 and base points into the segment). A packed tensor
	 * (host_pack.c): its chunk and block (whose fd and name it borrows; base is the
	 * block's mapping plus off, mapped its chunk's capacity); the pool's cookie, the
	 * block, is an object of its own that no tensor is. Both NULL: an object of its own. */
	struct tfs_pool_chunk *chunk;
	struct tfs_alloc *seg;
	struct tfs_alloc *blk;
	uint64_t off;            /* packed: the offset in the block, the handle's ipc_offset */
	int pinned;              /* a segment registered through the pin hook */
	uid_t uid;
	gid_t gid;
	mode_t mode;
	uint64_t dir;
};

static inline uint64_t hb_round_page(struct tfs_backend *be, uint64_t n)
{
	return (n + be->page - 1) / be->page * be->page;
}


/* backend_host.c. hb_chargeable: can bytes be charged to slot at all (-EFBIG, -ENOSPC).
 * hb_charge: adds used and reserved bytes to slot, -ENOSPC (nothing changed) when a
 * positive reserved passes its cap or the machine's available memory; hb_charge_force
 * without the cap. hb_obtain: a new object of size from the keeper (or made here without
 * one), filling a's fd, name and kid or kpriv; hb_give_back: the object goes (closes a's
 * fd). hb_copied: a guarded copy's result, a fault logged once per tensor.
 * hb_prefault: maps the pages a copy is about to write. */
int hb_chargeable(struct tfs_backend *be, int slot, uint64_t bytes);
int hb_charge(struct tfs_backend *be, int slot, int64_t used, int64_t reserved);
void hb_charge_force(struct tfs_backend *be, int slot, int64_t used, int64_t reserved);
int hb_obtain(struct tfs_alloc *a, uint64_t size, uid_t uid, gid_t gid, mode_t mode);
void hb_give_back(struct tfs_alloc *a);
int hb_copied(struct tfs_alloc *a, int rc);
void hb_prefault(void *p, size_t len);

/* backend_host_pool.c: the tiers --preallocate names (docs/tiers.md#preallocation).
 * hb_start_pools: makes each such tier's pool, and fills it when fill is set (a restart
 * fills it in host_adopt_end, once the keeper's objects are taken back); 0 or -errno,
 * logged. hb_stop_pools: lets go of them (the keeper keeps the objects).
 * hb_pool_alloc: a tensor carved from slot's pool (room: space to grow into), zeroed or
 * not; hb_pool_free; hb_pool_resize and hb_pool_set_owner: backend.h's resize and
 * set_owner of a pooled tensor (the handle may change). hb_take_over: a takes n's memory
 * and n a's, a's address staying. hb_pool_adopt: host_adopt of a record in a pooled tier,
 * its object found as f. hb_pool_take_found: f, which no record took, joins a pool's
 * reserve when it is a segment no key was ever given: 1, else 0 (the caller frees it). */
int hb_start_pools(struct tfs_backend *be, int fill);
void hb_stop_pools(struct tfs_backend *be);
int hb_pool_alloc(struct tfs_backend *be, int slot, uint64_t bytes, uint64_t room,
		  uid_t uid, gid_t gid, mode_t mode, uint64_t dir, int zero,
		  struct tfs_alloc **out);
void hb_pool_free(struct tfs_backend *be, struct tfs_alloc *a);
int hb_pool_resize(struct tfs_backend *be, struct tfs_alloc *a, uint64_t bytes);
int hb_pool_set_owner(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid, gid_t gid,
		      mode_t mode, uint64_t dir, unsigned flags);
void hb_take_over(struct tfs_alloc *a, struct tfs_alloc *n);
int hb_pool_adopt(struct tfs_backend *be, int slot, struct found *f, const struct tfs_meta *m,
		  struct tfs_alloc **out);
int hb_pool_take_found(struct tfs_backend *be, struct found *f);
/* set_owner of a pooled or packed tensor whose memory is lent (host_span) and must move
 * to memory of the new key: a takes new memory with the bytes copied, and its old memory
 * joins a->retired, freed when the last span ends (UCX still reads or writes it), not
 * before. The caller holds the tensor's io lock exclusively, so no span starts meanwhile.
 * 0, or alloc's -errno, -EIO (a page gone): nothing changed. */
int hb_move_lent(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid, gid_t gid,
		 mode_t mode, uint64_t dir);

/* host_pack.c. Packing is on for slot when be->pack[slot] is set. */

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
 * into an object of its own, which fills a from scratch.
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
