/* The narrow interface between the daemon and the memory that holds tensor bytes.
 * The FUSE layer, the queue worker and the tensor table call only these functions;
 * nothing outside fs/mem/cuda/ includes CUDA headers.
 *
 * Contract common to every backend:
 *  - Errors are negative errno values (-ENOMEM/-ENOSPC when memory runs out, -EINVAL for a
 *    bad device, -EIO for a driver failure); on error nothing was allocated or changed.
 *  - init() runs in the daemon after it has forked into the background (CUDA contexts do
 *    not survive fork), before any other call.
 *  - All functions are thread-safe; copy_in/copy_out on different allocations, or on
 *    disjoint ranges of one allocation, may run concurrently.
 *  - Memory from alloc() and from the growing part of resize() reads as zeros.
 */
#ifndef TFS_FS_BACKEND_H
#define TFS_FS_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tensorfs.h"      /* TFS_IPC_HANDLE_SIZE */

struct tfs_meta;
struct tfs_guard_span;  /* util/guard.h */

struct tfs_backend;     /* one per daemon: the backend's private state */
struct tfs_alloc;       /* one per tensor with bytes > 0: opaque to callers */
struct tfs_tier_sizes;  /* below */

struct tfs_backend_stats {
	uint64_t used;      /* bytes handed out to tensors (requested sizes) */
	uint64_t reserved;  /* bytes the backend holds for live tensors (>= used); blocks kept
			     * only for reuse are not counted */
	uint64_t total;     /* what the device has, or --max-bytes (a cap per device) if less */
	uint64_t nallocs;   /* live allocations */
	uint64_t prealloc;  /* bytes of the tier's preallocated pool (--preallocate), live
			     * tensors' and idle alike; 0 without one */
};

#define TFS_BE_NOMOVE 1u   /* set_owner: refuse (-EBUSY) rather than move the memory */

struct tfs_backend_ops {
	const char *name;   /* "host" or "cuda" */

	/* max_bytes 0 means no cap beyond the device; device is the default ordinal.
	 * On success *out is owned by the caller and released with fini(). */
	int (*init)(struct tfs_backend **out, int device, uint64_t max_bytes);
	void (*fini)(struct tfs_backend *be);

	/* Per-device caps (--max-bytes 0:40G,1:20G) and preallocations (--preallocate 0:40G),
	 * given once after init, before any other call: a device caps names has that cap, the
	 * others init's max_bytes; a device prealloc names has its pool reserved by adopt_end
	 * (which every start calls). Copied. May be NULL (the host backend reads tfs_mem at
	 * init). */
	void (*set_caps)(struct tfs_backend *be, const struct tfs_tier_sizes *caps,
			 const struct tfs_tier_sizes *prealloc);

	/* Number of devices usable with alloc(); valid ordinals are 0..n-1. */
	int (*device_count)(struct tfs_backend *be);

	/* bytes > 0. uid/gid/mode describe the owner and dir the directory the tensor lives in
	 * (struct tfs_meta's dir): a handle must never expose memory its holder could not read
	 * through the mount (the CUDA pool keeps blocks per owner, readers and directory:
	 * tfs_pool_reader_key; the host backend sets the owner and mode of its shared-memory
	 * object). */
	int (*alloc)(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid, gid_t gid,
		     mode_t mode, uint64_t dir, struct tfs_alloc **out);
	void (*free)(struct tfs_backend *be, struct tfs_alloc *a);

	/* Change the size, keeping min(old, new) bytes and zeroing the rest. May replace *a
	 * (the handle then changes); on error *a is unchanged and still valid. */
	int (*resize)(struct tfs_backend *be, struct tfs_alloc **a, uint64_t new_bytes);

	/* The handle another process uses to map the memory, and the byte offset of this
	 * tensor inside what the handle maps. handle is always TFS_IPC_HANDLE_SIZE bytes. */
	int (*export_handle)(struct tfs_backend *be, struct tfs_alloc *a,
			     uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t *offset);

	/* Owner, mode or directory changed (chown, chmod, rename to another directory): the
	 * host backend updates its shm object; the cuda backend moves the tensor to a block of
	 * its new readers (its handle and offset change: export_handle again), unless flags
	 * has TFS_BE_NOMOVE: then -EBUSY where it would have to move. On error nothing
	 * changed. May be NULL. */
	int (*set_owner)(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid, gid_t gid,
			 mode_t mode, uint64_t dir, unsigned flags);

	/* Copy between the tensor and ordinary (pageable) host memory. off+len must lie
	 * inside the allocation. copy_in returns once the bytes are visible to any process
	 * that maps the handle; copy_out returns what the memory holds now. */
	int (*copy_in)(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
		       const void *src, size_t len);
	int (*copy_out)(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
			void *dst, size_t len);

	/* Copies len bytes of the file fd at foff into the tensor at off, read straight into
	 * memory the device copies from (the host backend's mapping, the cuda backend's
	 * pinned staging), without copy_in's staging copy. -ENODATA when the file ends first,
	 * a failed read's -errno; part of the range may then be written. Otherwise as
	 * copy_in. May be NULL: the caller reads into memory of its own and calls copy_in. */
	int (*copy_in_fd)(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, int fd,
			  uint64_t foff, size_t len);

