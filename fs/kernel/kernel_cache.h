/* What the kernel caches of names and attributes, and telling it of changes made
 * elsewhere (kernel_cache.c) */
#ifndef TFS_KERNEL_CACHE_H
#define TFS_KERNEL_CACHE_H

#include <stdint.h>

struct fuse_session;
/* Starts the thread that drops names from the kernel; entry_timeout: what -o
 * entry_timeout asked for (0: names are never kept, as with --page-cache). 0 or a negative
 * errno. */
int tfs_kcache_start(struct fuse_session *se, double entry_timeout);
/* Stops it (before the session is unmounted); names still waiting are dropped. */
void tfs_kcache_stop(void);
/* The entry_timeout of a lookup reply now: 0 while changes made elsewhere are not heard. */
double tfs_kcache_entry_timeout(void);
/* Whether changes made elsewhere are being reported: lookups are cached only then. */
void tfs_kcache_tracking(int on);
/* name (no leading slash) changed without this kernel seeing it: its attributes go at
 * once, the name soon after (from the notifier thread); nothing when the kernel has no
 * node under the name. Safe under ns. */
void tfs_kcache_forget(const char *name);
/* Node id's attributes changed without the kernel seeing it (a mode the daemon changed
 * itself): they go at once. Safe under ns and in a request on that node. */
void tfs_kcache_forget_attr(uint64_t id);
/* Directory dir (no leading slash, "" the root) changed without this kernel seeing it (an
 * entry made or removed through the queue or a batch): its attributes go at once; nothing
 * when the kernel has no node for it. Safe under ns. */
void tfs_kcache_forget_dir(const char *dir);

#endif
