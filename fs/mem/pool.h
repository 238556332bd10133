/* A sub-allocator of device memory blocks, in plain C (no CUDA calls) so it can be tested
 * on a machine without a GPU. The backend supplies two callbacks that obtain and release
 * a block (cudaMalloc/cudaFree); the pool carves tensors out of blocks and keeps freed
 * space for reuse.
 *
 * Isolation: whoever holds a CUDA IPC handle maps the whole cudaMalloc block, so every
 * block belongs to one key (tfs_pool_reader_key: who may read the tensor through the
 * mount) and holds only allocations of that key, for its whole life.
 *
 * Sizes (defaults, see tfs_pool_config_default):
 *  - every chunk is a multiple of 512 bytes and starts 512-aligned inside its block;
 *  - small   (<= 1 MiB):  carved from 2 MiB blocks. The driver backs allocations with 2 MiB
 *                         pages, so a cudaMalloc of its own would cost a 4 KiB tensor 2 MiB;
 *                         up to 1 MiB, one tensor uses at least half of such a block;
 *  - medium  (<= 16 MiB): carved from segments of 32 MiB, doubled while the new one stays
 *                         at most half of the key's medium segments, up to 256 MiB
 *                         (medium_grow): a key that receives a model's hundreds of layer
 *                         tensors asks the backend for a dozen blocks per 1.7 GB, not
 *                         one per 32 MiB (each a cudaMalloc in the keeper, an IPC open
 *                         and a zeroing: about 0.9 ms on the H200, a fifth of a 1.7 GB
 *                         load of 614 tensors), and one with few such tensors keeps
 *                         32 MiB segments;
 *  - large:               a block of its own, rounded up to 2 MiB (asking the driver for
 *                         less would not save device memory).
 *  Classes do not share blocks (see find_fit in pool.c for the measurements behind it).
 *  Free chunks are coalesced with their neighbours and found by best fit. A block with
 *  nothing live stays cached (up to cache_max bytes per pool, oldest released first) and
 *  the whole cache is released, and the block request retried once, when a block cannot
 *  be obtained. For 10,000 tensors of log-uniform sizes 4 KiB..64 MiB, reserved/requested
 *  is about 1.02 (tests/unit/test_pool.c).
 *
 * Thread-safe: one mutex per pool; the callbacks run under it. */
#ifndef TFS_FS_POOL_H
#define TFS_FS_POOL_H

#include <stdint.h>

struct tfs_pool;
struct tfs_pool_chunk;      /* a live allocation */

/* Who may share a block: allocations with equal keys may, others never do. */
struct tfs_pool_key {
	uint64_t a, b, c;
};

/* The key of a tensor of owner uid, group gid and permission bits mode in the directory
 * whose identity is dir: equal keys mean the same readers through the mount. The owner,
 * the read bits and, when it decides who reads (group and others do not both read or both
 * not), the group settle who passes the tensor's own check; the directory settles who can
 * reach it, since two tensors of one directory lie behind the same search permissions on
 * the same path, whatever chmod or rename later does to that path's directories. A
 * directory is its dir record's inode number, random and kept by renames, so a directory
 * removed and made again under the same name is another one. */
struct tfs_pool_key tfs_pool_reader_key(uint32_t uid, uint32_t gid, uint32_t mode,
					uint64_t dir);
/* The key a daemon before directory keys gave a tensor (owner, and who of group and others
 * reads): for its records (dir 0) when a restart adopts their blocks, which may mix tensors
 * that tfs_pool_reader_key keeps apart. Never equal to a tfs_pool_reader_key key. */
struct tfs_pool_key tfs_pool_legacy_key(uint32_t uid, uint32_t gid, uint32_t mode);

