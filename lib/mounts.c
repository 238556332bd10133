/* The mounts this process sees, from /proc/self/mountinfo (proc(5)): where copies find
 * the tensorfs mount a path is on (copy_tree.c), and where another node's VMM tensor
 * finds its owner's mount on this machine (handle_socket.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

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

/* The value of "user_id=" among the comma-separated options at s (up to the line's end),
 * or -1. */
static long user_id(const char *s)
{
	for (; s && *s && *s != '\n'; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
		char *end;
		long v;

		if (strncmp(s, "user_id=", 8) || s[8] < '0' || s[8] > '9')
			continue;
		v = strtol(s + 8, &end, 10);
		return (*end == ',' || *end == '\n' || *end == '\0' || *end == ' ') && v >= 0 ?
		       v : -1;
	}
	return -1;
}

int tfs_mountinfo_line(const char *line, struct tfs_mount *out)
{
	const char *s = line, *dash, *src;
	unsigned int maj, min;
	char dev[32];

	/* mount id, parent id, major:minor, root: then the mount point */
	for (int i = 0; i < 4; i++) {
		if (i == 2 && (!field(s, dev, sizeof(dev)) ||
			       sscanf(dev, "%u:%u", &maj, &min) != 2))
			return -EINVAL;
		s = strchr(s, ' ');
		if (!s)
			return -EINVAL;
		s++;
	}
	dash = strstr(s, " - ");
	if (!dash || !field(s, out->mp, sizeof(out->mp)) ||
	    !(src = field(dash + 3, out->fstype, sizeof(out->fstype))))
		return -EINVAL;
	out->dev = makedev(maj, min);
	/* the source, then the super block's options */
	src = *src == ' ' ? strchr(src + 1, ' ') : NULL;
	out->user_id = user_id(src ? src + 1 : NULL);
	return 0;
}

int tfs_mounts_each(int (*fn)(const struct tfs_mount *m, void *arg), void *arg)
{
	struct tfs_mount *m;
	char line[8192];
	FILE *f;

	if (!(m = malloc(sizeof(*m))))
		return -ENOMEM;
	if (!(f = fopen("/proc/self/mountinfo", "re"))) {
		free(m);
		return -errno;
	}
	while (fgets(line, sizeof(line), f))
		if (tfs_mountinfo_line(line, m) == 0 && fn(m, arg))
			break;
	fclose(f);
	free(m);
	return 0;
}
