/* Processes and mounts from /proc (proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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

/* The answers of tfs_proc_mount_local, kept while the mount table stays as it was. A mount
 * id is given again once its mount is gone, so an answer holds only as long as the table:
 * /proc/self/mountinfo, held open, polls POLLPRI once after each change to it. */
#define LOCAL_KEPT 64

static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static int kept_fd = -1;
static struct { uint64_t id; int local; } kept[LOCAL_KEPT];
static int nkept;

int tfs_proc_mount_local(uint64_t mnt_id)
{
	struct pollfd pf;
	char type[64];
	int rc;

	pthread_mutex_lock(&kept_mu);
	if (kept_fd < 0)
		kept_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (kept_fd >= 0) {
		pf = (struct pollfd){ .fd = kept_fd, .events = POLLPRI };
		/* a change since the last poll, or a poll that failed: nothing kept holds */
		if (poll(&pf, 1, 0) < 0 || (pf.revents & (POLLPRI | POLLERR | POLLNVAL)))
			nkept = 0;
		for (int i = 0; i < nkept; i++) {
			if (kept[i].id == mnt_id) {
				rc = kept[i].local;
				goto out;
			}
		}
	}
	rc = tfs_proc_mount_fstype(mnt_id, type, sizeof(type));
	if (rc == 0) {
		rc = tfs_fstype_local(type);
		if (kept_fd >= 0) {
			if (nkept == LOCAL_KEPT)
				nkept = 0;
			kept[nkept].id = mnt_id;
			kept[nkept++].local = rc;
		}
	}
out:
	pthread_mutex_unlock(&kept_mu);
	return rc;
}
