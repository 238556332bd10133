/* The CUDA backend, private to fs/mem/cuda/: tensors live in device memory obtained with
 * cudaMalloc and carved up by fs/mem/pool.c; other processes map them with CUDA IPC
 * handles; read/write copy through pinned staging buffers. Only this folder includes CUDA headers.
 *
 * Per device used (set up on first use; the default device in init()):
 *  - one pool of blocks. Pool keys say who may share a block: an IPC handle maps its whole
 *    cudaMalloc block, so tensors share a block only when exactly the same users can read
 *    them through the mount: same owner, read bits and (when it decides) group, and the
 *    same directory, which settles who can reach them (tfs_pool_reader_key). A handle
 *    read by one user then exposes nothing that user could not read through the files
 *    anyway.
 *  - STAGING_SLOTS slots, each a pinned buffer of SLOT_BYTES (one cudaHostAlloc for all:
 *    pinning costs ~50 ms per 64 MiB, so it is done once) and its own stream. A copy takes
 *    a free slot (waiting on a condition variable when all are busy), moves the data in
 *    pieces through a ring of RING sub-buffers so that the CPU copy of one piece overlaps
 *    the DMA of the previous, and synchronises its stream before it returns the slot.
 *
 * The files, each calling only those before it: err.c (tfs_cuda_fail: driver errors
 * reported), areas.c (the io region and the read areas), device.c (the devices and their
 * staging slots), copy.c (copies through the slots, read_fd), zero.c (the zeroing thread:
 * why memory from the pool reads as zeros), alloc.c (allocations and the pool's blocks,
 * resize, IPC handles, owner moves, stats), marks.c (written marks), vmm.c (--memory vmm), keeper_mem.c,
 * backend.c (start-up and end, the operations table).
 *
 * Locks (level 3 of the order in tensors/tensors.h, taken inside backend calls only): per
 * device mu (free slots, the blocks' handle caches) and zmu (the zeroing list); per backend
 * init_mu (device start-up), marks_mu and areas_mu; and each pool's own. init_mu is held
 * across a device's start-up. The pool's callbacks run under the pool's lock and take a
 * slot (mu) to zero a new block. The zeroing thread takes the pool's lock to give chunks
 * back, and the keeper client's for the work tfs_cuda_later hands it, holding
 * none of these. Otherwise none of these is taken while another is held.
 */
#ifndef TFS_FS_CUDA_INTERNAL_H
#define TFS_FS_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "mem/backend.h"
#include "mem/pool.h"

#define KiB ((uint64_t)1024)
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)

#define STAGING_SLOTS 16                        /* concurrent copies per device */
#define RING 4                                  /* pieces in flight per copy */
#define PIECE_MAX (2 * MiB)
#define SLOT_BYTES ((size_t)(RING * PIECE_MAX)) /* 8 MiB: 128 MiB pinned per device */

_Static_assert(sizeof(cudaIpcMemHandle_t) == TFS_IPC_HANDLE_SIZE, "IPC handle size");
_Static_assert(sizeof(cudaIpcEventHandle_t) == TFS_IPC_HANDLE_SIZE, "IPC event handle size");
#define MARKS_MAX 64

struct slot {
	uint8_t *buf;
	cudaStream_t stream;
	cudaEvent_t ev[RING];
};

struct cdev {
	int ordinal;
	struct tfs_backend *be;
	_Atomic uint64_t reserved;      /* cudaMalloc'ed bytes of this device, against be->cap */
	/* --memory vmm: tensors of their own allocation (not the pool's, whose statistics
	 * count packed ones): allocations' bytes, tensors' bytes, how many (tfs_cuda_stats) */
	_Atomic uint64_t vmm_reserved, vmm_used, vmm_n;
	struct tfs_pool *pool;
	uint8_t *staging;
	struct slot slots[STAGING_SLOTS];
	int free_slot[STAGING_SLOTS];
	int nfree;
	pthread_mutex_t mu;     /* the free slots and the blocks' handle caches */
	pthread_cond_t cv;
	/* Chunks freed, waiting to be zeroed and given back to the pool (zthread). */
	struct zitem *zhead;
	int zbusy, zstop, zstarted;
	pthread_mutex_t zmu;
	pthread_cond_t zwork, zdone;
	pthread_t zthread;
	cudaStream_t zstream;
	/* --preallocate (prealloc.c): segments of seg bytes and runs of them (pool.h's
	 * layout) made at start that no key had yet, taken by block_get under the pool's
	 * lock. seg 0: not preallocated. */
	uint64_t seg, prealloc;
	struct cblock **idle;
	size_t nidle, idle_cap;
};

