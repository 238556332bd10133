/* /proc/self/mountinfo's file system types (mountinfo.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/mountinfo.h"

int tfs_mountinfo_fstype(const char *text, uint64_t mnt_id, char *out, size_t outlen)
{
	const char *line = text;

	while (line && *line) {
		const char *eol = strchr(line, '\n'), *end = eol ? eol : line + strlen(line);
		const char *p = line, *sep, *type, *tend;
		uint64_t id = 0;
		int digits = 0;

		for (; p < end && *p >= '0' && *p <= '9' && digits < 20; p++, digits++)
			id = id * 10 + (uint64_t)(*p - '0');
		/* " - " ends the optional fields; the type follows it */
		sep = digits && p < end && *p == ' ' ? memmem(p, (size_t)(end - p), " - ", 3) : NULL;
		if (sep && id == mnt_id) {
			type = sep + 3;
			tend = memchr(type, ' ', (size_t)(end - type));
			if (!tend)
				tend = end;
			if (tend > type && outlen > 0) {
				size_t n = (size_t)(tend - type);

				if (n > outlen - 1)
					n = outlen - 1;
				memcpy(out, type, n);
				out[n] = '\0';
				return 0;
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int tfs_fstype_local(const char *fstype)
{
	static const char *const local[] = {
		"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "jfs", "reiserfs", "bcachefs",
		"zfs", "vfat", "exfat", "ntfs3", "tmpfs", "ramfs", "hugetlbfs", NULL,
	};

	for (int i = 0; local[i]; i++)
		if (!strcmp(fstype, local[i]))
			return 1;
	return 0;
}
