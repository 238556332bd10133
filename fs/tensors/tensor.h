/* The daemon's tensors: the table that finds them (table.c), their lifetime and
 * reference counts (tensor.c) and their queue holders (holders.c). Every function here runs
 * under tfs_tensors.ns */
#ifndef TFS_TENSOR_H
#define TFS_TENSOR_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "meta.h"
#include "store/writer.h"

struct tfs_dirrec;
struct tfs_store_claim;

struct tfs_holder {
	char node[TFS_NODE_MAX];
	int64_t pid;
	int64_t uid;                 /* the per-user queue's sender, -1: the shared queue */
	int64_t expires;             /* a lease's end (tfs_now seconds); 0: lasts while pid
	                                lives on this node */
	int64_t count;
	struct tfs_holder *next;
};

/* A tensor this daemon holds memory for. Lives while refcount > 0. */
struct tfsd_tensor {
	char *name;                  /* path under the mount, no leading slash */
	char *key;                   /* its Redis hash: <prefix>:tensor:<name>, or the
	                                <prefix>:unlinked:<node>:<n> key once unlinked */
	struct tfs_meta meta;        /* meta.refcount is the count below, kept in step */
	struct tfs_alloc *alloc;     /* NULL while bytes == 0 */
	int linked;                  /* the name's reference */
	int64_t pinned_until;        /* the kernel's reference, or 0: replaced by a rename
	                                while the kernel knew its node, which an open that
	                                looked the name up before the rename still opens
	                                (as on a local file system). Goes when the kernel
	                                forgets the node, at the latest at this
	                                CLOCK_MONOTONIC ns (a kernel that keeps the node) */
	int64_t opens;               /* open file handles on the mount */
	struct tfs_holder *holders;  /* queue holders, each with its count */
	struct tfs_file *files;      /* open files, for EBUSY on reshape */
	struct timespec atime, mtime, ctime;
	int dirty;                   /* mtime changed since the record was written */
	int64_t wtime_ns;            /* the last write()'s time, stored by op_write without
	                                ns (atomic), 0 once folded into mtime and ctime */
	int has_mark;                /* mark: the last user.tensorfs.event set on it (an */
	uint8_t mark[TFS_IPC_HANDLE_SIZE];  /* IPC event); reads wait for it. Under io. */
	pthread_rwlock_t io;         /* read/write copies share it; resize/free take it alone */
	size_t resync_slot;          /* 1 + its place in a resync under way, 0: none */
	int moving;                  /* a move between devices copies it, ns released
	                                (tfs_tensor_set_device): what would take io under
	                                ns, open it or hold it answers EBUSY meanwhile, and
	                                it is not freed until the move ends */
	struct tfsd_tensor *next;     /* hash chain */
	struct tfsd_tensor *ino_next; /* chain of the table's index by inode number, */
	uint64_t ino_key;            /* under the meta.ino it had when inserted */
};

/* What a tensor's memory is made with (backend.h alloc): its device, owner, mode and
 * directory. */
struct tfs_alloc_params {
	int device;
	uid_t uid;
	gid_t gid;
	mode_t mode;
	uint64_t dir;
};

/* The per-open state of a file: fh of fuse_file_info points here. */
struct tfs_file {
	struct tfsd_tensor *t;        /* NULL for a tensor owned by another node */
	/* t's, noted under ns when the file was opened: a write that gives t its first memory
	 * makes it with these before it takes ns (tfs_tensor_grow_prepare). */
	struct tfs_alloc_params ap;
	pid_t pid;
	int writable;                /* opened for writing (fills need it: fill_ioctl.h) */
	struct tfs_file *next;       /* the tensor's other open files */
	/* Another node's tensor (t NULL): its name, node and inode number when opened, for
	 * its bytes over the network (net/net.h); rname NULL otherwise. */
	char *rname;
	char rnode[TFS_NODE_MAX];
	uint64_t rino;
	/* The name this open created the tensor under (a CREATE through the mount, which the
	 * kernel checked as a create: a read-only mount, a security module's rules), or NULL:
	 * the batch create goes only on such a file, still under that name
	 * (fuse/ops_mkbatch.c). */
	char *created;
};

struct tfs_table {
	struct tfsd_tensor **buckets;
	struct tfsd_tensor **by_ino;  /* nbuckets chains too */
	size_t nbuckets, count;
	uint64_t unlinked_seq;
};