	/* The figures of one device (0..device_count-1); one not used yet has used 0. */
	void (*stats)(struct tfs_backend *be, int device, struct tfs_backend_stats *st);

	/* Moves the tensor's memory to another device: new memory there under the same key,
	 * a device-to-device copy, the old memory freed. Its handle and offset change (call
	 * export_handle again). The caller makes sure no copy runs and nobody else maps it
	 * meanwhile. -ENOSPC when the device is full, -EINVAL for a bad device; on error a is
	 * unchanged and still valid. May be NULL (a backend of one device). */
	int (*move)(struct tfs_backend *be, struct tfs_alloc *a, int device);

	/* move, summing the bytes as they are copied (core/tier.h tfs_sum_piece/add, no second
	 * pass): *sum on entry is the sum the bytes must have, 0 for none; -EBADMSG when they
	 * do not (a changes nothing, the new memory is freed); on success *sum is the sum of
	 * what was copied. device may be TFS_DEVICE_CPU, the host tier. Once the bytes are in
	 * the new memory and a names it (export_handle gives the new handle, *sum is set),
	 * commit(arg), when not NULL, runs before the old memory is freed: the caller writes
	 * the record there, so a crash at any point leaves the memory a record names whole
	 * (both are the keeper's until then; a restart adopts the one named and frees the
	 * other). May be NULL: move, unchecked. */
	int (*move_sum)(struct tfs_backend *be, struct tfs_alloc *a, int device, uint64_t *sum,
			void (*commit)(void *arg), void *arg);

	/* Blocks until the work another process marked with this interprocess event (the
	 * 64-byte handle libtensorfs's tfs_mark_written publishes) has completed, so the next
	 * copy_out sees it. -ESTALE when the event cannot be opened (its process is gone: its
	 * work is over). May be NULL: the host backend's memory needs no such wait. Takes the
	 * device ordinal, not an allocation: the caller waits holding no lock of the tensor,
	 * whose memory may move meanwhile. */
	int (*wait_mark)(struct tfs_backend *be, int device,
			 const uint8_t mark[TFS_IPC_HANDLE_SIZE]);

	/* Host memory of bytes for the FUSE loop's request buffers, owned by the backend and
	 * freed by fini(); NULL when it cannot (the loop then mallocs its own). copy_in from
	 * inside it may skip the staging copy: the cuda backend pins it and copies a write's
	 * bytes from where the kernel put them straight to the device. May be NULL. */
	void *(*io_region)(struct tfs_backend *be, size_t bytes);

	/* Copies len bytes at off into memory of the calling thread that is a file: (*fd,
	 * *pos), for a FUSE reply to splice from, so that the kernel copies the bytes once,
	 * into the reader's buffer. Valid until the thread's next read_fd(). -ENOTSUP: use
	 * copy_out. May be NULL. */
	int (*read_fd)(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, size_t len,
		       int *fd, off_t *pos);

	/* Host memory holding len bytes at off, for a FUSE reply to write from: the kernel
	 * copies them once, into the reader's buffer, with one write and no pipe. The host
	 * backend's own mapping; the cuda backend's read area of the calling thread (read_fd's),
	 * after a DMA into it. *mem stays valid while the caller holds the tensor's io lock
	 * and until the thread's next read_mem() or read_fd(). -ENOTSUP: use read_fd or
	 * copy_out. May be NULL. */
	int (*read_mem)(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, size_t len,
			const void **mem);

	/* The allocation's own host memory at off, lent for a transfer that reads or writes
	 * it in place over many calls (fs/net: UCX sends a reply from it and receives a
	 * pulled chunk into it): *span filled and registered (util/guard.h), span->p the
	 * bytes, until host_span_end(span), which says whether a page was truncated away
	 * meanwhile (-EIO, else 0). The caller holds the tensor's io lock (shared) for the
	 * call; afterwards the memory stays mapped whatever happens to the tensor: free()
	 * is put off until the last span of a ends, resize() and move() answer -EBUSY
	 * while spans are lent, and a set_owner() that moves a (a pooled or packed host
	 * tensor given another key) keeps its old memory until then. -ENOTSUP: the bytes
	 * are in device memory (stage them through copy_in/copy_out); -EAGAIN: too many
	 * spans lent; -EINVAL: off + len outside. wr: the transfer writes it (its pages are
	 * mapped first, in one call). May be NULL; host_span_end with it. Any thread. */
	int (*host_span)(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, size_t len,
			 int wr, struct tfs_guard_span *span);
	int (*host_span_end)(struct tfs_backend *be, struct tfs_guard_span *span);

	/* A daemon started again after a crash (adopt.c) takes back the memory its keeper
	 * still holds. adopt: the memory the record m names (handle, offset, bytes, device,
	 * owner), as it is, counted as allocated: 0 with *out, -ENOENT when the keeper holds
	 * nothing of the kind (the record outlived its memory), -EINVAL when what it holds
	 * does not fit the record. adopt_end, after the last adopt and before any alloc:
	 * frees what no record took, logs it, returns how many. */
	int (*adopt)(struct tfs_backend *be, const struct tfs_meta *m, struct tfs_alloc **out);
	int (*adopt_end)(struct tfs_backend *be);

