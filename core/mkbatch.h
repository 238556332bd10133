/* The ioctl by which a process makes many tensors of one directory in one request, each
 * typed and sized: a load of a checkpoint of hundreds of tensors would otherwise make them
 * one at a time, since the kernel holds the directory's lock across every create through
 * it (a lookup, a create and the daemon's claim of the name in Redis). libtensorfs's loads
 * through the mount use it (lib/load.c); the daemon serves it (fs/fuse/ops_mkbatch.c).
 *
 * The ABI between the two, shared by both sides of this repository:
 *  - Issued on the file whose open created a tensor (O_CREAT through the mount: EPERM for any
 *    other descriptor, and once the tensor was renamed), opened for writing (EBADF
 *    otherwise): the tensors are made in that tensor's directory. That create is what the
 *    kernel checked of the caller as for any create there (a read-only mount, a security
 *    module's rules on making files, the walk to the directory); a loader makes the first
 *    tensor of each batch with a create of its own and sends the rest on it. The daemon then
 *    checks, as the caller, write and search on the directory (not on those above it, as
 *    the kernel does not for a create through an open directory) and the owner's tensor
 *    quota. ENOTTY: an older daemon, or a directory's descriptor (the caller makes the
 *    tensors one by one).
 *  - data holds count entries (1..TFS_MK_COUNT_MAX), each: a 16-bit name length (1..255),
 *    the dtype (the tfs_dtype value), the number of dims (0..TFS_MAX_DIMS), that many
 *    64-bit dims, then the name: a single component (no '/', no NUL, not "." or "..").
 *    Numbers are in the host's byte order and need no alignment. Anything else, a count
 *    that does not match the entries, bytes left over, or flags other than TFS_MK_DEVICE
 *    and TFS_MK_SELF: EINVAL, and nothing is made.
 *  - With TFS_MK_SELF, the first entry names the tensor the request is issued on (its
 *    name as it is now: EINVAL otherwise) and shapes it, as a setxattr of its shape by the
 *    caller would (EBUSY where another process holds it and its size would change), on the
 *    device it is on; it counts in made. So the tensor a loader creates to carry the
 *    request is typed by it too, by the thread that opened it.
 *  - The tensors are made in order, each with mode's permission bits (0777 of it; the
 *    caller's umask already applied) and its directory's group rules, on device when flags
 *    has TFS_MK_DEVICE (a GPU ordinal or TFS_DEVICE_CPU; EINVAL when the mount does not
 *    serve it), else on the directory's default device. The first that fails stops the
 *    batch: the call still succeeds, with made the number of tensors made (entries
 *    0..made-1) and err that entry's positive errno (EEXIST, ENOSPC, EDQUOT, EFBIG,
 *    EACCES...); err 0 when all were made. What was made stays: the caller removes it if it
 *    gives up.
 *  - The tensors are not opened: the caller opens each by name (O_NOFOLLOW, and checks it
 *    is a regular file of its own: another user may have put something else there since). */
#ifndef TFS_MKBATCH_H
#define TFS_MKBATCH_H

#include <linux/ioctl.h>
#include <stddef.h>
#include <stdint.h>

#include "shape.h"

#define TFS_MK_DATA 16352
#define TFS_MK_DEVICE 1u        /* flags: device is set */
#define TFS_MK_SELF 2u          /* flags: the first entry is the tensor the request is on */
#define TFS_MK_NAME_MAX 255
#define TFS_MK_COUNT_MAX 256    /* entries per request: bounds the daemon's hold of ns */

struct tfs_mk_req {
	uint32_t count;         /* entries in data */
	uint32_t flags;
	int32_t device;
	uint32_t mode;
	uint32_t made;          /* out */
	int32_t err;            /* out */
	uint8_t data[TFS_MK_DATA];
};

/* 16376 bytes: within the 14 bits an ioctl number gives its argument's size. */
#define TFS_IOC_MKBATCH _IOWR(0xF7, 0x03, struct tfs_mk_req)

/* One entry, as parsed: name points into the request (len bytes, no NUL). */
struct tfs_mk_entry {
	const char *name;
	size_t len;
	tfs_dtype dtype;
	struct tfs_shape shape;
};

/* Starts an empty request: count, made, err 0, the rest as given. *used is set to 0. */
void tfs_mk_init(struct tfs_mk_req *q, uint32_t flags, int32_t device, uint32_t mode,
		 size_t *used);
/* Appends an entry at *used (advanced): 0, -ENOSPC when data has no room for it or the
 * request holds TFS_MK_COUNT_MAX entries (the request unchanged), -EINVAL for a name or
 * dtype the ABI above refuses or a shape of more than TFS_MAX_DIMS dims. No I/O. */
int tfs_mk_add(struct tfs_mk_req *q, size_t *used, const char *name, size_t len,
	       tfs_dtype dt, const struct tfs_shape *sh);
/* Reads the entry at *off of data's first used bytes (advancing *off): 0, or -EINVAL for
 * anything the ABI refuses (a truncated entry included). No I/O. */
int tfs_mk_next(const uint8_t *data, size_t used, size_t *off, struct tfs_mk_entry *e);
/* Checks a whole request of size bytes as the daemon received it: 0 when it is exactly
 * sizeof(struct tfs_mk_req), its flags known and its count entries fill its data up to
 * the last used byte with only zeros after it, count at most TFS_MK_COUNT_MAX, -EINVAL
 * otherwise. *used: the bytes of
 * data the entries take. */
int tfs_mk_check(const struct tfs_mk_req *q, size_t size, size_t *used);

#endif
