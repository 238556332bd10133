/* tensorfs.h — the installed header of libtensorfs.
 *
 * Conventions: every function that can fail returns 0 (or a count) on success and a
 * negative errno value on failure; none aborts the calling process. Objects are opaque
 * and released by the matching close/free function named beside them.
 */
#ifndef TENSORFS_H
#define TENSORFS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFS_VERSION_MAJOR 0
#define TFS_VERSION_MINOR 1

/* Most dimensions a tensor may have (numpy allows 64; DLPack any; 16 covers real models). */
#define TFS_MAX_DIMS 16
/* Size of the raw handle in user.tensor.ipc_handle: a cudaIpcMemHandle_t, or the host
 * backend's shared-memory name (see docs/handles.md). */
#define TFS_IPC_HANDLE_SIZE 64
/* The host tier's device number (docs/tiers.md): "cpu" wherever a device is written as
 * text (user.tensor.device, the queue's "device", Redis). -1 stays "the default". */
#define TFS_DEVICE_CPU (-2)

typedef enum tfs_dtype {
	TFS_BOOL, TFS_U8, TFS_I8, TFS_U16, TFS_I16, TFS_U32, TFS_I32, TFS_U64, TFS_I64,
	TFS_F16, TFS_BF16, TFS_F32, TFS_F64, TFS_F8E4M3, TFS_F8E5M2,
	TFS_DTYPE_COUNT
} tfs_dtype;


/* ---- Client API (libtensorfs): opening tensors by path or through the Redis queue ----
 *
 * Thread safety: every function below may be called from any thread. One tfs_tensor may
 * be used by several threads at once (tfs_read/tfs_write/info), but tfs_close must be the
 * last call on it. One tfs_client serialises its commands with a lock.
 *
 * Errors: 0 (or a count) on success, a negative errno on failure. tfs_errmsg() then gives
 * a sentence about the last failure in the calling thread; tfs_strerror(err) the generic
 * text of an errno. Nothing here exits or aborts the process; out-params are only written
 * on success. */

typedef struct tfs_tensor tfs_tensor;
typedef struct tfs_client tfs_client;
struct DLManagedTensor;             /* from <dlpack/dlpack.h>; not needed to use the rest */

struct tfs_tensor_info {
	void *data;                    /* element 0: a CUDA device pointer (cuda backend) or a
					* CPU pointer (host backend); NULL when bytes == 0.
					* Valid until the tensor's last reference goes. */
	uint64_t bytes;
	tfs_dtype dtype;
	int ndim;                      /* 0 for a scalar */
	int64_t shape[TFS_MAX_DIMS];
	int device;                    /* GPU ordinal (0 on the host backend), or
					* TFS_DEVICE_CPU for the host tier (docs/tiers.md) */
	int on_host;                   /* 1: data is ordinary CPU memory (host backend or
					* host tier) */
	int writable;                  /* 0 when opened read-only */
};

/* Generic text for an errno (either sign); never NULL, static storage. */
const char *tfs_strerror(int err);
/* The message of the last failed tfs_* call in this thread ("" when none). Thread-local
 * storage, overwritten by the next failure in the same thread. */
const char *tfs_errmsg(void);

