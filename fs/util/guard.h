/* Copies into or out of memory that someone else can take away under the daemon: a host
 * tensor's shared-memory object, which whoever may open it for writing can truncate while
 * the daemon maps it. A touch of a page past the object's end raises SIGBUS; in a guarded
 * copy it ends that copy with -EIO instead of the daemon (and with it every other user's
 * requests). Faults anywhere else keep their default action. */
#ifndef TFS_FS_GUARD_H
#define TFS_FS_GUARD_H

#include <stddef.h>

/* memmove(dst, src, len), where either side may be such memory. 0, or -EIO when a page
 * of it was gone (dst may then hold part of the bytes). The first call in the process
 * installs the SIGBUS handler, and the first in each thread unblocks SIGBUS there (its
 * only system call); a fault outside a guarded copy goes to the handler that was there
 * before, or kills as it would have. Thread-safe, no lock. */
int tfs_guarded_copy(void *dst, const void *src, size_t len);

/* Such memory lent to code that cannot be wrapped in a guarded copy: UCX reading a reply
 * out of a tensor, or writing a pulled chunk into one, over many progress calls of the
 * network thread (fs/net). While a span is registered, a fault the kernel raises on one
 * of its pages (the object truncated under it) maps anonymous memory over that page,
 * marks every span over the page hit and lets the faulting instruction run again: the
 * transfer moves wrong bytes instead of killing the daemon, and tfs_guard_span_del says
 * so. map is the mapping of fd from file offset 0 (the host backend's), [p, p + len)
 * inside it. */
struct tfs_guard_span {
	char *map;
	int fd;
	char *p;
	size_t len;
	int slot;               /* tfs_guard_span_add's */
	void *owner, *owner_be; /* the lender's (mem/backend.h host_span) */
};
#define TFS_GUARD_SPANS 512
/* Registers s: 0, or -EAGAIN when TFS_GUARD_SPANS are registered (the caller copies
 * through a guarded copy instead). Lock-free; any thread. */
int tfs_guard_span_add(struct tfs_guard_span *s);
/* Unregisters s, once nothing touches the span any more: 0, or -EIO when a page of it was
 * gone meanwhile; the object is then mapped back over the span's pages, so that later
 * guarded copies see the truncation as theirs (EIO). */
int tfs_guard_span_del(struct tfs_guard_span *s);
/* Lets the calling thread take SIGBUS (every daemon thread but the main one starts with
 * all signals blocked): a thread that touches spans calls it once. */
void tfs_guard_thread(void);

#endif
