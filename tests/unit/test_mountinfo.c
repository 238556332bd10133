/* fs/util/mountinfo.c: a mount's file system type from mountinfo text, and which types count as
 * local. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../fs/util/mountinfo.c"
#include "tap.h"

static const char text[] =
	"22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/root rw\n"
	"25 22 0:5 / /dev rw,nosuid master:2 - devtmpfs udev rw,size=4k\n"
	"31 25 0:27 / /dev/shm rw - tmpfs tmpfs rw\n"
	"4096 22 0:60 / /mnt/t rw,nosuid,nodev - fuse.tensorfs tensorfs rw,user_id=0\n"
	"77 22 0:61 / /a\\040b rw shared:9 master:3 - overlay overlay rw,lowerdir=/x\n"
	"garbage line without a separator\n"
	"88 22 0:62 / /nosep rw shared:1\n"
	"99 22 0:63 / /last rw - nfs4 srv:/e rw";

static void finds(uint64_t id, const char *want)
{
	char out[32] = "unset";
	int rc = tfs_mountinfo_fstype(text, id, out, sizeof(out));

	ok(rc == 0 && !strcmp(out, want), "mount %llu is %s (rc %d, got '%s')",
	   (unsigned long long)id, want, rc, out);
}

int main(void)
{
	char small[4];

	finds(22, "ext4");
	finds(31, "tmpfs");
	finds(4096, "fuse.tensorfs");
	finds(77, "overlay");
	finds(99, "nfs4");
	ok(tfs_mountinfo_fstype(text, 88, small, sizeof(small)) == -ENOENT,
	   "a line without ' - ' gives nothing");
	ok(tfs_mountinfo_fstype(text, 5, small, sizeof(small)) == -ENOENT, "an unknown id: ENOENT");
	ok(tfs_mountinfo_fstype("", 22, small, sizeof(small)) == -ENOENT, "empty text: ENOENT");
	ok(tfs_mountinfo_fstype(text, 2, small, sizeof(small)) == -ENOENT,
	   "an id that is a prefix of another's is not it");
	ok(tfs_mountinfo_fstype(text, 4096, small, sizeof(small)) == 0 && !strcmp(small, "fus"),
	   "a long type is cut to the buffer");
	ok(tfs_fstype_local("ext4") && tfs_fstype_local("xfs") && tfs_fstype_local("tmpfs"),
	   "disk and memory file systems are local");
	ok(!tfs_fstype_local("fuse") && !tfs_fstype_local("fuse.tensorfs") &&
	   !tfs_fstype_local("overlay") && !tfs_fstype_local("nfs4") && !tfs_fstype_local(""),
	   "FUSE, stacked and network file systems are not");
	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures != 0;
}