/* Opens the tensor file at path on a tensorfs mount: opens it (flags O_RDONLY or O_RDWR;
 * the open descriptor is the reference that keeps the memory alive, and the kernel drops
 * it if the process dies), reads user.tensor.meta in one call, maps the IPC handle
 * through the per-process cache and adds ipc_offset. *out is owned by the caller and
 * released with tfs_close. A tensor this process already holds open by path, unchanged and
 * in the same mode, is not opened again: its descriptor is duplicated (no request to the
 * daemon), so the daemon's reference count counts one open file for both. The metadata
 * of a tensor opened before and unchanged since is remembered (no getxattr). When the
 * path is absolute, that metadata (or else user.tensor.meta read by path: with no stat
 * before it when the process never opened that path) gives the handle, which is mapped
 * while a helper thread of the library (one per process, started at first use) opens the
 * file, so the two waits overlap; the tensor is built from that metadata only when the
 * descriptor's attributes (inode number, size, change time to the nanosecond) are the
 * ones it was read or remembered with, else from the metadata read through the
 * descriptor. A VMM tensor (docs/vmm.md) that grew in place since this process mapped it
 * is mapped whole at the address it had, while the room reserved behind that mapping (as
 * much again, at least 64 MiB) holds the growth; beyond it, at a new address (tensors
 * opened before keep theirs). That open runs with the process's credentials and working
 * directory, not ones a thread changed for itself (setfsuid(2), unshare(CLONE_FS)): such a
 * caller opens the file itself and calls tfs_open_fd.
 * Another node's tensor (its metadata says "remote", docs/net.md) is mapped first, as a
 * local one: on the same machine (another daemon with another --node) its host object or
 * its GPU memory maps here, and the tensor is like any other. Only when that mapping fails
 * in a way that says the memory is out of reach from here (another machine: its
 * shared-memory object is not on this one, its CUDA handle does not open, no GPU or
 * libcudart here; any error but -ENOMEM, -EMFILE and -ENFILE) does the open still succeed,
 * mapping nothing: tfs_read and tfs_write then go through the descriptor (pread/pwrite
 * into CPU memory only; the daemon forwards them to the owning node), and tfs_to_dlpack
 * and tfs_tensor_data give -EREMOTE (info.data is NULL) with a message naming the node.
 * Errors: the open(2) errnos (-ENOENT,
 * -EACCES, -EISDIR...), -ENOTSUP (not on a tensorfs mount), -ENODATA (no tensor
 * metadata), -EBADMSG (malformed metadata or handle), -ESTALE (the handle names memory
 * that no longer exists: daemon gone or tensor freed), -ENODEV (a CUDA handle but no
 * usable libcudart/GPU), -ENOMEM. */
int tfs_open(const char *path, int flags, tfs_tensor **out);
/* The same from a descriptor the caller already holds; the library dup()s it, so the
 * caller may close fd at once. Access (read-only or not) follows fd's open mode. */
int tfs_open_fd(int fd, tfs_tensor **out);
/* Maps a tensor from its metadata JSON (user.tensor.meta text or a queue reply) without
 * any file: no reference is held beyond the mapping itself, so the owner must keep the
 * tensor alive. The library remembers what the last texts (up to 16, each under 4 KiB)
 * parse to, so opening again from the same text skips the parse. Errors as tfs_open;
 * another node's tensor whose memory does not map here has no descriptor to go through:
 * -EREMOTE (the message names the node and why the mapping failed). */
int tfs_open_meta(const char *json, size_t len, tfs_tensor **out);
/* Drops the caller's reference: when no DLPack export still uses it, unmaps (the handle
 * closes when the last tensor of this process using it goes) and closes the descriptor.
 * NULL is a no-op. Returns 0, or a negative errno from unmapping (the tensor is still
 * released). */
int tfs_close(tfs_tensor *t);
/* Fills *info. 0, or -EINVAL when an argument is NULL. */
int tfs_tensor_get_info(const tfs_tensor *t, struct tfs_tensor_info *info);
/* Shortcut for info.data (NULL for an empty tensor or a NULL t; NULL with tfs_errmsg
 * set, EREMOTE, for another node's tensor whose memory does not map here, tfs_open). */
void *tfs_tensor_data(const tfs_tensor *t);

/* Direct copy between the tensor's bytes [off, off+len) and caller memory (CPU memory, or
 * device memory on the cuda backend: the copy direction is inferred), without FUSE.
 * Synchronous: on return the bytes have moved. 0, -EINVAL (range outside the tensor or
 * NULL buffer), -EBADF (tfs_write on a read-only tensor), -EIO (CUDA copy failed).
 * Another node's tensor whose memory does not map here (tfs_open): through the
 * descriptor, so dst/src must be CPU memory (-EFAULT otherwise), and the errnos of
 * pread/pwrite through the mount (-EREMOTE when the daemon has no cluster key,
 * -ETIMEDOUT, -EACCES from the owning node, -EIO when it answered short...). */
int tfs_read(tfs_tensor *t, uint64_t off, void *dst, size_t len);
int tfs_write(tfs_tensor *t, uint64_t off, const void *src, size_t len);

