/* The mount point, as the daemon finds it at start: a dead mount of a daemon that died is
 * detached, or (root, Linux 6.5+) the new mount slides beneath it so that the mount point
 * never shows the bare directory. The start-up's only: no locks, nothing kept. */
#ifndef TFS_MOUNTPOINT_H
#define TFS_MOUNTPOINT_H

#include <fuse_lowlevel.h>
#include <sys/types.h>

/* Detaches the dead mount at mnt (lazily, never following a link), saying so. */
void tfs_mnt_clear_dead(const char *mnt);
/* The device of the topmost mount at mnt, from /proc/self/mountinfo (never stat: a mount
 * nobody serves would not answer), and in *ours (may be NULL) whether it is tensorfs's.
 * 0 when none is there. */
dev_t tfs_mnt_dev(const char *mnt, int *ours);
/* 1 when the mount at mnt is the dead one of a daemon that died (restart: ours, whose
 * connection is aborted here), else 0. */
int tfs_mnt_dead(const char *mnt, int restart);
/* Root only: mounts se in a staging folder, moves it beneath the dead mount at mnt and
 * detaches that one. 0 with *dev the new mount's device; -1 when it does not apply or
 * fails, with nothing mounted. */
int tfs_mnt_beneath(struct fuse_session *se, const char *mnt, dev_t *dev);

#endif
