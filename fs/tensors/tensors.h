/* The daemon's tensors: the table of those it holds and the namespace lock (tfs_ns_lock).
 * The table's functions are tensor.h's; this header adds the state and the lock.
 *
 * LOCK ORDER of the whole daemon, written down here, where its first lock lives. A thread
 * may take a lock only while holding locks above it in this list:
 *
 *   1. tfs_tensors.ns    the namespace (tfs_ns_lock): the tensor table, every tensor's
 *                        metadata, every check-then-act on names. Metadata operations and
 *                        the queue worker take it; read and write do not, nor does a
 *                        directory's GETATTR that the directory cache answers
 *                        (fuse/ops_file.c), nor a write's making of a tensor's first
 *                        memory (tensor.h, tfs_tensor_grow_prepare).
 *   2. tensor->io        a tensor's rwlock. read/write hold it shared while copying, without
 *                        ns; resizing, freeing, owner moves and written marks hold it
 *                        exclusive, always under ns. So a thread holding io never takes ns
 *                        (op_write lets go of io before it takes ns to grow the tensor),
 *                        with one exception: a move between devices (tensor.c
 *                        move_unlocked) marks the tensor moving under ns, copies holding
 *                        its io exclusive without ns, and takes ns to commit. Every path
 *                        that would take a tensor's io under ns refuses a moving one first
 *                        (EBUSY), so no ns holder ever waits for that io.
 *   2b. dirh->mu         an open directory's (fuse/ops_dir.c): a READDIR holds it, without
 *                        ns, while it fills the listing (kernel/node.c, store/dircache.c,
 *                        Redis) and replies.
 *   3. backend locks     mem/cuda/ (slots, zeroing, marks, memfd areas, start-up; see
 *                        mem/cuda/cuda_internal.h), mem/host_pool.c (then mem/pool.c's
 *                        under it), mem/pool.c, mem/backend_host.c: taken inside backend
 *                        calls only.
 *   4. leaves            store/writer.c's queue, store/dircache.c, store/claims.c's lost
 *                        claims, kernel/kernel_cache.c, kernel/node.c, fuse/ops_dir.c's
 *                        open directories, transport/loop.c, tensors/lockstats.c: each held
 *                        for a few instructions, calling out of its module with none of
 *                        them held.
 *   5. store/lease.c's   the node lease's: held across one renewal (a connect, with Sentinel
 *      mutex             the primary's lookup, one script; each bounded by a timeout), under
 *                        it only store/conn.c's and the log's own; its thread takes no lock
 *                        of the layers above, so no wait of the daemon delays a renewal.
 *
 * No unbounded wait under ns or an exclusive io: Redis round trips under ns are bounded by
 * the command timeout (1 s), and a connect's (1 s) where the thread waiting for a reply
 * sends the write-behind queue itself (store/writer.c); a create waits for its claim with
 * ns released
 * (fuse/ops_file.c), and so does a resync for each chunk's claims (tensors/tensor.c: ns is
 * held per chunk, never for the whole table; a pass that runs long is no reason to hold
 * it); a read waits for the producer's written mark holding no lock of the tensor (it
 * takes io shared again after the wait, fuse/ops_file.c).
 * Dropping a name from the kernel takes the kernel's lock of its directory, which a
 * request holds while it waits for ns: it is done from kernel/kernel_cache.c's own thread,
 * never under ns. */
#ifndef TFS_TENSORS_H
#define TFS_TENSORS_H

#include <pthread.h>

#include "tensors/tensor.h"

struct tfs_tensors {
	pthread_mutex_t ns;          /* the namespace: table, tensor metadata, check-then-act */
	struct tfs_table table;
};
extern struct tfs_tensors tfs_tensors;

/* The namespace lock, in one place: the one lock every metadata operation takes, so the
 * place to measure how long it is held and waited for. */
#ifdef TFS_LOCK_STATS
/* make LOCK_STATS=1: the lock's hold and wait times, logged at unmount (tensors/lockstats.c). */
void tfs_ns_lock(void);
int tfs_ns_trylock(void);
void tfs_ns_unlock(void);
void tfs_ns_stats_log(void);
/* What the calling thread is doing, to charge its holds and waits to: the FUSE opcode of
 * the request it serves (transport/loop.c), 0 for anything else. */
#define TFS_NS_TAGS 64
extern __thread unsigned tfs_ns_tag;
#else
static inline void tfs_ns_lock(void)
{
	pthread_mutex_lock(&tfs_tensors.ns);
}

/* 0 with the lock, or EBUSY: for a thread that may not wait for it (fs/net/serve.c). */
static inline int tfs_ns_trylock(void)
{
	return pthread_mutex_trylock(&tfs_tensors.ns);
}

static inline void tfs_ns_unlock(void)
{
	pthread_mutex_unlock(&tfs_tensors.ns);
}

static inline void tfs_ns_stats_log(void)
{
}
#endif

#endif
