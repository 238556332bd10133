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

#endif
