/* Removing the host backend's leftovers from /dev/shm (shm_sweep.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host_handle.h"
#include "log.h"
#include "mem/shm_sweep.h"

/* Empties the directory name in root and removes it. 0 or -errno. */
static int remove_dir(int root, const char *name)
{
	struct dirent *e;
	DIR *d;
	int fd, rc = 0;

	fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!(d = fdopendir(fd))) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    unlinkat(dirfd(d), e->d_name, 0) && errno != ENOENT)
			rc = -errno;
	closedir(d);
	if (rc)
		return rc;
	return unlinkat(root, name, AT_REMOVEDIR) ? -errno : 0;
}

/* Does a live keeper hold the objects of directory name in root (its mark)? */
static int marked_live(int root, const char *name)
{
	size_t plen = sizeof(TFS_HOST_KEEPER_MARK) - 1;
	struct dirent *e;
	int fd, live = 0;
	DIR *d;

	fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return 0;
	}
	while (!live && (e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, TFS_HOST_KEEPER_MARK, plen))
			continue;
		errno = 0;
		pid = strtol(e->d_name + plen, &end, 10);
		if (*end || errno || pid <= 0 || pid > 0x7fffffff)
			continue;
		live = kill((pid_t)pid, 0) == 0 || errno == EPERM;
	}
	closedir(d);
	return live;
}

int tfs_shm_sweep(int (*stale)(pid_t pid, void *arg), void *arg)
{
	struct dirent *e;
	int removed = 0, root, rc;
	DIR *d = opendir(TFS_HOST_SHM_ROOT);

	if (!d)
		return 0;
	root = dirfd(d);
	while ((e = readdir(d))) {
		pid_t pid = tfs_host_entry_pid(e->d_name);
		struct stat st;

		if (pid <= 0 || !stale(pid, arg))
			continue;
		if (fstatat(root, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode) && marked_live(root, e->d_name))
			continue;
		if (S_ISDIR(st.st_mode))
			rc = remove_dir(root, e->d_name);
		else
			rc = unlinkat(root, e->d_name, 0) ? -errno : 0;
		if (rc == 0)
			removed++;
		else if (rc != -ENOENT)
			tfs_log(LOG_WARNING, "host: cannot remove %s/%s: %s", TFS_HOST_SHM_ROOT,
				e->d_name, strerror(-rc));
	}
	closedir(d);
	return removed;
}
