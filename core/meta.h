/* A tensor's metadata and its two encodings: the fields of the Redis hash (docs/contract.md) and
 * the JSON object of user.tensor.meta and queue replies (docs/contract.md, §8). No I/O. */
#ifndef TFS_META_H
#define TFS_META_H

#include <stddef.h>
#include <stdint.h>

#include "shape.h"
#include "tensorfs.h"

#define TFS_NODE_MAX 64
/* The host backend's handle: these 8 bytes, then the shared-memory object's name. */
#define TFS_HOST_MAGIC "TFSHOST1"
/* A VMM tensor's handle (docs/vmm.md): this magic, then its id, its allocation's size
 * and device as little-endian u64s; the memory itself only from the handle socket. */
#define TFS_VMM_MAGIC "TFSVMM01"
/* A handle socket's path at most (sun_path, with its terminating NUL). */
#define TFS_HSOCK_MAX 108
/* The attribute in which tfs_mark_written publishes a producer's IPC event; the daemon's
 * reads wait for the last one set. */
#define TFS_EVENT_XATTR "user.tensorfs.event"

struct tfs_meta {
	tfs_dtype dtype;
	struct tfs_shape shape;
	uint64_t bytes;
	int device;
	int64_t ctime;                 /* seconds since the epoch */
	int64_t mtime;
	/* Nanoseconds since the epoch of the last change to what a client maps (dtype,
	 * shape, device, owner, handle), 0 if unknown: a remote tensor's st_ctim, so that
	 * clients may cache the metadata while the attributes are unchanged. */
	int64_t ctime_ns;
	char node[TFS_NODE_MAX];
	int has_handle;                /* 0 while bytes == 0: nothing allocated */
	uint8_t ipc_handle[TFS_IPC_HANDLE_SIZE];
	uint64_t ipc_offset;
	int64_t refcount;
	char backend[8];               /* "host" or "cuda": how to read the handle */
	uint32_t mode, uid, gid;       /* mode holds permission bits only */
	/* The inode number the mount shows: random, made with the tensor and kept by renames
	 * (the record moves whole), so the kernel's node ids stay the same; 0 if unknown. */
	uint64_t ino;
	/* The inode number of the directory the tensor lives in, or another identity of it
	 * (the daemon's fs/tensors/tensor.c tfs_tensor_dir_id): the cuda backend's blocks hold
	 * tensors of one directory only (fs/mem/pool.h), and a restart finds the blocks' keys
	 * here. 0 if unknown (a record of an older daemon). */
	uint64_t dir;
	/* The checksum of the bytes as they went to sleep in the host tier (tier.h), checked
	 * when they wake on a GPU; 0: none (not asleep, or written since). Redis field "sum". */
	uint64_t sum;
	/* Set by a daemon in the user.tensor.meta it gives of another node's tensor (JSON
	 * "remote": true, never in Redis): its bytes are read and written through the
	 * mount's descriptor, the handle names memory on node `node`. */
	int remote;
	/* JSON only (user.tensor.meta, queue replies), never a Redis field: the handle socket
	 * that hands out the memory of a tensor whose handle grants nothing by itself (a VMM
	 * one, docs/vmm.md), for a client that has no file of the mount open; "" otherwise. */
	char hsock[TFS_HSOCK_MAX];
};

/* Field/value pairs of the Redis hash. Values point into the struct's own buffers, so it
 * lives as long as the caller keeps it. */
#define TFS_META_NFIELDS 19
struct tfs_meta_fields {
	int n;
	const char *field[TFS_META_NFIELDS];
	const char *value[TFS_META_NFIELDS];
	size_t len[TFS_META_NFIELDS];
	char buf[TFS_META_NFIELDS][128];
};

void tfs_meta_to_fields(const struct tfs_meta *m, struct tfs_meta_fields *f);

/* Fills *m from hash field/value pairs (as HGETALL returns them). Fields it does not know
 * (user attributes, holders) are ignored. Every value is checked: a record edited into
 * garbage gives -EBADMSG with the reason in why (may be NULL), and *m is then undefined. */
int tfs_meta_from_fields(struct tfs_meta *m, size_t n, const char *const *field,
			 const size_t *flen, const char *const *value, const size_t *vlen,
			 char *why, size_t whylen);

/* JSON text of the metadata (handle as hex), name included when not NULL; malloc'd, NULL
 * only when memory runs out. */
char *tfs_meta_to_json(const struct tfs_meta *m, const char *name);
/* The same with "id":<id>,"ok":true in front when id is not NULL: a queue reply. */
char *tfs_meta_json(const struct tfs_meta *m, const char *name, const char *id);
/* Parses what tfs_meta_to_json wrote. 0 or -EBADMSG. */
int tfs_meta_from_json(const char *s, size_t len, struct tfs_meta *m);

/* The "name" of a JSON text tfs_meta_json wrote (a queue reply's; user.tensor.meta has one
 * for a VMM tensor), into out (size bytes with the NUL). 0, -ENODATA (none) or -EBADMSG
 * (not JSON, or a name that tfs_name_check refuses or that does not fit). */
int tfs_meta_json_name(const char *s, size_t len, char *out, size_t size);
/* "EEXIST" for EEXIST (positive or negative), "E<n>" for unknown ones. */
const char *tfs_errno_name(int err);
/* The errno for a name tfs_errno_name gives, or EIO when unknown. */
int tfs_errno_from_name(const char *name);

/* A tensor name as docs/contract.md uses it: the path under the mount without the leading slash.
 * 0, -EINVAL (empty, "//", "." or ".." components, leading or trailing slash) or
 * -ENAMETOOLONG (a component over 255 bytes, or the whole over 4095). */
int tfs_name_check(const char *name);
/* tfs_name_check with another limit on the whole name (the daemon's paths: TFS_PATH_MAX). */
int tfs_name_check_len(const char *name, size_t max);

#endif
