/* Which file system a mount is, from the text of /proc/self/mountinfo (proc(5)), so that
 * the daemon can tell a file's file system without a call that would reach it: a statfs
 * on a FUSE file sends its server a request that may never be answered (ops_fill.c).
 * No I/O here: the caller reads the text. */
#ifndef TFS_FS_MOUNTINFO_H
#define TFS_FS_MOUNTINFO_H

#include <stddef.h>
#include <stdint.h>

/* The type (the field after " - ") of the mount whose id (the first field) is mnt_id,
 * in text (NUL-terminated), copied into out (NUL-terminated, truncated to outlen - 1).
 * 0; -ENOENT when no well-formed line has that id. */
int tfs_mountinfo_fstype(const char *text, uint64_t mnt_id, char *out, size_t outlen);

/* 1 when a file system of this type keeps its files on this machine (a disk or memory):
 * reading one never waits on another program or the network. 0 for anything else, FUSE,
 * network and stacked file systems among them. */
int tfs_fstype_local(const char *fstype);

#endif