/* Exports t as a DLPack tensor (a view, no copy): *out holds its own reference to t,
 * released by calling (*out)->deleter(*out) (what from_dlpack consumers do). The caller
 * may tfs_close(t) at once; the memory stays mapped until the deleter runs. 0, -EINVAL,
 * -EREMOTE (another node's tensor whose memory does not map here, tfs_open), -ENOTSUP (a dtype with no DLPack code; fp8 has
 * DLPack 1.1's kDLFloat8_e4m3fn = 10 and kDLFloat8_e5m2 = 12), -ENOMEM. */
int tfs_to_dlpack(tfs_tensor *t, struct DLManagedTensor **out);

/* The DLPack device tfs_to_dlpack gives t now: kDLCUDA (2) and the ordinal for a GPU
 * tensor; for host memory (the host backend's, the host tier's) kDLCUDAHost (3) when this
 * process has it registered with the CUDA driver (cudaHostRegister of its mapping, made by
 * the caller: the daemon's registration is its own process's), so frameworks copy it at
 * pinned speed, else kDLCPU (1); id 0. The driver is asked only when the process has loaded
 * it already. 0, -EINVAL. */
int tfs_dlpack_device(tfs_tensor *t, int32_t *device_type, int32_t *device_id);

/* Connects to the Redis a tensorfs daemon uses: redis://[[user]:password@]host[:port][/db],
 * unix://[[user]:password@]/path/to/sock or
 * sentinel://[[user]:password@]host:port[,host:port...]/mastername[?db=N] (the primary
 * Redis Sentinel names, asked again at each reconnection). A URL without a password (or
 * with an empty one: redis://user:@host) takes the environment's TENSORFS_REDIS_PASSWORD, if set, so that
 * no password need be on a command line. With the credentials of a per-user queue
 * (the daemon's --user-queues) the client sends to that user's queue. timeout_ms (<= 0: 5000) bounds connecting and how
 * long each queue command waits for its reply. *out is released with tfs_disconnect.
 * Errors: -EINVAL (bad URL), -ECONNREFUSED/-ENOENT/-ETIMEDOUT (unreachable), -EACCES
 * (password refused), -ENXIO (no sentinel knows mastername), -ENOMEM, -EIO. */
int tfs_connect(const char *url, int timeout_ms, tfs_client **out);
/* Closes the connection; NULL is a no-op. Tensors got through it stay valid. */
void tfs_disconnect(tfs_client *c);
/* The queue key (default "tensor_lifecycle") and the node name sent with commands
 * (default: the hostname; must match the daemon's --node for holders to be reaped).
 * Copied. 0 or -EINVAL (NULL, empty or too long). */
int tfs_client_set_queue(tfs_client *c, const char *queue);
int tfs_client_set_node(tfs_client *c, const char *node);
/* Holds tfs_get takes from now on last seconds unless tfs_renew renews them in time (for
 * a process the daemon cannot see: another machine, a container, another pid namespace);
 * 0 (the default): the hold lasts while this process lives, which the daemon checks on
 * its node. 0 or -EINVAL (outside 0..86400). */
int tfs_client_set_lease(tfs_client *c, int seconds);

/* Queue commands (docs/contract.md): each LPUSHes one JSON command with a unique reply key and
 * waits for the answer. Errors: the errno the daemon answers (-EEXIST, -ENOENT, -EINVAL,
 * -ENOSPC...), -ETIMEDOUT (no reply within the timeout: no daemon serving the queue),
 * -EBADMSG (malformed reply), -EIO (connection lost; the next call reconnects).
 * tfs_create makes the tensor (shape has ndim dims; device -1 means the default,
 * TFS_DEVICE_CPU the host tier). */
int tfs_create(tfs_client *c, const char *name, tfs_dtype dtype, int ndim,
	       const int64_t *shape, int device);
/* Records this process (node, pid) as a holder, then maps the tensor as tfs_open does.
 * The hold stays after tfs_close: release it with tfs_delete (or it is reaped when the
 * process dies). On a mapping error the hold is released again. */
int tfs_get(tfs_client *c, const char *name, tfs_tensor **out);
/* Releases this process's hold when it has one, else drops the name's reference (the
 * tensor is freed when nothing else holds it). On the queue these are two commands: a
 * delete naming this process (ESRCH when it holds nothing), then a delete of the name. */
int tfs_delete(tfs_client *c, const char *name);
/* Extends this process's leased hold of name by the client's lease from now: 0, -ESRCH
 * (no leased hold: it ran out, or was taken without a lease), -EINVAL (no lease set), or
 * the errors above. */