/* --- tensor table and lifetime (tensor.c); callers hold tfs_tensors.ns --- */
int tfs_table_init(struct tfs_table *tb);
/* Adds t under t->key / takes it out (table.c). */
void tfs_table_insert(struct tfsd_tensor *t);
void tfs_table_remove(struct tfsd_tensor *t);
/* Saves the refcount, or frees the tensor (memory, record, struct) at 0 (tensor.c). */
void tfs_tensor_drop_if_unused(struct tfsd_tensor *t);

/* The linked tensor named name; NULL when there is none. */
struct tfsd_tensor *tfs_table_find(const char *name);
/* The tensor whose inode number is ino, linked or not; NULL when there is none: what has
 * no name to be found by (the handle socket's request by descriptor). */
struct tfsd_tensor *tfs_table_find_ino(uint64_t ino);
/* The tensor whose Redis key is key (an unlinked one's too); NULL when there is none. */
struct tfsd_tensor *tfs_table_find_key(const char *key);
/* A create is refused with -ENAMETOOLONG past the path bounds and -EDQUOT when its owner
 * uid has max_user_tensors (quota.h). A create in two halves, so that the queue worker sends the claims of a batch of creates
 * in one round trip: tfs_tensor_claim makes the checks of a create and sends the claim of
 * the name (0 with *claim set, or -EEXIST/-EINVAL (no such device)/-ENOENT (no parent
 * dir)/-EIO; parent_rec as tfs_store_link_send's); tfs_tensor_create_claimed makes the
 * tensor, empty (bytes 0) or shaped to dt and sh when sh is not NULL (the memory is
 * allocated while the claim is on its way), with its record; refs: linked = 1 plus open.
 * It awaits the claim before it writes anything. Nothing may change the name between the
 * two: hold ns throughout. Its errors: tfs_tensor_claim's and tfs_tensor_shape's. A claim
 * not used goes to tfs_tensor_claim_drop. */
int tfs_tensor_claim(const char *name, int device, uid_t uid,
		     const struct tfs_dirrec *parent_rec, struct tfs_store_claim **claim);
int tfs_tensor_create_claimed(struct tfs_store_claim *claim, const char *name, tfs_dtype dt,
			      const struct tfs_shape *sh, int device, uid_t uid, gid_t gid,
			      mode_t mode, const struct tfs_dirrec *parent_rec, int open,
			      struct tfsd_tensor **out);
void tfs_tensor_claim_drop(const char *name, struct tfs_store_claim *claim);
/* tfs_tensor_create_claimed for a name the caller has claimed already (tfs_tensor_claim, then
 * tfs_store_link_wait answered 0): on error the name is given back. f, when not NULL, is the
 * file it is created open for (as tfs_tensor_get_open, in the same record write). Both take
 * the parent directory's record (its identity decides where the memory may live). */
int tfs_tensor_create_linked(const char *name, tfs_dtype dt, int device, uid_t uid, gid_t gid,
			     mode_t mode, const struct tfs_dirrec *parent_rec, struct tfs_file *f,
			     struct tfsd_tensor **out);
/* The identity of the directory parent (a path) whose record is d, as struct tfs_meta's
 * dir: its inode number, or when the record has none a hash of the path. */
uint64_t tfs_tensor_dir_id(const char *parent, const struct tfs_dirrec *d);
/* Before a rename of t to name in another directory: its memory goes where tensors of that
 * directory may share it (the cuda backend keeps each directory's tensors in blocks of
 * their own, fs/mem/pool.h). -EBUSY when it would have to move and a process other than
 * pid's holds it (open, or through the queue; pid 0: no check), -ENOENT when the directory does
 * not exist, -EIO, -ENOSPC. Both write the record when they succeed. On error
 * t->meta.dir tells where the memory is: tfs_tensor_set_dir with the old t->meta.dir
 * (pid 0) takes it back, as when the rename then fails. Caller holds ns. */