struct tfs_pool_block_ops {
	/* Obtain *size bytes (a multiple of large_round or small/medium block size); return 0
	 * with *base (the address, never 0) and *cookie (the backend's per-block data), or
	 * -ENOSPC/-ENOMEM when memory is short (the pool then releases its cache and tries
	 * once more), or another negative errno. The backend may hand out a larger block (a
	 * preallocated run, tfs_pool_prealloc_piece): it then sets *size to its size, a
	 * multiple of align; the pool carves the whole of it. */
	int (*get)(void *ctx, uint64_t *size, uint64_t *base, void **cookie);
	void (*put)(void *ctx, uint64_t base, uint64_t size, void *cookie);
};

struct tfs_pool_config {
	uint64_t align;         /* chunk granularity and alignment, power of two */
	uint64_t small_max;     /* requests up to this come from small blocks */
	uint64_t small_block;
	uint64_t medium_max;    /* requests up to this come from medium segments */
	uint64_t medium_block;  /* a key's first medium block */
	unsigned medium_grow;   /* its next: medium_block doubled while at most half of its
				 * medium blocks' bytes, at most this many times (at most 8) */
	uint64_t large_round;   /* large blocks are rounded up to this */
	uint64_t near_fit;      /* any free chunk no larger than request + near_fit may serve it */
	uint64_t cache_max;     /* bytes of blocks with nothing live kept for reuse */
};

struct tfs_pool_stats {
	uint64_t used;          /* requested bytes of live allocations */
	uint64_t reserved;      /* bytes of blocks held */
	uint64_t cached;        /* bytes of blocks held with nothing live */
	uint64_t nallocs;       /* live allocations */
	uint64_t nblocks;       /* blocks held */
	uint64_t gets, puts;    /* callback calls so far */
};

void tfs_pool_config_default(struct tfs_pool_config *cfg);

/* Preallocated pools (--preallocate, docs/tiers.md#preallocation): a reservation of n
 * segments is made as objects (blocks) of several sizes, since a block is what one key
 * gets whole (a handle maps all of it) and memory cannot move between blocks: about half
 * of the segments in runs of up to TFS_POOL_RUN_MAX segments each, one block each, which
 * serve tensors larger than a segment, the rest as single segments, which serve keys that
 * need little. tfs_pool_prealloc_piece: the number of segments of the i-th block of that
 * layout (runs first, largest first), 0 past its end. Pure. */
#define TFS_POOL_RUN_MAX 4
uint64_t tfs_pool_prealloc_piece(uint64_t n, uint64_t i);
/* The configuration of a pool of preallocated blocks of seg bytes (one class: every
 * tensor, whatever its size, may go into any free space of its key's blocks, best fit,
 * and empty blocks stay with their keys). */
void tfs_pool_config_prealloc(struct tfs_pool_config *cfg, uint64_t seg);

/* cfg NULL means the defaults. Returns NULL when out of memory or cfg is inconsistent. */
struct tfs_pool *tfs_pool_new(const struct tfs_pool_config *cfg,
			      const struct tfs_pool_block_ops *ops, void *ctx);
/* Releases every block, live allocations included (their chunks become invalid). */
void tfs_pool_destroy(struct tfs_pool *p);

/* Allocate bytes (> 0) for key. room >= bytes asks for a free stretch of room bytes of
 * which the first bytes are taken and the rest left free right behind the chunk, so that
 * tfs_pool_resize can later grow it in place (0 means room = bytes). -ENOSPC when no block
 * can be obtained, -ENOMEM when the pool's own bookkeeping cannot be allocated, -EINVAL
 * for bytes 0; nothing is changed on error. */
int tfs_pool_alloc(struct tfs_pool *p, struct tfs_pool_key key, uint64_t bytes, uint64_t room,
		   struct tfs_pool_chunk **out);
void tfs_pool_free(struct tfs_pool *p, struct tfs_pool_chunk *c);

/* Change the requested size of c. Shrinking and growing into c's spare capacity or the free
 * chunk right behind it happen in place: returns 0 with *moved NULL. Otherwise a new chunk
 * of the same key with room tfs_pool_growth_room(old, new_bytes) (or exactly new_bytes when
 * that does not fit) is returned in *moved and c is left as it was: the caller copies the
 * bytes over and frees c. On error nothing changed. */