/* A freed chunk of the pool to zero and give back, or (fn) other work to do off its
 * caller's path: fn(d, arg). */
struct zitem {
	struct zitem *next;
	struct tfs_pool_chunk *c;
	void (*fn)(struct cdev *d, void *arg);
	void *arg;
};

/* The pool's per-block cookie. */
struct cblock {
	void *ptr;
	uint64_t size;          /* made by tfs_cuda_block_new: its size (the reserve's pieces
				 * differ, prealloc.c) */
	int have_handle;
	cudaIpcMemHandle_t handle;
	uint64_t kid;           /* the keeper's id: ptr is its block, opened here; 0: ours */
	struct tfs_vmm *vmm;    /* --memory vmm: the block is this VMM allocation (ptr its
				 * address; handle and kid unused) */
};

/* A block the keeper held when this daemon started (a restart): adopted by tfs_cuda_adopt
 * or freed by tfs_cuda_adopt_end. */
struct kfound {
	uint64_t id, size;
	int device;
	int used;               /* a tensor of it was adopted: the pool owns cb */
	cudaIpcMemHandle_t handle;
	struct cblock *cb;      /* opened here, NULL until a record names it */
	int vfd;                /* a VMM allocation's descriptor (--memory vmm), else -1 */
};

/* The most physical chunks a VMM tensor grows in place to (docs/vmm.md#growth): one more
 * per growth past its allocation; past the last, growth moves it (EBUSY while held). The
 * handle socket's reply carries at most this many descriptors. */
#define TFS_VMM_CHUNKS_MAX 16

/* One physical allocation of a VMM tensor: the driver's handle, its exported descriptor
 * (this daemon's hold), the keeper's id of it (0: made here), whether it is mapped at its
 * place in the tensor's reservation. */
struct tfs_vmm_chunk {
	uint64_t size;               /* a multiple of the granularity */
	unsigned long long h;        /* CUmemGenericAllocationHandle, imported or made here */
	int have_h, mapped;
	int fd;
	uint64_t kid;
};

/* A tensor's VMM memory (--memory vmm, vmm.c): n chunks mapped one after the other at va,
 * in a reservation of resv bytes that this daemon made, read-write for every device. The
 * first chunk is the allocation the tensor was made with; growth in place adds one
 * (docs/vmm.md#growth) and may move va (a larger reservation, every chunk mapped again):
 * other processes' mappings of the chunks stay where they are. */
struct tfs_vmm {
	uint64_t va;                 /* CUdeviceptr */
	uint64_t resv;               /* the reservation at va */
	uint64_t size;               /* the chunks' sizes added */
	uint64_t bytes;              /* the tensor's */
	int n;
	struct tfs_vmm_chunk c[TFS_VMM_CHUNKS_MAX];
	uint8_t handle[TFS_IPC_HANDLE_SIZE];   /* TFS_VMM_MAGIC ... (meta.h): the first
						* chunk's id, size the whole size */
};

struct tfs_alloc {
	struct cdev *dev;
	struct tfs_pool_chunk *chunk;   /* NULL for a VMM allocation */
	struct tfs_vmm *vmm;            /* --memory vmm: the tensor's own allocation */
	struct tfs_pool_key key;
};

/* Milliseconds of the monotonic clock, for the log's timings of moves. */
static inline double tfs_cuda_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The device address and size of a's memory, whichever kind it is. */
static inline uint64_t tfs_cuda_addr(const struct tfs_alloc *a)
{
	return a->vmm ? a->vmm->va : tfs_pool_chunk_addr(a->chunk);
}