int tfs_renew(tfs_client *c, const char *name);

/* Batches (docs/queue-batch.md): n commands pushed in one LPUSH and answered on one
 * reply key, so n creates or unlinks cost one round trip instead of n. Each item is its
 * own command and gets its own answer: not all-or-nothing, items that succeed stay done
 * when others fail. rcs (n ints, may be NULL) receives each item's result: 0, the errno
 * the daemon answered, or -ETIMEDOUT when its answer did not come within the client's
 * timeout (the command may still be served later). Returns 0 when every item succeeded,
 * else the first failing item's error with its message. Every argument is checked before
 * anything is sent: -EINVAL (NULL, n not 1..TFS_BATCH_MAX, a bad name, dtype or shape in
 * any item) sends nothing. -EIO: the connection broke (what was sent may be served). */
#define TFS_BATCH_MAX 1024
struct tfs_create_req {
	const char *name;
	tfs_dtype dtype;
	int ndim;
	const int64_t *shape;
	int device;                  /* < 0: the default */
};
/* Creates n tensors. out (n pointers, may be NULL) gets each made tensor mapped from its
 * create's answer, no further request (NULL for a failed item): the mapping is not a hold,
 * the name's reference keeps the tensor, as with tfs_open_meta; release with tfs_close. A
 * tensor made whose mapping failed stays made (its rcs says the mapping's error). */
int tfs_create_many(tfs_client *c, size_t n, const struct tfs_create_req *reqs, int *rcs,
		    tfs_tensor **out);
/* Drops the names' references, as rm does (a hold of this process is not released:
 * tfs_delete does that). */
int tfs_unlink_many(tfs_client *c, size_t n, const char *const *names, int *rcs);

/* Cross-process ordering (cuda backend): tfs_mark_written records an interprocess CUDA
 * event on stream (a cudaStream_t, NULL = default stream) and stores its handle in the
 * user xattr "user.tensorfs.event" of the tensor's file; tfs_wait_written makes stream
 * wait on the last event stored there (no CPU block). Tensors opened by path only
 * (-EBADF otherwise). On the host backend both are memory fences and return 0.
 * -ENODATA (wait: nothing marked yet), -ENODEV, -EIO. */
int tfs_mark_written(tfs_tensor *t, void *stream);
int tfs_wait_written(tfs_tensor *t, void *stream);

/* ---- Files <-> tensors: tfs_load and tfs_save (load.c, save.c, load_pipe.c) ----
 *
 * Bytes move between the file and the tensors' memory without FUSE: the tensors are
 * opened by path (tfs_open) and several threads read the file into them (host backend:
 * straight into the mapping; cuda: into pinned buffers, then cudaMemcpyAsync on several
 * streams). Formats: raw bytes, NumPy .npy, .safetensors (a directory of tensors, names
 * with '/' make subdirectories, "__metadata__" kept as the directory's attribute
 * user.safetensors.metadata).
 *
 * Errors: 0 or a negative errno, with tfs_errmsg() naming the file or tensor and the
 * reason. A failed tfs_load removes everything it made (dest does not exist after it); a
 * failed tfs_save leaves no file (it writes a temporary file beside file and renames it).
 * Both are thread-safe and may run concurrently. The pinned buffers of the cuda path are
 * allocated at the first use and kept for the next calls (tfs_load_release frees them). */
enum tfs_format { TFS_FORMAT_AUTO, TFS_FORMAT_RAW, TFS_FORMAT_NPY, TFS_FORMAT_SAFETENSORS,
		  TFS_FORMAT_MODEL_DIR /* tfs_save: a Hugging Face model directory */ };