int tfs_pool_resize(struct tfs_pool *p, struct tfs_pool_chunk *c, uint64_t new_bytes,
		    struct tfs_pool_chunk **moved);

/* tfs_pool_resize in place only: 0, or -ENOSPC (nothing changed) when c would have to
 * move; -EINVAL for 0 bytes. */
int tfs_pool_grow(struct tfs_pool *p, struct tfs_pool_chunk *c, uint64_t new_bytes);

/* The room asked for when a growing allocation must move: at least 1.25 x the old size, so
 * that growing a file by appends copies each byte a bounded number of times (about 5 on
 * average) instead of once per append. */
uint64_t tfs_pool_growth_room(uint64_t old_bytes, uint64_t new_bytes);

/* Give c a new key. When c is the only live allocation of its block, the block moves to the
 * new key and returns 0; the block is then retired: no other allocation is placed in it and
 * it is released when c is freed (holders of the old key may still map it). When the
 * block holds other allocations it returns -EBUSY: the caller allocates under the new key,
 * copies and frees c. Equal key: 0. */
int tfs_pool_rekey(struct tfs_pool *p, struct tfs_pool_chunk *c, struct tfs_pool_key key);

/* Restart after a crash: the pool takes back what an earlier process of the daemon made.
 * tfs_pool_adopt: the live allocation of bytes at offset off of the block at base (size
 * bytes, the backend's cookie, obtained through ops.get by that process), for key. The
 * first adoption in a block brings the block in, with everything else in it free; its class
 * follows from its size. -EINVAL when it does not fit: the block has another size, cookie
 * or key, or the range overlaps a live allocation or leaves the block (a record that
 * contradicts another); -ENOMEM. On error nothing changed (a block brought in by this call
 * is not the pool's: the caller still owns its memory). tfs_pool_adopt_end, after the last
 * adoption: calls zero for each free range of the blocks, whose bytes nobody vouches for
 * (a consumer may have written past its tensor), under the pool's lock. */
int tfs_pool_adopt(struct tfs_pool *p, struct tfs_pool_key key, uint64_t base, uint64_t size,
		   void *cookie, uint64_t off, uint64_t bytes, struct tfs_pool_chunk **out);
void tfs_pool_adopt_end(struct tfs_pool *p, void (*zero)(void *ctx, uint64_t addr, uint64_t len),
			void *ctx);

/* Release every cached block. */
void tfs_pool_trim(struct tfs_pool *p);

void tfs_pool_get_stats(struct tfs_pool *p, struct tfs_pool_stats *st);

/* Walks every block and chunk and checks the invariants (chunks tile each block, no two
 * adjacent free chunks, index and counters agree). 0 or -EFAULT with a message in buf. */
int tfs_pool_check(struct tfs_pool *p, char *buf, unsigned buflen);

/* Accessors of a live chunk; stable until it is freed, resized or rekeyed by its owner. */
uint64_t tfs_pool_chunk_addr(const struct tfs_pool_chunk *c);     /* block base + offset */
uint64_t tfs_pool_chunk_offset(const struct tfs_pool_chunk *c);   /* offset inside block */
uint64_t tfs_pool_chunk_bytes(const struct tfs_pool_chunk *c);    /* requested size */
uint64_t tfs_pool_chunk_capacity(const struct tfs_pool_chunk *c);
uint64_t tfs_pool_chunk_block_base(const struct tfs_pool_chunk *c);
uint64_t tfs_pool_chunk_block_size(const struct tfs_pool_chunk *c);
void *tfs_pool_chunk_cookie(const struct tfs_pool_chunk *c);
struct tfs_pool_key tfs_pool_chunk_key(const struct tfs_pool_chunk *c);

#endif