static inline uint64_t tfs_cuda_bytes(const struct tfs_alloc *a)
{
	return a->vmm ? a->vmm->bytes : tfs_pool_chunk_bytes(a->chunk);
}

/* An interprocess event a producer marked a tensor written with, opened here once and
 * kept for the following reads (opening costs a driver call; waiting on a completed event
 * costs nothing). */
struct mark {
	cudaIpcEventHandle_t handle;
	cudaEvent_t ev;
	int device, users;
	uint64_t used;               /* last use, for eviction */
};

struct tfs_backend {
	pthread_mutex_t marks_mu;
	struct mark marks[MARKS_MAX];
	int nmarks;
	uint64_t mark_clock;
	int ndev, default_dev;
	uint64_t cap;                           /* per device; 0: its memory is the limit */
	struct tfs_tier_sizes caps;             /* set_caps: devices with a cap of their own */
	struct tfs_tier_sizes prealloc;         /* set_caps: devices with a pool reserved */
	uint64_t *dev_total;                    /* memory of each device, by ordinal */
	pthread_mutex_t init_mu;
	_Atomic(struct cdev *) *devs;
	uint8_t *io;                            /* io_region(): pinned, portable */
	size_t io_bytes;
	pthread_mutex_t areas_mu;
	struct rarea *areas;                    /* read_fd()'s, one per thread that read */
	unsigned gen;                           /* tells this backend's areas (my_gen) */
	struct kfound *found;                   /* start-up only: the keeper's inventory */
	size_t nfound;
	/* What a device's start-up (device.c) runs, handed down by init (backend.c) so that
	 * device.c calls none of the files above it: the pool's blocks (alloc.c) and the
	 * zeroing thread (zero.c). */
	const struct tfs_pool_block_ops *block_ops;
	void *(*zero_main)(void *dev);
};

/* Where read_fd() puts a read for the FUSE reply to splice from: a thread's own memfd,
 * mapped and pinned. The thread's next read_fd() reuses it, by which time the reply that
 * spliced from it has been copied into the reader's buffer. */
#define RAREA_BYTES ((size_t)1 << 20)   /* max_read */
struct rarea {
	struct rarea *next;
	int fd;
	void *p;
};

/* ---- device.c ---- */

/* Logs a failed CUDA call (what, on device) and returns it as a negative errno: -ENOMEM,
 * -EINVAL for a bad or absent device, -EIO otherwise. Clears the error unless sticky. */
int tfs_cuda_fail(cudaError_t e, const char *what, int device);

/* The device for ordinal (negative: be's default), set up on first use under be->init_mu,
 * and made current on the calling thread. *out belongs to be (freed by fini). 0 or a
 * negative errno: -EINVAL for an ordinal past the last, else what the driver or start-up
 * failed with. */
int tfs_cuda_dev_get(struct tfs_backend *be, int ordinal, struct cdev **out);

/* set_caps on a device set up before it (init's default device): its pool made again with
 * the --preallocate segments it now names, while it holds nothing (before adoption). 0,
 * or -ENOMEM with the pool as it was. */
int tfs_cuda_dev_repool(struct cdev *d);

/* Stops d's zeroing thread and frees d with its pool and slots (fini; a failed start-up).
 * NULL: nothing. */
void tfs_cuda_dev_destroy(struct cdev *d);
/* vmm_caps.c: logs whether device ordinal offers VMM, POSIX fd and fabric handles
 * (issue 36). Needs the device's context current; nothing fails. */
void tfs_cuda_vmm_report(int ordinal);

/* Makes d current on the calling thread, which every call on d's memory needs first (FUSE
 * calls come from many threads). 0 or a negative errno. */
int tfs_cuda_dev_current(struct cdev *d);

/* The cap of device ordinal: its own --max-bytes, else its --preallocate when it has no
 * cap otherwise (the pool is the device), else the one size; 0 for none. Legacy blocks
 * (alloc.c) and VMM allocations (vmm.c) are counted against it. */
uint64_t tfs_cuda_cap(const struct tfs_backend *be, int ordinal);

