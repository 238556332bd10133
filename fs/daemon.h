/* State shared by the daemon's parts: options, the tensor table, the Redis link, the
 * backend. Private to fs/.
 *
 * LOCK ORDER. A thread may take a lock only while holding locks above it in this list:
 *
 *   1. tfs_d.ns          the namespace (tfs_ns_lock): the tensor table, every tensor's
 *                        metadata, every check-then-act on names. Metadata operations and
 *                        the queue worker take it; read and write do not.
 *   2. tensor->io        a tensor's rwlock. read/write hold it shared while copying, without
 *                        ns; resizing, freeing, owner moves and written marks hold it
 *                        exclusive, always under ns. So a thread holding io never takes ns
 *                        (op_write lets go of io before it takes ns to grow the tensor).
 *   3. backend locks     backend_cuda.c (slots, zeroing, marks, memfd areas, start-up),
 *                        pool.c, backend_host.c: taken inside backend calls only.
 *   4. leaves            wb.c's queue, dcache.c, kcache.c, node.c, ops_dir.c's open
 *                        directories, loop.c, lockstats: each held for a few instructions,
 *                        calling out of its module with none of them held.
 *
 * No unbounded wait under ns or an exclusive io: Redis round trips under ns are bounded by
 * the command timeout (1 s); a create waits for its claim with ns released (ops_file.c).
 * One known exception, under io shared: a read waits for the producer's written mark
 * (tfs_op_read), which blocks metadata changes of that tensor until the mark is reached.
 * Dropping a name from the kernel takes the kernel's lock of its directory, which a
 * request holds while it waits for ns: it is done from kcache.c's own thread, never
 * under ns. */
#ifndef TFS_DAEMON_H
#define TFS_DAEMON_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "backend.h"
#include "meta.h"
#include "redisconn.h"

struct tfs_opts {
	char *redis;             /* URL, NULL: start a private redis-server */
	char *backend;           /* "auto", "host", "cuda" */
	char *node;
	char *prefix;
	char *queue;
	char *max_bytes;         /* text: 64G, 512M, ... */
	char *log;               /* log file; default stderr (foreground) or syslog */
	int device;
	int threads;                 /* FUSE workers (--threads) */
	int foreground;
	int debug;
	int allow_other;
	int page_cache;              /* --page-cache: no direct_io (measurement only) */
	double entry_timeout;        /* -o entry_timeout: seconds the kernel keeps a name */
	int show_help;
	int show_version;
};

struct tfs_holder {
	char node[TFS_NODE_MAX];
	int64_t pid;
	int64_t count;
	struct tfs_holder *next;
};

/* A tensor this daemon holds memory for. Lives while refcount > 0. */
struct tfs_tensor {
	char *name;                  /* path under the mount, no leading slash */
	char *key;                   /* its Redis hash: <prefix>:tensor:<name>, or the
	                                <prefix>:unlinked:<node>:<n> key once unlinked */
	struct tfs_meta meta;        /* meta.refcount is the count below, kept in step */
	struct tfs_alloc *alloc;     /* NULL while bytes == 0 */
	int linked;                  /* the name's reference */
	int64_t opens;               /* open file handles on the mount */
	struct tfs_holder *holders;  /* queue holders, each with its count */
	struct tfs_file *files;      /* open files, for EBUSY on reshape */
	struct timespec atime, mtime, ctime;
	int dirty;                   /* mtime changed since the record was written */
	int has_mark;                /* mark: the last user.tensorfs.event set on it (an */
	uint8_t mark[TFS_IPC_HANDLE_SIZE];  /* IPC event); reads wait for it. Under io. */
	pthread_rwlock_t io;         /* read/write copies share it; resize/free take it alone */
	struct tfs_tensor *next;     /* hash chain */
};

/* The per-open state of a file: fh of fuse_file_info points here. */
struct tfs_file {
	struct tfs_tensor *t;        /* NULL for a tensor owned by another node */
	pid_t pid;
	struct tfs_file *next;       /* the tensor's other open files */
};

struct tfs_table {
	struct tfs_tensor **buckets;
	size_t nbuckets, count;
	uint64_t unlinked_seq;
};

