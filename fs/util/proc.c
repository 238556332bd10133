/* Processes and mounts from /proc (proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/mountinfo.h"
#include "util/proc.h"

pid_t tfs_proc_tgid(pid_t tid)
{
	char path[64], buf[512];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\nTgid:");
	return p ? (pid_t)strtol(p + 6, NULL, 10) : -1;
}

int tfs_proc_mount_fstype(uint64_t mnt_id, char *out, size_t outlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int rc = -ENOENT;

	if (!f)
		return -ENOENT;
	/* getline: a line of any length whole (overlay options run to kilobytes) */
	while (rc && getline(&line, &cap, f) > 0)
		rc = tfs_mountinfo_fstype(line, mnt_id, out, outlen);
	free(line);
	fclose(f);
	return rc;
}
