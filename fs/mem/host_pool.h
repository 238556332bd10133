/* The preallocated pool of a host-memory tier (host_pool.c, docs/tiers.md#preallocation):
 * shared-memory objects reserved at start ("segments"), out of which tensors are carved
 * at offsets, so that a create or a move into the tier makes no object and, on a device
 * backend, registers no memory with the driver (a segment is registered once, when it is
 * made). The objects themselves are the host backend's (backend_host.c makes, maps and
 * gives them back through tfs_host_seg_ops); this file decides which segment serves
 * whom.
 *
 * Isolation, as the CUDA pool's (pool.h): a client maps a whole object, so a segment
 * serves one key for its whole life: tensors of one owner, group, mode and directory
 * (tfs_host_pool_key). A segment nobody was ever given (the reserve) goes to the first
 * key that needs one; once given, it stays with its key, empty or not, until the tier is
 * short of memory (another key then needs a segment and none is idle: the empty ones of
 * every key are given back to the system and the request tried again).
 *
 * Runs: pages cannot move from one object to another, so a tensor larger than a segment
 * can be served from the reservation only by an object made that large beforehand. The
 * reserve is therefore laid out as tfs_pool_prealloc_piece says: about half of it in runs
 * (objects of 2 to TFS_POOL_RUN_MAX segments), the rest in single segments. A request
 * takes the smallest idle piece that holds it (a key's first small tensor a single
 * segment, a tensor of three segments a run of four), and a run, like a segment, goes
 * whole to its key.
 *
 * Zeroing: a create must read zeros, but a memset of a whole chunk costs as much for pages
 * fresh from the kernel (zeros already) as for pages a freed tensor left. Each segment
 * keeps the ranges that may hold something else (dirty_ranges.h): a freed chunk's, and
 * all of an object nobody vouches for (adopted after a restart, or found and given to the
 * reserve); a create zeroes only those of its chunk. A consumer that writes through its
 * mapping of the segment outside its own tensor (or after it was freed) writes where the
 * daemon does not look: it reaches only tensors of its key, which it may write anyway,
 * but a later create of that key may show its bytes, as in the cuda pool (cuda/zero.c;
 * docs/tiers.md#preallocation).
 *
 * Thread-safe: the pool's own mutex (mu), under which the callbacks run and every
 * segment's dirty ranges are read and changed; the memset of a create runs outside it
 * (the chunk is the caller's alone). */
#ifndef TFS_FS_HOST_POOL_H
#define TFS_FS_HOST_POOL_H

#include <stdint.h>
#include <sys/types.h>

#include "mem/pool.h"

struct tfs_host_pool;

struct tfs_host_seg_ops {
	/* A new object of size bytes (a multiple of the page size), owned by the daemon's
	 * user with mode 0600, its pages reserved and mapped: 0 with *seg (the backend's,
	 * opaque here) and *base, or -ENOSPC (the tier's cap or the machine's memory),
	 * -errno. */
	int (*make)(void *ctx, uint64_t size, void **seg, void **base);
	/* Gives an object of make (or of tfs_host_pool_adopt) back to the system. */
	void (*drop)(void *ctx, void *seg, uint64_t size);
	/* Lets go of this process's hold of an object (its mapping), leaving the object to
	 * whoever else holds it (the keeper: a daemon that stops is not the end of its
	 * memory). */
	void (*leave)(void *ctx, void *seg);
};

/* The segment size for a reservation of bytes: an eighth of it, between 2 MiB and 1 GiB,
 * whole pages. Tensors up to it are carved from segments; larger ones from runs, and
 * those larger than every idle run get an object of their own (fresh memory, counted
 * against the tier's cap, idle pieces given back first to make room). */
uint64_t tfs_host_pool_seg_size(uint64_t bytes, uint64_t page);

/* A pool of segments of seg bytes. NULL when out of memory. */
struct tfs_host_pool *tfs_host_pool_new(uint64_t seg, uint64_t page,
					const struct tfs_host_seg_ops *ops, void *ctx);
/* Lets go of every segment (leave), live tensors' included. */
void tfs_host_pool_destroy(struct tfs_host_pool *p);

/* Makes idle segments and runs until the pool holds at least bytes, what is missing laid
 * out by tfs_pool_prealloc_piece: 0, or make's error (what was made stays). */
int tfs_host_pool_reserve(struct tfs_host_pool *p, uint64_t bytes);
/* Whether size is that of a piece of a reserve: a segment or a run of them. */
int tfs_host_pool_piece_ok(const struct tfs_host_pool *p, uint64_t size);
/* An existing object of size bytes (left by an earlier run, adoption) joins the reserve
 * as an idle piece: 0, or -EINVAL when size is not a piece's (tfs_host_pool_piece_ok). Its
 * contents are whatever it held: counted dirty, so tfs_host_pool_alloc with zero set
 * zeroes what it hands out. Pieces of tfs_host_pool_reserve (make: fresh pages) count
 * clean. */
int tfs_host_pool_give(struct tfs_host_pool *p, void *seg, void *base, uint64_t size);

/* The key of a tensor: equal keys share segments. Stricter than tfs_pool_reader_key: the
 * object's owner and mode are the tensor's own, so a client opening it by name gets the
 * access the mount gives. */
struct tfs_pool_key tfs_host_pool_key(uid_t uid, gid_t gid, mode_t mode, uint64_t dir);

/* A tensor of bytes for key (room: tfs_pool_alloc's, space kept behind it to grow into),
 * its whole capacity zeroed when zero is set (else the caller writes every byte before
 * anyone reads it: a move): a memset of the ranges its segment counts dirty, nothing for
 * memory fresh from the kernel. Never waits for anything but mu. *seg is its segment or run (or its own object for one
 * larger than every idle run) and *first is set when that object was just given to key:
 * the caller sets the object's owner and mode. -ENOSPC, -ENOMEM, -EINVAL; nothing changed
 * on error. */
int tfs_host_pool_alloc(struct tfs_host_pool *p, struct tfs_pool_key key, uint64_t bytes,
			uint64_t room, int zero, struct tfs_pool_chunk **out, void **seg, int *first);
/* c's capacity counts dirty from now on (nothing is zeroed here: a move's free must not
 * wait for a memset). */
void tfs_host_pool_free(struct tfs_host_pool *p, struct tfs_pool_chunk *c);
/* c grown to bytes in place, into the free space right behind it (tfs_pool_grow): 0, or
 * -ENOSPC with nothing changed. What it grows into holds whatever was left there. */
int tfs_host_pool_grow(struct tfs_host_pool *p, struct tfs_pool_chunk *c, uint64_t bytes);
/* Where c lives: its segment, that segment's mapping in this process. */
void *tfs_host_pool_seg(const struct tfs_pool_chunk *c);

/* A restart takes back a tensor of an earlier run: bytes at off of the object seg (size
 * bytes, mapped at base). tfs_pool_adopt's contract; the object becomes the pool's on the
 * first success, all of its free space counted dirty. */
int tfs_host_pool_adopt(struct tfs_host_pool *p, struct tfs_pool_key key, void *seg,
			void *base, uint64_t size, uint64_t off, uint64_t bytes,
			struct tfs_pool_chunk **out);

/* held: bytes of every segment (the reservation, live or idle); live: the capacity of the
 * tensors carved. */
void tfs_host_pool_stats(struct tfs_host_pool *p, uint64_t *held, uint64_t *live);

#endif