struct tfs_load_opts {
	enum tfs_format format;       /* AUTO: .npy magic, a safetensors header, else the
				       * file name's extension, else raw */
	tfs_dtype dtype;              /* raw only (default TFS_U8) */
	int ndim;                     /* raw only: -1 (default) = one dim from the file size */
	int64_t shape[TFS_MAX_DIMS];
	int device;                   /* GPU ordinal; -1 (default): the directory's default */
	int threads;                  /* copy threads; 0 (default): min(12, CPUs)
				       * with via_file, else min(8, CPUs) */
	int via_file;                 /* 1 (default): through the tensors' files, the daemon
				       * filling each piece from this process's own open
				       * file (fill_ioctl.h), else spliced into 1 MiB
				       * writes; no CUDA context here.
				       * 0: mapped into this process (cuda: pinned buffers and
				       * cudaMemcpyAsync after the context's start-up) */
	/* Called from the calling thread about ten times a second, and once at the end. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	const volatile int *cancel;   /* when *cancel becomes nonzero: stop, -EINTR */
	int merge;                    /* 1: a directory of tensors (safetensors, a model
				       * directory) may go into an existing directory dest,
				       * none of its names existing there yet; a failure
				       * removes only what this load made. 0 (default):
				       * dest must not exist */
	int direct;                   /* how the file is read: 1 with O_DIRECT (large
				       * aligned requests from every copy thread, no copy
				       * through the page cache) where the file system
				       * allows it, else through the page cache; 0 through
				       * the page cache (default: faster than O_DIRECT on the
				       * GPU machine's disk, tests/bench/RESULTS.md); -1 with
				       * O_DIRECT when at most a tenth of the file is in the
				       * page cache (a cold file). TFS_LOAD_DIRECT=0|1 in the
				       * environment overrides -1. TFS_LOAD_PROFILE=1 prints the time of
				       * each stage (reads, copies, creates) to stderr */
};
/* Fills *o with the defaults above. */
void tfs_load_opts_init(struct tfs_load_opts *o);

/* Loads file into dest, a path on a tensorfs mount that must not exist yet: one tensor
 * (raw, npy) or a directory of tensors (safetensors). The file is checked whole before
 * anything is made (header, every tensor's dtype, shape and byte range, names); tensors
 * are then created and shaped in parallel and filled as they come. opts may be NULL
 * (defaults).
 *
 * file may be a Hugging Face model directory: the shards that model.safetensors.index.json
 * names in its weight_map (else every *.safetensors of the directory) go into the one
 * directory dest, each key a tensor of that name (as for one file), one pipeline across
 * all shards; the small files beside them (*.json, the index included, *.model, *.txt,
 * *.jinja; not hidden ones, not subdirectories) become u8 tensors of their bytes under
 * their own names. Every shard's header and the index are checked first: a key in two
 * shards, or one named like a small file (-EEXIST), a key that is also another's
 * directory (-EINVAL), a key the index places in a shard that lacks it or a shard it names
 * that is missing (-EBADMSG, -ENOENT) make nothing.
 *
 * Errors: -EEXIST (dest exists), -EBADMSG (malformed or truncated file),
 * -ENOTSUP (an .npy in Fortran order or big-endian; a dtype tensorfs lacks), -EINVAL (raw
 * size not a whole number of elements, or not the shape's; a tensor name that cannot be a
 * file name), -ENOSPC, -EINTR (cancelled), -EIO (a copy failed), the errnos of open(2),
 * read(2) and setxattr(2). */
int tfs_load(const char *file, const char *dest, const struct tfs_load_opts *opts);

struct tfs_save_opts {
	enum tfs_format format;       /* AUTO: for a directory, MODEL_DIR when it holds
				       * model.safetensors.index.json or config.json and
				       * file does not end in .safetensors, else
				       * safetensors; else by file name (.npy), else raw */
	int threads;                  /* copy threads; 0 (default): min(16, CPUs) when
				       * the output is filled through a mapping (below),
				       * min(32, 2 x CPUs) when via_file too, else
				       * min(8, CPUs) */
	int via_file;                 /* 0 (default): mapped into this process; 1: read
				       * through the tensors' files (no CUDA context here) */
	int replace;                  /* 1: replace an existing file (else -EEXIST) */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	const volatile int *cancel;
};
void tfs_save_opts_init(struct tfs_save_opts *o);
/* Writes the tensor (raw, npy) or the directory of tensors (safetensors, laid out as the
 * safetensors library does, so a load and a save give back the same bytes) at src to
 * file. On a local file system (ext4, xfs, btrfs, tmpfs, f2fs) the file's blocks are
 * allocated first and the copy threads fill a shared mapping of it, each its own stretch
 * (TFS_SAVE_MMAP=0 in the environment: pwrite), so the file is full-size before the first
 * byte lands and a full disk fails the save at the start.
 *
 * MODEL_DIR writes the directory file as transformers' from_pretrained reads one: the
 * small files (top-level u8 1-D tensors named *.json, *.model, *.txt, *.jinja) back as
 * files; the other tensors into safetensors shards, each where the stored index
 * (model.safetensors.index.json) puts it (a tensor it does not name: its last shard) and
 * a new index of the same metadata with metadata.total_size the tensors' bytes; without
 * an index, one model.safetensors. Shards without __metadata__ get {"format":"pt"}. A new
 * directory is written under a temporary name beside it and renamed (a failure leaves
 * nothing); with replace, an existing directory gets each file replaced in turn.
 *
 * Errors: -EEXIST, -EINVAL (a
 * directory as raw/npy or a tensor as safetensors), -ENOTSUP (a dtype with no .npy form: bf16, fp8), -EAGAIN (a tensor changed size while
 * saved), -EINTR, -EIO, the errnos of open(2), write(2) and getxattr(2). */