	/* The host tier on a device backend (mem/tiers_backend.c, docs/tiers.md).
	 * host_register pins len bytes of this process's host memory at p with the driver, so
	 * that copies between it and the devices are single DMAs at the link's speed: 0, or
	 * -EIO (the memory stays usable, copies are then staged); host_unregister before the
	 * memory is unmapped or moved. copy_host_sum copies len bytes between a at off (a
	 * multiple of TFS_SUM_PIECE) and the registered host memory host (to_dev 1: host to
	 * a), adding to *sum the checksum pieces (core/tier.h) of the host side, taken as
	 * each batch lands or before it leaves, overlapped with the next batch's DMA: 0 with
	 * *sum, -EINVAL, -EIO. May be NULL (the host backend: its memory needs none). */
	int (*host_register)(struct tfs_backend *be, void *p, size_t len);
	void (*host_unregister)(struct tfs_backend *be, void *p);
	int (*copy_host_sum)(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
			     void *host, size_t len, int to_dev, uint64_t *sum);
	/* Gives the device's memory kept only for reuse back to the driver, once what was
	 * freed so far is back (after a sleep: the GPU memory shows free to every program,
	 * nvidia-smi included). 0, -EINVAL. May be NULL. */
	int (*release_cached)(struct tfs_backend *be, int device);

	/* A descriptor of the tensor's memory for another process (the handle socket,
	 * handles/server.h): *fd, the caller's to close, opened read-only unless writable.
	 * The caller checked that the process may have that access. -errno on failure. May be
	 * NULL: the memory has no descriptor (cuda legacy IPC). */
	int (*export_fd)(struct tfs_backend *be, struct tfs_alloc *a, int writable, int *fd);
	/* The same for memory made of several pieces mapped one after the other (a VMM
	 * tensor grown in place, docs/vmm.md#growth): a descriptor of each into fds (the
	 * caller's to close) with its size in sizes, in address order, at most max: their
	 * count (1 or more), -E2BIG when there are more, or -errno (nothing left open). May
	 * be NULL: export_fd's one descriptor is the whole memory. */
	int (*export_chunks)(struct tfs_backend *be, struct tfs_alloc *a, int writable,
			     int *fds, uint64_t *sizes, int max);

	/* 1 when resize to new_bytes (larger than now) keeps a's memory where processes
	 * that mapped it have it (a VMM allocation with room, or one that grows by a chunk
	 * more, docs/vmm.md#growth): the tensor may then grow while held. 0 otherwise. May be
	 * NULL: never. */
	int (*grows_in_place)(struct tfs_backend *be, struct tfs_alloc *a, uint64_t new_bytes);
};

extern const struct tfs_backend_ops tfs_backend_host;
#ifdef TFS_HAVE_CUDA
extern const struct tfs_backend_ops tfs_backend_cuda;
/* --memory vmm (docs/vmm.md): on, the cuda backend makes each new tensor a VMM
 * allocation. Set once at start-up, before init. */
void tfs_cuda_set_vmm(int on);
#endif

#define TFS_DEVICES_MAX 64      /* ordinals the mask can name */

/* A size per tier (mem/tiers.h): -o max_bytes and --preallocate. all applies to every
 * tier the list does not name. */
struct tfs_tier_sizes {
	uint64_t all;
	uint64_t cpu;
	uint64_t dev[TFS_DEVICES_MAX];
	uint64_t devmask;         /* the ordinals named */
	int has_cpu;              /* cpu named */
};

/* The daemon's memory: its backend and the devices it serves, set at start-up (main.c)
 * before any thread but the main one runs, read-only afterwards. */
struct tfs_mem {
	const struct tfs_backend_ops *ops;
	struct tfs_backend *be;
	uint64_t max_bytes;          /* -o max_bytes given as one size: the cap per device,
				      * 0: none */
	struct tfs_tier_sizes caps;  /* -o max_bytes per tier (tiers.h tfs_tier_size) */
	struct tfs_tier_sizes prealloc; /* --preallocate: each tier's pool reserved at start
					 * (docs/tiers.md#preallocation) */
	uint64_t devmask;            /* the devices served (devices.h) */
	int cpu_served;              /* the host tier "cpu" is served (docs/tiers.md) */
	int host_devices;            /* -o host_devices: the host backend's stand-in GPUs */
	int device;                  /* --device: where a tensor goes when nothing says */
	int vmm;                     /* --memory vmm (tfs_cuda_set_vmm, docs/vmm.md): the
				      * keeper's memory is then the cuda_vmm one */
	uint64_t host_pack;          /* -o host_pack: the host backend's largest packed tensor
				      * (mem/host_internal.h), 0: none */
};
extern struct tfs_mem tfs_mem;

/* "host", "cuda" or NULL/"auto" (cuda when a device is present, else host). Returns NULL
 * for an unknown or unavailable name. */
const struct tfs_backend_ops *tfs_backend_find(const char *name);

#endif