/* A free staging slot of d, waiting under d->mu while all are busy. The caller owns it
 * until tfs_cuda_slot_put, which it calls only once nothing on the slot's stream can
 * still touch the buffer. */
struct slot *tfs_cuda_slot_get(struct cdev *d);
void tfs_cuda_slot_put(struct cdev *d, struct slot *s);

/* ---- sum_kernel.cu (where nvcc built it: TFS_HAVE_SUM_KERNEL) ---- */

/* Queues on stream the addition, to the counter *acc in device memory, of the checksum
 * pieces (core/tier.h) of the len bytes at the device address dev (8-byte aligned), which
 * lie at offset off (a multiple of TFS_SUM_PIECE) of their tensor. cudaSuccess, or the
 * launch's error (cudaErrorInvalidValue for a misaligned dev). */
int tfs_cuda_sum_launch(const void *dev, uint64_t len, uint64_t off, unsigned long long *acc,
			cudaStream_t stream);

/* ---- vmm.c (--memory vmm; docs/vmm.md) ---- */

/* tfs_cuda_set_vmm's: new tensors are VMM allocations. */
extern int tfs_cuda_vmm;

/* Tensors up to this size are packed, in --memory vmm, into shared VMM allocations that
 * the pool carves as it carves legacy blocks (one key per block, pool.h); larger ones get
 * an allocation of their own. The pool's small class: its blocks are the 2 MiB of the
 * allocation granularity, which a tensor of its own would take however small. */
#define TFS_VMM_PACK_MAX (1ull << 20)

/* The pool's blocks in --memory vmm: *out a new zeroed VMM allocation of at least size
 * bytes on d (current), counted in d->reserved; put undoes it. 0 or -errno (-ENOSPC when
 * the device or be->cap is full). */
int tfs_cuda_vmm_block_get(struct cdev *d, uint64_t size, struct tfs_vmm **out);
void tfs_cuda_vmm_block_put(struct cdev *d, struct tfs_vmm *v);
/* A restart: *out the keeper's allocation kid of size with handle (its descriptor fd, the
 * caller's) as a block for the pool to adopt tensors of, counted in d->reserved. 0 or
 * -errno. */
int tfs_cuda_vmm_block_adopt(struct cdev *d, int fd, uint64_t kid, uint64_t size,
			     const uint8_t handle[TFS_IPC_HANDLE_SIZE], struct tfs_vmm **out);

/* a->vmm: a new zeroed allocation of at least bytes on d, mapped here, exported as a
 * descriptor. 0, -ENOSPC (device full or be->cap), -EIO (driver), -ENOSYS (no libcuda VMM
 * API); on error a is unchanged. */
int tfs_cuda_vmm_alloc(struct cdev *d, uint64_t bytes, struct tfs_alloc *a);
/* One of the keeper's allocations that a restart adopts: its descriptor (the caller's),
 * the keeper's id, its size. */
struct tfs_vmm_part {
	int fd;
	uint64_t kid, size;
};
/* A restart: a->vmm from the keeper's allocations parts[0..n) (a tensor's chunks in
 * order: the first, then those that continue it, keeper.h's link), for the record m. 0,
 * -EINVAL when m does not fit (nothing kept: the allocations stay the keeper's), -errno. */
int tfs_cuda_vmm_adopt(struct cdev *d, const struct tfs_vmm_part *parts, int n,
		       const struct tfs_meta *m, struct tfs_alloc *a);
/* A restart (alloc.c's adoption): is f the allocation the record m names? A VMM tensor's
 * first chunk by its id and device (the record's handle says the size the tensor grew
 * to, docs/vmm.md#growth); a chunk that continues another is never one; any other by its
 * whole handle. */
int tfs_cuda_found_names(const struct kfound *f, const struct tfs_meta *m);
/* The chunks of the VMM tensor whose first chunk is f (keeper.h's link), in order, each
 * continuing where the one before ends, not yet adopted: into parts (at most
 * TFS_VMM_CHUNKS_MAX, f first) with their entries of be->found in which[]: their count. */
int tfs_cuda_vmm_found_chunks(struct tfs_backend *be, struct kfound *f,
			      struct tfs_vmm_part *parts, struct kfound **which);
