/* The counters of util/stats.h as the virtual attribute user.tensorfs.stats of the
 * mount's root (stats_xattr.c): read-only, JSON. */
#ifndef TFS_STATS_XATTR_H
#define TFS_STATS_XATTR_H

#include <stddef.h>
#include <stdint.h>

#define TFS_STATS_XATTR "user.tensorfs.stats"

/* Whether (ino, name) is the stats attribute: the root's TFS_STATS_XATTR. */
int tfs_stats_is_xattr(uint64_t ino, const char *name);

/* The counters as one JSON object into value (getxattr conventions: size 0 asks for the
 * length, answered with room to spare, since the counters move before the value is asked
 * for). The length, or -ERANGE when size is too small. Takes no lock. */
int tfs_stats_json(char *value, size_t size);

#endif