int tfs_tensor_place(struct tfsd_tensor *t, const char *name, pid_t pid);
int tfs_tensor_set_dir(struct tfsd_tensor *t, uint64_t dir, pid_t pid);
/* Setting user.tensor.device: a tensor without memory only records it; one with memory
 * moves there (a device-to-device copy; its handle and offset change) unless a process
 * other than pid's holds it (open, or through the queue; pid 0: no check): -EBUSY, as
 * for a backend that cannot move. -EINVAL for a device not served, -ENOSPC when the device
 * is full, -EIO; on error nothing changed. Writes the record. Caller holds ns; the copy
 * runs with ns released (t->moving set, the io lock held exclusive), so t may be gone
 * when it returns, ns held again: the caller must not touch t afterwards. -EBUSY when t
 * is moving already.
 * device may be TFS_DEVICE_CPU, the host tier (docs/tiers.md): moving there records the
 * checksum of the bytes moved (meta.sum); moving away checks it: -EBADMSG (logged, naming
 * the tensor) when the bytes changed meanwhile, the tensor staying where it is. */
int tfs_tensor_set_device(struct tfsd_tensor *t, int device, pid_t pid);
/* The tensor may be written while asleep in the host tier (opened for writing, written,
 * held through the queue): its sleep checksum goes (meta.sum 0, the record written), so
 * that its next wake is not refused for bytes its writers changed. Caller holds ns. */
void tfs_tensor_unsum(struct tfsd_tensor *t);
/* chmod/chown of a tensor: the backend follows (its memory may move: the handle is taken
 * again under the io lock). When the backend refuses, nothing changed. Caller holds ns. */
int tfs_tensor_set_owner(struct tfsd_tensor *t, uid_t uid, gid_t gid, mode_t mode);
/* Sets dtype and shape, allocating/resizing memory; -EINVAL/-ENOSPC/-EBUSY on refusal. */
int tfs_tensor_shape(struct tfsd_tensor *t, tfs_dtype dt, const struct tfs_shape *sh,
		     int busy_check);
/* Sets the byte size as a file does (shape becomes 1-D). -EBUSY when the tensor has
 * memory and a process other than pid's holds it (open, or through the queue). */
int tfs_tensor_resize(struct tfsd_tensor *t, uint64_t bytes, pid_t pid);
/* A write's growth of a tensor that has no memory yet, in three steps, so that the
 * allocation is made without ns (the backend's calls are thread-safe), which every
 * metadata operation waits for:
 * - tfs_tensor_grow_prepare, without ns: g->a, memory of bytes made with f's parameters
 *   (noted at open), or NULL when there is none to make (bytes past
 *   TFS_GROW_PREPARE_MAX, the device not served, the backend refused:
 *   tfs_tensor_resize_pre makes it then, as tfs_tensor_resize does);
 * - tfs_tensor_resize_pre, under ns: tfs_tensor_resize to bytes, taking g->a as t's memory
 *   when t still has none, bytes is the size g->a was made for and t's parameters are
 *   still g's (then g->a is NULL on return; a chmod, chown or move in between leaves it);
 * - tfs_tensor_grow_discard, without ns: frees what was left in g->a.
 * The bound keeps what a writer can hold past the checks tfs_tensor_resize makes to one
 * small allocation per FUSE worker, for the time of one request. */
#define TFS_GROW_PREPARE_MAX ((uint64_t)1 << 20)
struct tfs_grow {
	struct tfs_alloc *a;
	uint64_t bytes;
	struct tfs_alloc_params ap;
};
void tfs_tensor_grow_prepare(const struct tfs_file *f, uint64_t bytes, struct tfs_grow *g);
int tfs_tensor_resize_pre(struct tfsd_tensor *t, uint64_t bytes, pid_t pid,
			  struct tfs_grow *g);
void tfs_tensor_grow_discard(struct tfs_grow *g);
/* Writes the whole record (after metadata changed). */
int tfs_tensor_save(struct tfsd_tensor *t);
/* Reference changes; when the count reaches 0 the memory and the record go. */
void tfs_tensor_put_open(struct tfs_file *f);
int tfs_tensor_get_open(struct tfsd_tensor *t, struct tfs_file *f);
/* Drops the name's reference. When the tensor lives on (open or held), *ukey (when ukey
 * is not NULL) is a malloc'd copy of the key it lives under now, else NULL. 0; -ENOENT
 * (unlinked already), -EIO (Redis), -ENOMEM: nothing changed. Frees the memory only when
 * the name was the last reference. */
int tfs_tensor_unlink(struct tfsd_tensor *t, char **ukey);
/* The same for the tensor a rename replaces: it also keeps the kernel's reference
 * (pinned_until), so *ukey is set unless the tensor could not be kept (then it is not
 * pinned); the caller detaches the node with tfs_node_detach_pinned, or unpins when
 * there is none. */