/* A move: *out a new allocation on to (current after the call) holding src's bytes,
 * copied from from, counted as a tensor's own; *first_ms how long until its first bytes
 * could be copied (the rest is made while they are). 0, or -errno with nothing made.
 * Takes a staging slot of to for the copy. */
int tfs_cuda_vmm_move(struct cdev *to, struct cdev *from, const struct tfs_vmm *src,
		      struct tfs_vmm **out, double *first_ms);
/* Unmaps and releases a->vmm and closes its descriptor (importers keep theirs). */
void tfs_cuda_vmm_free(struct tfs_alloc *a);
/* The same off the caller's path: a->vmm leaves the statistics at once and a->dev's
 * zeroing thread gives it back (tfs_cuda_later), which tfs_cuda_zero_drain waits for.
 * For the old memory of a move, whose release (the keeper's cuMemRelease of each chunk)
 * took 5-7 ms for 8 GiB on the H200. */
void tfs_cuda_vmm_free_later(struct tfs_alloc *a);
/* Within the allocation the size changes in place; beyond it one more chunk is mapped at
 * its end (the address here may change, the handle says the new size: grow's comment in
 * vmm.c), or, with TFS_VMM_CHUNKS_MAX chunks already, a new allocation takes the bytes
 * (its id, handle and address change). 0 or -errno, a unchanged on error. */
int tfs_cuda_vmm_resize(struct tfs_alloc *a, uint64_t new_bytes);
/* TFS_VMM_MAGIC, id, size, device (meta.h): a's own allocation's. */
void tfs_cuda_vmm_handle(const struct tfs_alloc *a, uint8_t handle[TFS_IPC_HANDLE_SIZE]);
/* backend.h's export_fd: a duplicate of the allocation's descriptor (for a packed tensor,
 * its block's: the whole allocation, as a legacy handle names its whole block); -ENOTSUP
 * for legacy memory. */
int tfs_cuda_vmm_export_fd(struct tfs_backend *be, struct tfs_alloc *a, int writable, int *fd);
/* backend.h's export_chunks: a duplicate of each chunk's descriptor with its size
 * (-E2BIG beyond max, nothing left open), a packed tensor's block's one. */
int tfs_cuda_vmm_export_chunks(struct tfs_backend *be, struct tfs_alloc *a, int writable,
			       int *fds, uint64_t *sizes, int max);
/* backend.h's grows_in_place: a tensor of its own VMM allocation with room for new_bytes
 * or fewer than TFS_VMM_CHUNKS_MAX chunks (packed ones move past TFS_VMM_PACK_MAX). */
int tfs_cuda_vmm_grows_in_place(struct tfs_backend *be, struct tfs_alloc *a, uint64_t new_bytes);

/* ---- zero.c ---- */

/* The zeroing thread of d (arg), started by device start-up and stopped by zstop under
 * d->zmu: zeroes freed chunks a batch at a time, then gives them back to the pool; does
 * the work tfs_cuda_later hands it. */
void *tfs_cuda_zero_main(void *arg);

/* Gives c, which the caller no longer uses, back to d's pool once zeroed, without waiting
 * (d->zmu). d must be current: without memory for the list entry c is zeroed at once. A
 * chunk that cannot be zeroed is leaked and logged, never handed out again. */
void tfs_cuda_chunk_release(struct cdev *d, struct tfs_pool_chunk *c);
/* fn(d, arg) on d's zeroing thread (d current there, no lock held), without waiting
 * (d->zmu); without memory for the list entry, here and now. tfs_cuda_zero_drain waits
 * for it. fn may take the pool's lock and the keeper client's. */
void tfs_cuda_later(struct cdev *d, void (*fn)(struct cdev *d, void *arg), void *arg);

/* Waits (d->zmu) until every chunk released so far is back in the pool (and every VMM
 * allocation given back). */
void tfs_cuda_zero_drain(struct cdev *d);

/* ---- alloc.c ---- */

/* The pool's callbacks, ctx the struct cdev: one cudaMalloc per block, zeroed before the
 * pool hands it out and counted in be->reserved against be->cap. They run under the
 * pool's lock with the device current; get takes a staging slot to zero the block. */