struct tfs_daemon {
	struct tfs_opts o;
	struct tfs_redis_url url;
	char url_text[512];
	uint64_t max_bytes;
	const struct tfs_backend_ops *be_ops;
	struct tfs_backend *be;
	pthread_mutex_t ns;          /* the namespace: table, tensor metadata, check-then-act */
	struct tfs_table table;
	volatile int stopping;
	volatile int redis_down;     /* a Redis call failed; the queue thread resyncs */
	pid_t redis_pid;             /* private redis-server, 0 when --redis was given */
	char rundir[256];
	char node_queue[512];        /* the queue of commands forwarded to this node */
	pthread_t queue_thread;
	int queue_started;
	int splice_reads;            /* read replies splice from the backend (ops.c) */
};

extern struct tfs_daemon tfs_d;

/* The namespace lock, in one place: the one lock every metadata operation takes, so the
 * place to measure how long it is held and waited for. */
#ifdef TFS_LOCK_STATS
/* make LOCK_STATS=1: the lock's hold and wait times, logged at unmount (lockstats.c). */
void tfs_ns_lock(void);
void tfs_ns_unlock(void);
void tfs_ns_stats_log(void);
#else
static inline void tfs_ns_lock(void)
{
	pthread_mutex_lock(&tfs_d.ns);
}

static inline void tfs_ns_unlock(void)
{
	pthread_mutex_unlock(&tfs_d.ns);
}

static inline void tfs_ns_stats_log(void)
{
}
#endif

/* --- redis link (rlink.c): one connection per thread, reconnected on demand --- */
/* The calling thread's connection, or NULL while Redis is unreachable (logged once). */
redisContext *tfs_rl_get(void);
/* Runs a printf-style command (hiredis format) on the thread's connection, after
 * waiting for the write-behind queue (tfs_wb_sync), so what it reads includes this
 * node's own writes. NULL on failure with *rc = -EIO (Redis down: the connection is
 * dropped, redis_down set), -EPROTO (an error reply, logged) or -ENOMEM. */
redisReply *tfs_rl_cmdf(int *rc, const char *fmt, ...);
/* tfs_rl_cmdf without that wait: for reads that do not depend on this node's writes
 * (popping the lifecycle queue). */
redisReply *tfs_rl_cmdf_unordered(int *rc, const char *fmt, ...);
/* An already formatted command (RESP), unordered, with tfs_rl_cmdf's errors. */
redisReply *tfs_rl_run(int *rc, const char *cmd, size_t len);
void tfs_rl_close_thread(void);
/* Records that Redis is unreachable (logged once a second); the queue thread resyncs. */
void tfs_rl_mark_down(const char *why);
/* Counts the failures so far: a connection made before the last one is suspect. */
unsigned tfs_rl_epoch(void);
/* 0 while Redis is reachable as far as the daemon knows, else -EIO: metadata changes
 * check it before changing anything, as their Redis writes are no longer synchronous. */
int tfs_rl_ok(void);

/* --- write-behind of records (wb.c): one thread, one connection, queue order --- */
/* Queue a write; 0 or -ENOMEM. Before tfs_wb_start (and after tfs_wb_stop) the write runs
 * at once on the calling thread's connection. Errors Redis returns later are logged. */
int tfs_wb_cmdv(int argc, const char **argv, const size_t *len);
int tfs_wb_cmdf(const char *fmt, ...);
/* Queue an HSET of the whole record m under key, from a copy of both: the writer
 * formats it, outside the namespace lock. replace: DEL the key first (a stale record's
 * other fields go). 0 or -ENOMEM. */
int tfs_wb_save(const char *key, const struct tfs_meta *m, int replace);
/* While on, the calling thread's writes wake the writer only when it turns it off (or
 * waits for the writer): FUSE workers, around a request, so the reply goes first. */
void tfs_wb_defer_wakes(int on);
/* A command whose reply matters (claiming a name), answered after everything queued
 * before it, in two halves so that several calls share one round trip: queue the command
 * (NULL with *rc -EIO/-ENOMEM), and later wait for its reply (NULL with *rc
 * -EIO/-EPROTO), which frees the call. Every call sent must be waited for. */
