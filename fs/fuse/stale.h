/* What a request answers when the node it names no longer names anything: its name went
 * (removed or replaced through the queue, another node, or another process) and no open
 * file keeps its tensor.
 *
 * The kernel may ask about a node it looked up a while ago (names are kept for
 * entry_timeout, kernel_cache.c), so the first answer is ESTALE: the VFS then looks the
 * name up again and retries the call once (open, stat, access, truncate, chmod, chown,
 * utimes and the xattr calls by path all do), and finds what the name holds now, or
 * creates it for an O_CREAT open. ESTALE on that retry would reach the program, so the
 * retry, which comes from the same thread, gets what a local filesystem gives for a name
 * that went after it was looked up: ENOENT.
 *
 * Locking: one mutex of its own, a leaf. */
#ifndef TFS_STALE_H
#define TFS_STALE_H

#include <sys/types.h>

/* The answer for a request of thread tid on a node that names nothing: -ESTALE, or
 * -ENOENT when tid had -ESTALE a moment ago and this is its retry. */
int tfs_stale_answer(pid_t tid);

/* tid's call ended on a node (an open, setattr or xattr request succeeded): its next
 * -ESTALE is a first one again. A GETATTR does not end it (the VFS checks permissions on
 * its way to the call it retries); a retried call that ends otherwise is forgotten after
 * a second. Cheap when nothing is pending. */
void tfs_stale_done(pid_t tid);

#endif