extern const struct tfs_pool_block_ops tfs_cuda_block_ops;

/* ---- copy.c ---- */

/* On d, which must be current: copies copy_len bytes from device address src to dst, then
 * zeroes zero_len bytes at zero_at, through a staging slot, and returns once done. 0 or a
 * negative errno (logged). */
int tfs_cuda_dev_copy_zero(struct cdev *d, uint64_t dst, uint64_t src, uint64_t copy_len,
			   uint64_t zero_at, uint64_t zero_len);

/* dst_d current: copies len bytes from src on src_d to dst on dst_d, through a staging
 * slot's stream of dst_d, and returns once done. 0 or a negative errno (logged). */
int tfs_cuda_peer_copy(struct cdev *dst_d, uint64_t dst, struct cdev *src_d, uint64_t src,
		       uint64_t len);

/* Copies queued on one staging slot's stream of d (current), which the caller goes on
 * while they run: begin takes the slot (waiting under d->mu while all are busy); peer
 * queues a copy of len bytes from src on src_d to dst on d, zero a zero-fill; once one
 * fails the rest are not queued. end waits for them all and gives the slot back: 0 or the
 * first error (logged as what). Memory a queued copy touches stays until end returns. */
struct tfs_cuda_copyq {
	struct cdev *d;
	struct slot *s;
	cudaError_t e;
};
void tfs_cuda_copyq_begin(struct tfs_cuda_copyq *q, struct cdev *d);
void tfs_cuda_copyq_peer(struct tfs_cuda_copyq *q, uint64_t dst, struct cdev *src_d,
			 uint64_t src, uint64_t len);
void tfs_cuda_copyq_zero(struct tfs_cuda_copyq *q, uint64_t at, uint64_t len);
int tfs_cuda_copyq_end(struct tfs_cuda_copyq *q, const char *what);
/* ---- areas.c ---- */

/* The calling thread's read area for be, made on its first read (a memfd, mapped and
 * pinned; linked into be->areas under be->areas_mu, freed by fini). NULL when it cannot be
 * had, and then not tried again on this thread for this backend. */
struct rarea *tfs_cuda_area_get(struct tfs_backend *be);

/* ---- the operations (their table: backend.c), by file; contracts: backend.h ---- */

/* backend.c. init and the first use of a device (device.c) take be->init_mu. */
int tfs_cuda_init(struct tfs_backend **out, int device, uint64_t max_bytes);
void tfs_cuda_fini(struct tfs_backend *be);
int tfs_cuda_device_count(struct tfs_backend *be);

/* alloc.c. resize, set_owner and move may move the tensor to other memory: its handle and offset
 * then change, so callers export the handle again. alloc, resize and set_owner take the
 * pool's lock (and d->zmu when the device is full), free d->zmu, export_handle d->mu (the
 * block's handle cache), stats the device's zmu and pool lock in turn; move takes the new
 * device's pool lock, then a staging slot of it, then the old device's zmu, one at a time. */
int tfs_cuda_alloc(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid, gid_t gid,
		   mode_t mode, uint64_t dir, struct tfs_alloc **out);
void tfs_cuda_free(struct tfs_backend *be, struct tfs_alloc *a);
int tfs_cuda_resize(struct tfs_backend *be, struct tfs_alloc **ap, uint64_t new_bytes);
int tfs_cuda_export_handle(struct tfs_backend *be, struct tfs_alloc *a,
			   uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t *offset);
int tfs_cuda_set_owner(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid, gid_t gid,
		       mode_t mode, uint64_t dir, unsigned flags);
int tfs_cuda_move(struct tfs_backend *be, struct tfs_alloc *a, int device);
/* backend.h's move_sum between GPUs: commit before the old memory goes, no sum (*sum must
 * be 0: -EINVAL otherwise). */
int tfs_cuda_move_sum(struct tfs_backend *be, struct tfs_alloc *a, int device, uint64_t *sum,
		      void (*commit)(void *arg), void *arg);
