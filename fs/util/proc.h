/* What the daemon reads from /proc about the processes it serves and the mounts their
 * files live on. Each call reads /proc afresh but tfs_proc_mount_local, which keeps its
 * answers while the mount table stays the same; none blocks on anything but procfs. */
#ifndef TFS_FS_PROC_H
#define TFS_FS_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The process (thread group) of thread tid: FUSE reports the calling thread. -1 when the
 * thread is gone or /proc says nothing. */
pid_t tfs_proc_tgid(pid_t tid);

/* The file system type of mount mnt_id as this process's mount namespace lists it
 * (/proc/self/mountinfo, mountinfo.h), into out (NUL-terminated, cut to outlen - 1).
 * 0; -ENOENT when not listed (a mount of another namespace) or /proc cannot be read. */
int tfs_proc_mount_fstype(uint64_t mnt_id, char *out, size_t outlen);

/* Whether mount mnt_id is of a local file system (tfs_fstype_local of its type): 1 yes, 0
 * no, -ENOENT not listed. Answers are kept until the mount table changes, so a fill reads
 * /proc/self/mountinfo once per mount, not once per call; the first call opens it and keeps
 * one descriptor for the daemon's life. Thread-safe (one mutex, held over a read of
 * /proc/self/mountinfo when the answer is not kept). */
int tfs_proc_mount_local(uint64_t mnt_id);

#endif