struct tfs_wb_call;
struct tfs_wb_call *tfs_wb_sendf(int *rc, const char *fmt, ...);
redisReply *tfs_wb_wait(struct tfs_wb_call *call, int *rc);
/* Holds back the calling thread's writes (tfs_wb_cmdv/cmdf) until the end, to hand them
 * to the writer in one wake-up. A call, tfs_wb_sync or an ordered read in between sends
 * them first, so order holds; end the group before releasing the lock under which the
 * writes were decided, or another thread may read Redis behind them. */
void tfs_wb_group_begin(void);
void tfs_wb_group_end(void);
/* Waits until everything queued so far is in Redis: 0, or -EIO while Redis is away. */
int tfs_wb_sync(void);
/* Wakes the writer with nothing queued (so it turns on tracking for a new subscriber). */
void tfs_wb_kick(void);
int tfs_wb_start(void);
/* Sends what is queued (a few tries if Redis is away, then drops it) and stops. */
void tfs_wb_stop(void);

/* --- Redis keys (records.c) --- */
/* Room for any key: a prefix, a kind, a path of up to 4095 bytes. */
#define TFS_KEYMAX 4400
/* <prefix>:<kind>:<name> into buf; -ENAMETOOLONG when it does not fit. */
int tfs_key(char *buf, size_t size, const char *kind, const char *name);
/* The parent directory of name ("" for the root) and the last component. */
void tfs_split(const char *name, char *parent, size_t psize, const char **base);

/* --- tensor table and lifetime (tensor.c); callers hold tfs_d.ns --- */
int tfs_table_init(struct tfs_table *tb);
/* The linked tensor named name; NULL when there is none. */
struct tfs_tensor *tfs_table_find(const char *name);
/* The tensor whose Redis key is key (an unlinked one's too); NULL when there is none. */
struct tfs_tensor *tfs_table_find_key(const char *key);
/* A create in two halves, so that the queue worker sends the claims of a batch of creates
 * in one round trip: tfs_tensor_claim makes the checks of a create and sends the claim of
 * the name (0 with *claim set, or -EEXIST/-EINVAL (no such device)/-ENOENT (no parent
 * dir)/-EIO; parent_rec as tfs_rec_link_send's); tfs_tensor_create_claimed makes the
 * tensor, empty (bytes 0) or shaped to dt and sh when sh is not NULL (the memory is
 * allocated while the claim is on its way), with its record; refs: linked = 1 plus open.
 * It awaits the claim before it writes anything. Nothing may change the name between the
 * two: hold ns throughout. Its errors: tfs_tensor_claim's and tfs_tensor_shape's. A claim
 * not used goes to tfs_tensor_claim_drop. */
struct tfs_dirrec;
int tfs_tensor_claim(const char *name, int device, const struct tfs_dirrec *parent_rec,
		     struct tfs_wb_call **claim);
int tfs_tensor_create_claimed(struct tfs_wb_call *claim, const char *name, tfs_dtype dt,
			      const struct tfs_shape *sh, int device, uid_t uid, gid_t gid,
			      mode_t mode, int open, struct tfs_tensor **out);
void tfs_tensor_claim_drop(const char *name, struct tfs_wb_call *claim);
/* tfs_tensor_create_claimed for a name the caller has claimed already (tfs_tensor_claim, then
 * tfs_rec_link_wait answered 0): on error the name is given back. f, when not NULL, is the
 * file it is created open for (as tfs_tensor_get_open, in the same record write). */
int tfs_tensor_create_linked(const char *name, tfs_dtype dt, int device, uid_t uid, gid_t gid,
			     mode_t mode, struct tfs_file *f, struct tfs_tensor **out);
/* chmod/chown of a tensor: the backend follows (its memory may move: the handle is taken
 * again under the io lock). When the backend refuses, nothing changed. Caller holds ns. */