void tfs_cuda_stats(struct tfs_backend *be, int device, struct tfs_backend_stats *st);
/* backend.h's adopt and adopt_end (alloc.c); tfs_cuda_list_found at init (alloc.c). */
int tfs_cuda_adopt(struct tfs_backend *be, const struct tfs_meta *m, struct tfs_alloc **out);
int tfs_cuda_adopt_end(struct tfs_backend *be);
/* What adopt_end would free, let go of without freeing it (the keeper keeps it). */
void tfs_cuda_found_forget(struct tfs_backend *be);
int tfs_cuda_list_found(struct tfs_backend *be);

/* copy.c. Each copy holds a staging slot (taken under d->mu) while it runs; read_fd takes
 * be->areas_mu on a thread's first read. */
int tfs_cuda_copy_in(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
		     const void *src, size_t len);
int tfs_cuda_copy_in_fd(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, int fd,
			uint64_t foff, size_t len);
int tfs_cuda_copy_out(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
		      void *dst, size_t len);
/* backend.h's set_caps (alloc.c). */
void tfs_cuda_set_caps(struct tfs_backend *be, const struct tfs_tier_sizes *caps,
		       const struct tfs_tier_sizes *prealloc);
/* A block of size bytes for d, zeroed, counted in d->reserved (alloc.c's block_get
 * without the reserve): 0 with *cb, or -ENOSPC, -ENOMEM, -EIO. tfs_cuda_block_drop gives
 * it back and uncounts it. */
int tfs_cuda_block_new(struct cdev *d, uint64_t size, struct cblock **cb);
void tfs_cuda_block_drop(struct cdev *d, struct cblock *cb, uint64_t size);

/* --preallocate of GPUs (prealloc.c, docs/tiers.md#preallocation), the reserve's list;
 * its blocks are made and dropped by the callers. tfs_cuda_prealloc_cfg: the pool's
 * configuration of a preallocated device (tfs_pool_config_prealloc: segments of an eighth
 * of the reservation between 2 MiB and 1 GiB, and runs of them, kept with their keys), sets
 * d->seg; 0 when the device is not preallocated. tfs_cuda_prealloc_push: an idle piece
 * (segment or run, cb->size) joins the reserve (0, -ENOMEM). tfs_cuda_prealloc_take: the
 * smallest idle piece of at least size bytes, or NULL; tfs_cuda_prealloc_pop: any idle
 * piece (to give back), or NULL. tfs_cuda_prealloc_end: frees the list, empty by then.
 * tfs_cuda_prealloc_fill (alloc.c, from adopt_end): reserves what each preallocated device
 * lacks, laid out by tfs_pool_prealloc_piece, logged; 0 or the first error. */
int tfs_cuda_prealloc_cfg(struct cdev *d, struct tfs_pool_config *cfg);
int tfs_cuda_prealloc_push(struct cdev *d, struct cblock *cb);
struct cblock *tfs_cuda_prealloc_take(struct cdev *d, uint64_t size);
struct cblock *tfs_cuda_prealloc_pop(struct cdev *d);
void tfs_cuda_prealloc_end(struct cdev *d);
int tfs_cuda_prealloc_fill(struct tfs_backend *be);
/* backend.h's host_register, host_unregister and copy_host_sum (host_tier.c). */
int tfs_cuda_host_register(struct tfs_backend *be, void *p, size_t len);
void tfs_cuda_host_unregister(struct tfs_backend *be, void *p);
int tfs_cuda_copy_host_sum(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
			   void *host, size_t len, int to_dev, uint64_t *sum);
int tfs_cuda_release_cached(struct tfs_backend *be, int device);
int tfs_cuda_read_mem(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, size_t len,
		      const void **mem);
int tfs_cuda_read_fd(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, size_t len,
		     int *fd, off_t *pos);

/* areas.c */
void *tfs_cuda_io_region(struct tfs_backend *be, size_t bytes);

/* marks.c. be->marks_mu, not held while it waits for the event. */
int tfs_cuda_wait_mark(struct tfs_backend *be, int device,
		       const uint8_t mark[TFS_IPC_HANDLE_SIZE]);

#endif
