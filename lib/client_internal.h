/* Private to the client side of libtensorfs: the tensor object, the per-process IPC
 * handle cache, the dlopen'ed CUDA runtime and the thread-local error message. */
#ifndef TFS_CLIENT_INTERNAL_H
#define TFS_CLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "fd_request.h"    /* TFS_FDREP_FDS_MAX */
#include "meta.h"
#include "tensorfs.h"

/* ---- errors (client_err.c) ---- */
/* Stores a message for tfs_errmsg() and returns err (negative errno) unchanged. */
int tfs_seterr(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- CUDA runtime loaded at first use (cudart.c) ---- */
typedef struct { char reserved[64]; } tfs_cuda_ipc_handle;   /* cudaIpcMem/EventHandle_t */
struct tfs_cudart {
	int (*GetDevice)(int *dev);
	int (*SetDevice)(int dev);
	int (*IpcOpenMemHandle)(void **ptr, tfs_cuda_ipc_handle h, unsigned int flags);
	int (*IpcCloseMemHandle)(void *ptr);
	int (*Memcpy)(void *dst, const void *src, size_t n, int kind);
	const char *(*GetErrorString)(int err);
	int (*EventCreateWithFlags)(void **ev, unsigned int flags);
	int (*EventRecord)(void *ev, void *stream);
	int (*EventDestroy)(void *ev);
	int (*IpcGetEventHandle)(tfs_cuda_ipc_handle *h, void *ev);
	int (*IpcOpenEventHandle)(void **ev, tfs_cuda_ipc_handle h);
	int (*StreamWaitEvent)(void *stream, void *ev, unsigned int flags);
	/* the loader's pipeline (load_pipe.c) */
	int (*HostAlloc)(void **p, size_t n, unsigned int flags);
	int (*FreeHost)(void *p);
	int (*StreamCreateWithFlags)(void **stream, unsigned int flags);
	int (*StreamDestroy)(void *stream);
	int (*StreamSynchronize)(void *stream);
	int (*EventSynchronize)(void *ev);
	int (*MemcpyAsync)(void *dst, const void *src, size_t n, int kind, void *stream);
	int (*HostRegister)(void *p, size_t n, unsigned int flags);
	int (*HostUnregister)(void *p);
	int (*Free)(void *p);        /* cudaFree(NULL): the device's context made current */
	int (*DeviceSynchronize)(void);
};
#define TFS_CUDA_HOST_REGISTER_PORTABLE 1   /* cudaHostRegisterPortable */
#define TFS_CUDA_HOST_REGISTER_READ_ONLY 8  /* cudaHostRegisterReadOnly (CUDA 11.1) */
#define TFS_CUDA_MEMCPY_DEFAULT 4           /* cudaMemcpyDefault */
#define TFS_CUDA_HOST_ALLOC_PORTABLE 1      /* cudaHostAllocPortable */
#define TFS_CUDA_STREAM_NON_BLOCKING 1      /* cudaStreamNonBlocking */
#define TFS_CUDA_IPC_LAZY_PEER 1            /* cudaIpcMemLazyEnablePeerAccess */
#define TFS_CUDA_EVENT_DISABLE_TIMING 2
#define TFS_CUDA_EVENT_INTERPROCESS 4
/* The loaded runtime, or NULL with tfs_errmsg set (-ENODEV in *rc). Thread-safe. */
const struct tfs_cudart *tfs_cudart_get(int *rc);
/* Runs cudaSetDevice(dev) and returns the previous device in *prev (for restore). */
int tfs_cuda_enter(const struct tfs_cudart *cu, int dev, int *prev);
/* Whether host memory at p is registered with (or allocated pinned by) the CUDA driver in
 * this process: 1 or 0. Never loads the driver (a process that has not loaded it has
 * registered nothing), never makes a context. */
int tfs_host_pinned(const void *p);

/* ---- per-process handle cache (ipc_cache.c) ---- */
struct tfs_ipc_entry;
/* Maps the allocation the handle of m names (once per process; later calls with the same
 * handle share it) and returns its base and whether it could be mapped writable. Checks
 * that ipc_offset + bytes lies inside. Errors as tfs_open. */
int tfs_ipc_acquire(const struct tfs_meta *m, struct tfs_ipc_entry **out, void **base,
		    int *writable);
/* As tfs_ipc_acquire; tfd, an open file of the tensor in the mount (-1 when none), lets a
 * host handle whose shared-memory name is gone, or a VMM one, be mapped through the handle
 * socket; without tfd, name (the tensor's name in the mount, NULL when unknown) and
 * m->hsock let a VMM handle be. */
int tfs_ipc_acquire_fd(const struct tfs_meta *m, int tfd, const char *name,
		       struct tfs_ipc_entry **out, void **base, int *writable);

/* ---- the CUDA driver's VMM calls, loaded at first use (cudadrv.c) ---- */
/* cuda.h's CUmemAccessDesc: a CUmemLocation (type, id) and the flags. */
struct tfs_cu_access {
	int type;                  /* TFS_CU_LOCATION_DEVICE */
	int id;                    /* device ordinal */
	int flags;                 /* TFS_CU_ACCESS_RW */
};
#define TFS_CU_LOCATION_DEVICE 1         /* CU_MEM_LOCATION_TYPE_DEVICE */
#define TFS_CU_ACCESS_RW 3               /* CU_MEM_ACCESS_FLAGS_PROT_READWRITE */
#define TFS_CU_HANDLE_POSIX_FD 1         /* CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR */

struct tfs_cudrv {             /* CUresult (0: success) of each */
	int (*DeviceGetCount)(int *);
	int (*GetErrorString)(int, const char **);
	int (*MemImportFromShareableHandle)(unsigned long long *, void *, int);
	int (*MemAddressReserve)(unsigned long long *, size_t, size_t, unsigned long long,
				 unsigned long long);
	int (*MemAddressFree)(unsigned long long, size_t);
	int (*MemMap)(unsigned long long, size_t, size_t, unsigned long long, unsigned long long);
	int (*MemUnmap)(unsigned long long, size_t);
	int (*MemSetAccess)(unsigned long long, size_t, const struct tfs_cu_access *, size_t);
	int (*MemRelease)(unsigned long long);
};
/* The calls, or NULL with *rc and the error set (-ENODEV: no libcuda). */
const struct tfs_cudrv *tfs_cudrv_get(int *rc);
/* The driver's words for r (never NULL). */
const char *tfs_cudrv_error(const struct tfs_cudrv *d, int r);

/* ---- the mounts this process sees (mounts.c) ---- */
struct tfs_mount {
	dev_t dev;                   /* the st_dev of its files */
	char mp[4096];               /* the mount point, octal escapes undone */
	char fstype[64];             /* the field after " - ": "fuse.tensorfs" for ours */
	long user_id;                /* a FUSE mount's user_id= option (its daemon's uid); -1 */
};
/* Parses one line of /proc/self/mountinfo into *out. 0, or -EINVAL for a line of another
 * form or a field longer than its buffer (*out then undefined). No I/O. */
int tfs_mountinfo_line(const char *line, struct tfs_mount *out);
/* Calls fn with each mount, in mountinfo's order, until fn returns nonzero. 0, or -errno
 * when mountinfo cannot be read (nothing called). */
int tfs_mounts_each(int (*fn)(const struct tfs_mount *m, void *arg), void *arg);

/* ---- the handle socket (handle_socket.c) ---- */
/* The memory of the tensor open as tfd, from the daemon's handle socket: read-write when
 * *writable and allowed (else read-only, *writable cleared). 0 with *memfd (the caller's),
 * -ENOTSUP when the mount serves no socket, -ENOENT when the tensor has no name in the
 * mount to ask for (replaced or removed since it was opened, or renamed over and over
 * while asked), or -errno (EACCES: refused). */
int tfs_hsock_fetch(int tfd, int *writable, int *memfd);
/* The same for another node's tensor m open as tfd (m->remote): its memory is its owner's
 * daemon's to hand out, so the socket asked is that of the tensorfs mount of this machine
 * (this process's mount namespace) that shows the tensor under the same name with m's
 * inode number and size and answers for it: the owner's socket checks the caller's
 * credentials through the owner's mount. 0 with *memfd, -EACCES (the owner refused),
 * -ENOENT (no such mount here, or it did not answer for the tensor), -ENOMEM. */
int tfs_hsock_fetch_owner(int tfd, const struct tfs_meta *m, int *writable, int *memfd);
/* The same for the tensor name (its path under the mount, no leading slash) from the
 * socket at sock, for a caller without a file of the mount: *bytes (may be NULL) gets the
 * tensor's size as the daemon has it, for the caller to check that the name is still the
 * tensor it means. */
int tfs_hsock_fetch_name(const char *sock, const char *name, int *writable, int *memfd,
			 uint64_t *bytes);
/* A memory as the handle socket hands it out: n descriptors (the holder's) and each
 * one's size, in address order; size[0] is 0 for a memory of one descriptor (the reply
 * says no size: fd_request.h). */
struct tfs_hsock_mem {
	int n;
	int fd[TFS_FDREP_FDS_MAX];
	uint64_t size[TFS_FDREP_FDS_MAX];
};
/* tfs_hsock_fetch, tfs_hsock_fetch_owner and tfs_hsock_fetch_name for a memory in pieces
 * (a VMM tensor grown in place, docs/vmm.md#growth): every descriptor into *mem. The
 * one-descriptor functions fail with -EBADMSG on such a memory. */
int tfs_hsock_fetch_mem(int tfd, int *writable, struct tfs_hsock_mem *mem);
int tfs_hsock_fetch_owner_mem(int tfd, const struct tfs_meta *m, int *writable,
			      struct tfs_hsock_mem *mem);
int tfs_hsock_fetch_name_mem(const char *sock, const char *name, int *writable,
			     struct tfs_hsock_mem *mem, uint64_t *bytes);
/* Closes what mem holds (n becomes 0). */
void tfs_hsock_mem_close(struct tfs_hsock_mem *mem);
/* Drops one user; the last one unmaps / closes the handle. 0 or a negative errno. */
int tfs_ipc_release(struct tfs_ipc_entry *e);
/* The descriptor of e's host object, kept open beside its mapping (small objects, a
 * bounded number per process: FD_KEEP_MAX of ipc_cache.c), with the mapping's access; -1
 * when none. Stable while the caller holds e; owned by the cache (never closed by the
 * caller). */
int tfs_ipc_host_fd(const struct tfs_ipc_entry *e);
/* 1 when the handle of m is mapped in this process now (a hint: it may change at once). */
int tfs_ipc_mapped(const struct tfs_meta *m);
/* Number of distinct handles now mapped (for tests). */
int tfs_ipc_cache_size(void);

/* ---- a tensor file as its attributes tell it (meta_cache.c) ---- */
struct stat;
/* What tells one tensor from another, or from itself before a change (meta_cache.c says
 * why it is enough). */
struct tfs_fileid {
	dev_t dev;
	ino_t ino;
	struct timespec ctim;
	off_t size;
};
/* Fills *id from st; 0 when st cannot tell changes apart (not a regular file, or a
 * change time in whole seconds), and then nothing should be remembered by it. */
int tfs_fileid_set(struct tfs_fileid *id, const struct stat *st);
int tfs_fileid_eq(const struct tfs_fileid *id, const struct stat *st);
/* The same for metadata read by path before any stat: whether st is the regular file m
 * describes as it was then, by m's ino, bytes and ctime_ns (nanoseconds); 0 when m lacks
 * ino or ctime_ns. The device is the descriptor's own: m does not name one. */
int tfs_fileid_eq_meta(const struct tfs_meta *m, const struct stat *st);

/* ---- metadata remembered by file attributes (meta_cache.c) ---- */
/* 1 and *m filled when st (from fstat after an open by path) matches what was put for
 * that inode; 0 otherwise. Thread-safe. */
int tfs_mc_get(const struct stat *st, struct tfs_meta *m);
/* Remembers m for the file st describes (st taken before m was read). */
void tfs_mc_put(const struct stat *st, const struct tfs_meta *m);
/* Opens served from it so far (for tests). */
long tfs_mc_hits(void);
/* 1 and *m filled when the JSON text json[0..len) was put before (byte for byte); 0
 * otherwise. Thread-safe. */
int tfs_mc_get_json(const char *json, size_t len, struct tfs_meta *m);
/* Remembers m as what json[0..len) parses to (texts over 4 KiB are not kept; out of
 * memory keeps nothing). The copies live until replaced: at most 16 of 4 KiB. */
void tfs_mc_put_json(const char *json, size_t len, const struct tfs_meta *m);
/* tfs_open_meta calls served from it so far (for tests). */
long tfs_mc_json_hits(void);
/* Whether this process opened the absolute path before (a hint: a hash, 256 slots, no
 * lock), and remembering that it did; forgetting them all (for tests). */
int tfs_mc_path_seen(const char *path);
void tfs_mc_path_mark(const char *path);
void tfs_mc_path_forget(void);

/* ---- descriptors held on tensors opened by path (fd_share.c) ---- */
/* Whether any is held: without one, tfs_open need not stat first. */
int tfs_fds_any(void);
/* A new descriptor (close-on-exec) sharing the open file of a held one on the file st
 * describes, opened with access mode acc; -1 when none. Thread-safe. */
int tfs_fds_dup(const struct stat *st, int acc);
/* Remembers fd, opened with acc on the file st describes (taken after the open). The
 * caller calls tfs_fds_drop before closing it. */
void tfs_fds_add(const struct stat *st, int fd, int acc);
void tfs_fds_drop(ino_t ino, int fd);
/* Opens served by a duplicate so far (for tests). */
long tfs_fds_shared(void);

/* ---- open(2) on a helper thread (open_ahead.c) ---- */
/* Starts open(path, flags) then, st not NULL, fstat of the new descriptor into *st
 * (all 0 when that fails) on the process's helper thread (started at first use) and returns 1; the
 * caller then must call tfs_ahead_wait, and keep path and st valid until it has.
 * 0 when the helper is busy with another thread's open or cannot be started: nothing was
 * started, and the caller opens the file itself. The caller holds the helper's slot lock
 * from here to the wait and may take the other client locks in between (the helper
 * takes none of them: no cycle). */
int tfs_ahead_start(const char *path, int flags, struct stat *st);
/* Waits for the open started and returns its descriptor (the caller's to close) or
 * -errno. */
int tfs_ahead_wait(void);
/* Opens done on the helper so far (for tests). */
long tfs_ahead_count(void);

/* ---- opening by path (client_open.c) ---- */
/* First opens that went by the metadata read by path, with no stat (for tests). */
long tfs_open_first_count(void);

/* ---- the tensor (client_open.c) ---- */
struct tfs_tensor {
	int refs;                    /* the caller's + one per DLPack export; atomic */
	int fd;                      /* the file reference, -1 when opened from meta/queue */
	ino_t held_ino;              /* fd is in fd_share.c's table under this inode; 0: not */
	int writable;
	/* 1: another node's memory whose handle does not map here (tfs_tensor_from_meta):
	 * bytes move by pread/pwrite on fd, which the daemon forwards to the owning node. */
	int via_fd;
	struct tfs_meta meta;
	struct tfs_ipc_entry *map;   /* NULL when bytes == 0 or via_fd */
	void *data;                  /* base + ipc_offset; NULL when via_fd */
	void *event;                 /* cudaEvent_t of the last tfs_mark_written, or NULL */
};
/* Builds a tensor from parsed metadata; takes ownership of fd (closed on error too). name:
 * the tensor's name in the mount when there is no fd (a queue reply's), else NULL: a VMM
 * tensor's memory is asked of m->hsock by it. The handle is mapped first, another node's
 * too (m->remote: on the same machine its host object or GPU memory maps here as a local
 * one does). Only when that mapping fails for another node's tensor (tfs_unmappable_here)
 * and fd is a descriptor of its file is the tensor built via_fd; without fd that is
 * -EREMOTE. */
int tfs_tensor_from_meta(const struct tfs_meta *m, int fd, const char *name, int want_write,
			 tfs_tensor **out);
void tfs_tensor_ref(tfs_tensor *t);
/* Whether the mapping error rc (tfs_ipc_acquire_fd's) says that the memory cannot be
 * reached from this machine or process (its object absent, a CUDA handle that does not
 * open, no CUDA, a handle of a kind this library does not map), rather than that this
 * process ran short (-ENOMEM, -EMFILE, -ENFILE), which is reported as it is. */
int tfs_unmappable_here(int rc);

/* Removes path and everything under it, depth first, without following links; best
 * effort (what a failed load, save or copy made is undone this way): errors are ignored. */
void tfs_rm_tree(const char *path);
/* Sets tfs_errmsg to say that t's bytes are on another node and not mapped here (what:
 * the call refused) and returns -EREMOTE. */
int tfs_remote_err(const tfs_tensor *t, const char *what);
/* Drops one reference, freeing on the last. Returns the unmap status. */
int tfs_tensor_unref(tfs_tensor *t);
static inline int tfs_tensor_on_host(const tfs_tensor *t)
{
	return t->meta.backend[0] != 'c';
}

#endif