int tfs_tensor_set_owner(struct tfs_tensor *t, uid_t uid, gid_t gid, mode_t mode);
/* Sets dtype and shape, allocating/resizing memory; -EINVAL/-ENOSPC/-EBUSY on refusal. */
int tfs_tensor_shape(struct tfs_tensor *t, tfs_dtype dt, const struct tfs_shape *sh,
		     int busy_check);
/* Sets the byte size as a file does (shape becomes 1-D). */
int tfs_tensor_resize(struct tfs_tensor *t, uint64_t bytes);
/* Writes the whole record (after metadata changed). */
int tfs_tensor_save(struct tfs_tensor *t);
/* Reference changes; when the count reaches 0 the memory and the record go. */
void tfs_tensor_put_open(struct tfs_file *f);
int tfs_tensor_get_open(struct tfs_tensor *t, struct tfs_file *f);
/* Drops the name's reference. When the tensor lives on (open or held), *ukey (when ukey
 * is not NULL) is a malloc'd copy of the key it lives under now, else NULL. */
int tfs_tensor_unlink(struct tfs_tensor *t, char **ukey);
int tfs_tensor_rename(struct tfs_tensor *t, const char *newname);
int tfs_tensor_hold(struct tfs_tensor *t, const char *node, int64_t pid);
/* Drops one hold of (node, pid); -ENOENT when it holds none. */
int tfs_tensor_release(struct tfs_tensor *t, const char *node, int64_t pid);
/* Drops holders of this node whose process is gone. */
void tfs_tensor_reap(void);
int64_t tfs_tensor_refcount(const struct tfs_tensor *t);
/* Rewrites every local record (after Redis came back). */
int tfs_tensor_resync(void);
/* Frees every tensor and its record (at unmount). */
void tfs_tensor_shutdown(void);
/* 1 when a process other than pid has it open, or a queue holder holds it. */
int tfs_tensor_busy(const struct tfs_tensor *t, pid_t pid);
/* Calls fn for each tensor; fn may not add or remove tensors. */
void tfs_table_foreach(void (*fn)(struct tfs_tensor *, void *), void *arg);

/* --- records of directories and remote tensors (records.c) --- */
/* Reads a tensor record: 0, -ENOENT, -EIO, -EBADMSG (garbage: logged). */
int tfs_rec_tensor(const char *name, struct tfs_meta *m);
/* Reads a directory record. 0 / -ENOENT / -EIO. */
struct tfs_dirrec {
	uint32_t mode, uid, gid;
	int64_t ctime, mtime;
	int has_dtype, has_device;
	tfs_dtype dtype;
	int device;
};
int tfs_rec_dir(const char *name, struct tfs_dirrec *d);
int tfs_rec_dir_write(const char *name, const struct tfs_dirrec *d);
/* Adds name to its parent's entries ('t' tensor, 'd' dir): -EEXIST when taken,
 * -ENOENT when the parent directory does not exist. */
int tfs_rec_link(const char *name, char type);
/* tfs_rec_link in two halves: the checks and the claim sent (0 with *claim set, or the
 * errors above but -EEXIST), then its answer awaited (0, -EEXIST or -EIO). parent_rec:
 * the parent's record, which the caller read under ns just before (so it exists); NULL:
 * read it here. */
int tfs_rec_link_send(const char *name, char type, const struct tfs_dirrec *parent_rec,
		      struct tfs_wb_call **claim);
int tfs_rec_link_wait(const char *name, char type, struct tfs_wb_call *claim);
int tfs_rec_unlink(const char *name);
/* Looks up the entry type of name in its parent: 't', 'd', or -ENOENT. */
int tfs_rec_type(const char *name);
/* The entries of directory name: its HGETALL reply (the caller frees it), or -ENOENT,
 * -ENOTDIR, -EIO. */
int tfs_rec_dir_entries(const char *name, redisReply **out);
/* rmdir: -ENOTDIR, -ENOTEMPTY, -ENOENT, -EBUSY (the root), -EIO. */
int tfs_rec_rmdir(const char *name);
/* Removes a tensor record and its name, for records with no tensor behind them. */
int tfs_rec_remove_tensor(const char *name);
/* Moves directory from and everything under it to to (which must not exist): -EREMOTE
 * when another node's tensor is inside, -EEXIST, -EIO. Caller holds ns. */