int tfs_tensor_unlink_replaced(struct tfsd_tensor *t, char **ukey);
/* Drops the kernel's reference of the tensor under key (an unlinked one's), if it has one:
 * the tensor goes when nothing else holds it. Unknown keys are ignored. */
void tfs_tensor_unpin_key(const char *key);
/* Drops the kernel's references of the tensors whose node went (tfs_node_take_unpinned). */
void tfs_tensor_unpin_forgotten(void);
/* The reaper's part: clears t's kernel reference when its time ran out by now_ns
 * (tfs_mono_ns) and returns 1, the caller then dropping t if unused; else 0. */
int tfs_tensor_pin_expired(struct tfsd_tensor *t, int64_t now_ns);
int tfs_tensor_rename(struct tfsd_tensor *t, const char *newname);
/* t's name and key follow its record, which a tree move moved already (rename.c): 0,
 * -ENAMETOOLONG, -ENOMEM (t keeps its old name). */
int tfs_tensor_renamed(struct tfsd_tensor *t, const char *newname);

/* --- directory renames (rename.c); callers hold ns --- */
/* Moves directory from and its whole tree to to (which must not exist, or was removed
 * as an empty directory just before) in one step in Redis, then the tensors of the table
 * under it: 0, or as tfs_store_move_tree: -ENOENT, -EEXIST, -EREMOTE, -ENAMETOOLONG,
 * -ENOMEM, -EIO. After -EIO the move is settled by the next resync
 * (tfs_tensor_moves_settle): until then tfs_d.moves_pending makes every metadata change
 * fail with -EIO, so that nothing is written under names Redis may no longer have. */
int tfs_tensor_move_dir(const char *from, const char *to);
/* Asks Redis how each move whose answer was lost ended and makes the table follow: 0 or
 * -EIO (those not settled are kept for the next call). */
int tfs_tensor_moves_settle(void);
/* One more hold of (node, pid), taken by uid (-1: a trusted sender), lasting lease
 * seconds unless renewed (0: while pid lives on this node): -EPERM when that (node, pid)
 * holds it already for another sender (a pid reused before the reaper ran), -EMLINK when
 * t has max_holds holds, -EDQUOT when uid has max_user_holds (quota.h). */
int tfs_tensor_hold(struct tfsd_tensor *t, const char *node, int64_t pid, int64_t uid,
		    int64_t lease);
/* Extends the lease of (node, pid)'s hold to lease seconds from now: -ENOENT as release. */
int tfs_tensor_renew(struct tfsd_tensor *t, const char *node, int64_t pid, int64_t uid,
		     int64_t lease);
/* Drops one hold of (node, pid); -ENOENT when it holds none, or uid is not -1 and the
 * hold is not uid's. */
int tfs_tensor_release(struct tfsd_tensor *t, const char *node, int64_t pid, int64_t uid);
/* Takes away every hold of (node, pid), or of every holder when node is NULL (the owner
 * or root revoking, xattr.c): the number of holders dropped, or -ENOENT when there was
 * none. t may be freed by it (nothing else holding it). */
int tfs_tensor_revoke(struct tfsd_tensor *t, const char *node, int64_t pid);
/* t's holders, a line each: "<node>:<pid> <count> <uid> <lease end, 0: none>\n", malloc'd
 * (*len its length), or NULL when out of memory. */
char *tfs_tensor_holds_text(const struct tfsd_tensor *t, size_t *len);
/* Folds the last write()'s time into mtime and ctime where it is later: write() stores it
 * atomically, not under ns, so that writes never wait for metadata. Caller holds ns;
 * every reader of mtime/ctime calls it first, and a setattr of mtime before setting it
 * (a write after a utimensat into the future leaves that future mtime). */
void tfs_tensor_fold_times(struct tfsd_tensor *t);
/* Drops holders of this node whose process is gone, holds whose lease ran out, and the
 * kernel's references of replaced tensors whose time ran out (tfs_tensor_pin_expired). */
void tfs_tensor_reap(void);
int64_t tfs_tensor_refcount(const struct tfsd_tensor *t);
/* Frees every tensor and its record (at unmount). */
void tfs_tensor_shutdown(void);
/* 1 when a process other than pid has it open, or a queue holder holds it. */
int tfs_tensor_busy(const struct tfsd_tensor *t, pid_t pid);
/* Calls fn for each tensor; fn may not add or remove tensors. */
void tfs_table_foreach(void (*fn)(struct tfsd_tensor *, void *), void *arg);

#endif