int tfs_save(const char *src, const char *file, const struct tfs_save_opts *opts);

/* Moves the tensor at path, or every tensor under the directory path (its whole tree), to
 * device: TFS_DEVICE_CPU (the host tier: "sleep") or a GPU ordinal ("wake"), through
 * user.tensor.device on each, several at once (docs/tiers.md). All or none: when one
 * move fails, those already made are moved back to where they were, and the first
 * failure is returned with a message naming its tensor (tfs_errmsg). Tensors already on
 * device are left as they are. A wake of a tensor whose bytes changed in host memory while
 * it slept fails with -EBADMSG. Errors: -EBUSY (another process holds one), -ENOSPC (the
 * tier is full), -EINVAL (a device the mount does not serve), -EBADMSG, -EIO (also when a
 * move back failed: the tensors are then on two tiers, the message says which),
 * the errnos of opendir(3) and getxattr(2). opts may be NULL (the defaults). */
struct tfs_move_opts {
	int threads;                  /* moves at once; 0 (default): 8 */
	/* Called after each tensor moved, from the thread that moved it, one call at a time:
	 * tensors and bytes moved so far and in all. NULL: none. */
	void (*progress)(void *arg, int done, int total, uint64_t done_bytes,
			 uint64_t total_bytes);
	void *arg;
};
int tfs_move(const char *path, int device, const struct tfs_move_opts *opts);

/* ---- Replicas: tfs_copy (copy_tree.c) ----
 * Copies the tensor src, or with recursive the directory src and every tensor under it,
 * into new tensors at dest (which must not exist; its parent on a tensorfs mount): each
 * made first with its source's dtype and shape on dest's mount's default device (a
 * directory's own user attributes, user.safetensors.metadata among them, copied), then
 * the bytes moved by several threads, 16 MiB at a time. src may be another node's
 * (docs/net.md): when src and dest are on one mount, dest's daemon fetches the bytes
 * from the owning node itself (the pull ioctl, core/pull_ioctl.h); else they are read and
 * written through the mounts. All or nothing: on any failure or cancel everything made
 * is removed, src untouched. Errors: -EEXIST (dest exists), -EISDIR (src a directory
 * without recursive), -ENOTSUP (src or dest not on a tensorfs mount), -ENODATA (a file
 * under src that is not a tensor), -EINVAL (dest inside src), -EINTR (cancelled),
 * -E2BIG (over 2^20 tensors), -ELOOP (deeper than 256), -ENOSPC, -ETIMEDOUT or
 * -EREMOTE (the owning node did not answer, or this daemon has no cluster key), -EIO
 * (src changed size meanwhile), the errnos of open(2), read(2), write(2), setxattr(2). */
struct tfs_copy_opts {
	int recursive;                /* 1: src may be a directory (copied whole) */
	int threads;                  /* copy threads; 0 (default): 8; at most 64 */
	/* Called from the calling thread about ten times a second, and once at the end. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	const volatile int *cancel;   /* when *cancel becomes nonzero: stop, -EINTR */
};
/* Fills *o with the defaults above (all 0). */
void tfs_copy_opts_init(struct tfs_copy_opts *o);
int tfs_copy(const char *src, const char *dest, const struct tfs_copy_opts *opts);

/* Frees the cached pinned buffers (none in use: call it when no tfs_load/tfs_save runs). */
void tfs_load_release(void);

#ifdef __cplusplus
}
#endif
#endif
