/* The mounts this process sees, from /proc/self/mountinfo (proc(5)): where copies find
 * the tensorfs mount a path is on (copy_tree.c), and where another node's VMM tensor
 * finds its owner's mount on this machine (handle_socket.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client_internal.h"

/* Copies the space-ended field at s into out (size bytes, NUL-terminated), undoing
 * mountinfo's octal escapes (\040 for a space, \011, \012, \134); the end of the field,
 * or NULL when it is empty or does not fit. */
static const char *field(const char *s, char *out, size_t size)
{
	size_t n = 0;

	for (; *s && *s != ' ' && *s != '\n'; s++) {
		char c = *s;

		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			c = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		}
		if (n + 1 >= size)
			return NULL;
		out[n++] = c;
	}
	if (!n)
		return NULL;
	out[n] = '\0';
	return s;
}

int tfs_mountinfo_line(const char *line, char *mp, size_t mpsize, char *fstype,
		       size_t fssize)
{
	const char *s = line, *dash;

	/* mount id, parent id, major:minor, root: then the mount point */
	for (int i = 0; i < 4; i++) {
		s = strchr(s, ' ');
		if (!s)
			return -EINVAL;
		s++;
	}
	dash = strstr(s, " - ");
	if (!dash || !field(s, mp, mpsize) || !field(dash + 3, fstype, fssize))
		return -EINVAL;
	return 0;
}

int tfs_mounts_each(int (*fn)(const char *mp, const char *fstype, void *arg), void *arg)
{
	char line[8192], mp[4096], fstype[256];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (tfs_mountinfo_line(line, mp, sizeof(mp), fstype, sizeof(fstype)) == 0 &&
		    fn(mp, fstype, arg))
			break;
	fclose(f);
	return 0;
}
