/* The mount point at start: see mountpoint.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mountpoint.h"
#include "mem/keeper/keeper.h"
#include "log.h"

void tfs_mnt_clear_dead(const char *mnt)
{
	tfs_log(LOG_NOTICE, "%s: the mount of a daemon that died is still there: detaching it",
		mnt);
	tfs_detach_mount(mnt);
}

#ifndef MOVE_MOUNT_BENEATH
#define MOVE_MOUNT_BENEATH 0x00000200     /* Linux 6.5 */
#endif

/* The device of the topmost mount at mnt, from /proc/self/mountinfo (never stat: a mount
 * nobody serves yet, or any more, would not answer), and whether it is tensorfs's. 0 when
 * none is there. */
dev_t tfs_mnt_dev(const char *mnt, int *ours)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[8192], point[4200];
	unsigned maj, min;
	dev_t dev = 0;

	if (ours)
		*ours = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (sscanf(line, "%*d %*d %u:%u %*s %4199s", &maj, &min, point) != 3 ||
		    strcmp(point, mnt))
			continue;
		dev = makedev(maj, min);
		if (ours)
			*ours = sep && strncmp(sep + 3, "fuse.tensorfs ", 14) == 0;
	}
	fclose(f);
	return dev;
}

/* Is the mount at mnt the dead one of a daemon that died? Started again by the keeper,
 * a tensorfs mount there is our predecessor's: its connection is aborted (a process that
 * still held /dev/fuse would keep it alive, and every access to it would hang), and it is
 * not asked anything. Otherwise statfs, not stat (the kernel answers stat from its
 * attribute cache for a while), says ENOTCONN. */
int tfs_mnt_dead(const char *mnt, int restart)
{
	struct statfs sf;
	char path[96];
	int ours, fd;
	dev_t dev;

	if (!restart)
		return statfs(mnt, &sf) != 0 && errno == ENOTCONN;
	dev = tfs_mnt_dev(mnt, &ours);
	if (!dev || !ours)
		return 0;
	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort", minor(dev));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			tfs_log(LOG_DEBUG, "%s: cannot abort the dead connection", mnt);
		close(fd);
	}
	return 1;
}

/* Root, on a mount point whose daemon died: mounts in a staging folder, moves that mount
 * beneath the dead one and detaches the dead one, so that the mount point never shows
 * the bare directory below. 0 with *dev (the new mount's device) set; -1 when it does
 * not apply or fails (nothing mounted: the caller detaches and mounts). */
int tfs_mnt_beneath(struct fuse_session *se, const char *mnt, dev_t *dev)
{
	char stage[64] = "/tmp/tensorfs-stage.XXXXXX";

	if (geteuid() != 0 || !mkdtemp(stage))
		return -1;
	if (fuse_session_mount(se, stage)) {
		rmdir(stage);
		return -1;
	}
	if (syscall(SYS_move_mount, AT_FDCWD, stage, AT_FDCWD, mnt, MOVE_MOUNT_BENEATH)) {
		tfs_log(LOG_INFO, "%s: cannot mount beneath the dead mount (%s): detaching it first",
			mnt, strerror(errno));
		fuse_session_unmount(se);
		rmdir(stage);
		return -1;
	}
	umount2(mnt, MNT_DETACH | UMOUNT_NOFOLLOW);
	rmdir(stage);
	*dev = tfs_mnt_dev(mnt, NULL);
	return 0;
}

