/* Leftovers of the host backend in /dev/shm: the directories of keepers that died
 * (/dev/shm/tensorfs.<pid>.<8 hex>/, core/host_handle.h) and the single objects of older
 * daemons (/dev/shm/tensorfs.<pid>.<n>...). Used by the daemon at start (backend_host.c)
 * and by a keeper before it makes its first directory (keeper_host.c). No locks. */
#ifndef TFS_FS_SHM_SWEEP_H
#define TFS_FS_SHM_SWEEP_H

#include <sys/types.h>

/* In a directory of a keeper that died: "<mark><pid>" says that the live keeper pid took
 * its objects over (handover.h), so no sweep removes it. */
#define TFS_HOST_KEEPER_MARK ".keeper."

/* Removes each entry of /dev/shm named "tensorfs.<pid>." ... for which stale(pid, arg)
 * returns 1, unless it is a directory marked by a live keeper (TFS_HOST_KEEPER_MARK): a
 * file is unlinked; a directory loses the files in it, then goes itself.
 * Nothing is followed: a directory is opened with O_NOFOLLOW and its entries are unlinked,
 * never opened, so links planted there remove only themselves; a directory holding
 * anything but files stays (and is logged). Returns how many entries went; entries that
 * cannot be removed (another user's, without the right to) are skipped. */
int tfs_shm_sweep(int (*stale)(pid_t pid, void *arg), void *arg);

#endif