int tfs_rec_move_dir(const char *from, const char *to);
/* dir + "/" + name (just name when dir is ""), malloc'd; NULL when out of memory. */
char *tfs_path_join(const char *dir, const char *name);

/* --- directory cache (dcache.c), kept coherent by Redis client tracking --- */
int tfs_dc_start(void);
void tfs_dc_stop(void);
/* The subscriber connection's CLIENT ID for the writer's CLIENT TRACKING REDIRECT; 0 when
 * there is none. */
uint64_t tfs_dc_subscriber(void);
/* Tracking established (1) or lost (0): either way the cache starts empty. */
void tfs_dc_tracking(int on);
/* Take before a Redis read whose result is to be cached; pass to the put. */
uint64_t tfs_dc_gen(void);
/* 1 and *d filled when name's record is cached. */
int tfs_dc_get_dir(const char *name, struct tfs_dirrec *d);
/* Stores a record read with gen (0: this node's own write, stored regardless). */
void tfs_dc_put_dir(const char *name, const struct tfs_dirrec *d, uint64_t gen);
/* 't'/'d', -ENOENT (known absent) or 0 (not cached); *cacheable says whether reading the
 * whole directory (tfs_dc_put_ents) is worth it. */
int tfs_dc_get_type(const char *parent, const char *base, int *cacheable);
/* Stores a directory's entries from its HGETALL reply. */
void tfs_dc_put_ents(const char *parent, const redisReply *r, uint64_t gen);
/* This node's own change of an entry: type 't'/'d', or 0 for gone. */
void tfs_dc_set_type(const char *parent, const char *base, int type);
/* Drops what is cached of directory name (its keys changed by other means). */
void tfs_dc_forget(const char *name);

/* --- the kernel's name cache (kcache.c) --- */
struct fuse_session;
/* Starts the thread that drops names from the kernel; entry_timeout: what -o
 * entry_timeout asked for (0: names are never kept). 0 or a negative errno. */
int tfs_kc_start(struct fuse_session *se, double entry_timeout);
/* Stops it (before the session is unmounted); names still waiting are dropped. */
void tfs_kc_stop(void);
/* The entry_timeout of a lookup reply now: 0 while changes made elsewhere are not heard. */
double tfs_kc_entry_timeout(void);
/* Whether changes made elsewhere are being reported: lookups are cached only then. */
void tfs_kc_tracking(int on);
/* name (no leading slash) changed without this kernel seeing it: its attributes go at
 * once, the name soon after (from the notifier thread). Safe under ns. */
void tfs_kc_forget(const char *name);
/* Node id's attributes changed without the kernel seeing it (a mode the daemon changed
 * itself): they go at once. Safe under ns and in a request on that node. */
void tfs_kc_forget_attr(uint64_t id);

/* --- queue worker (queue.c) --- */
int tfs_queue_start(void);
void tfs_queue_stop(void);

/* --- FUSE operations (ops_*.c), extended attributes (xattr.c) --- */
struct fuse_lowlevel_ops;
extern const struct fuse_lowlevel_ops tfs_ops;
/* What each means (README); w: a path or an unlinked tensor's key (node.h). The high-level
 * conventions: a length or a negative errno; size 0 asks for the length. They take ns. */
struct tfs_where;
int tfs_xattr_get(const struct tfs_where *w, const char *name, char *value, size_t size);
int tfs_xattr_set(const struct tfs_where *w, const char *name, const char *value, size_t size,
		  int flags, pid_t pid);
int tfs_xattr_list(const struct tfs_where *w, char *list, size_t size);
int tfs_xattr_remove(const struct tfs_where *w, const char *name);

/* --- private redis-server (spawn.c) --- */
int tfs_spawn_redis(char *url, size_t urlsize);
void tfs_stop_redis(void);

int64_t tfs_now(void);

/* loop.c: serves FUSE requests with nworkers threads until unmount or a signal ends the
 * session. 0, or a negative errno if receiving failed. */
int tfs_loop_run(struct fuse_session *se, int nworkers);

#endif
