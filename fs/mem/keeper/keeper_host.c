/* The host backend's memory as the keeper makes it (keeper.h): a file per tensor in a
 * directory of the keeper's own, /dev/shm/tensorfs.<keeper pid>.<8 hex>/<24 hex>
 * (core/host_handle.h). The directory is mode 0711: another user may open an object whose
 * name it was given, but cannot list the directory, so the 96 random bits of the name are
 * what a handle grants, and a handle is given only to whom the mount lets read the tensor
 * (directories included). Each object has the tensor's owner and mode on top. The keeper
 * keeps the descriptor and sends a copy to the daemon, which maps it, resizes it and sets
 * its owner. The directory is made with the first object and removed with the last, so an
 * idle keeper leaves nothing in /dev/shm; the pid in its name lets backend_host.c's
 * start-up sweep tell a live keeper's directory from a dead one's. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host_handle.h"
#include "mem/keeper/keeper.h"
#include "log.h"
#include "meta.h"          /* TFS_HOST_MAGIC */
#include "mem/shm_sweep.h"
#include "strutil.h"

struct hobj {
	int fd;
	char path[TFS_HOST_PATH_MAX];   /* "/tensorfs.<pid>.<hex>/<hex>", relative to /dev/shm */
};

/* The directory. Without a keeper (a backend used on its own) the daemon's threads
 * allocate at once, hence the lock; the keeper is single-threaded. */
static struct {
	pthread_mutex_t lock;
	int fd;                 /* -1 while there is none */
	char name[30];          /* "tensorfs.<pid>.<8 hex>": fits a handle with the object */
	size_t objects;
	pid_t swept;            /* the pid whose leftovers were removed */
} dir = { PTHREAD_MUTEX_INITIALIZER, -1, "", 0, 0 };

/* n random bytes as 2n lower-case hex digits in out. 0 or -errno. */
static int random_hex(char *out, size_t n)
{
	uint8_t b[16];
	ssize_t got;

	if (n > sizeof(b))
		return -EINVAL;
	do
		got = getrandom(b, n, 0);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)n)
		return got < 0 ? -errno : -EIO;
	tfs_hex_encode(b, n, out);
	return 0;
}

/* Whatever carries our pid before we made anything is a dead process's that had it. */
static int own_pid(pid_t pid, void *arg)
{
	(void)arg;
	return pid == getpid();
}

/* Makes the directory if there is none. Called with dir.lock. 0 or -errno. */
static int dir_open(void)
{
	char path[64], hex[TFS_HOST_DIR_HEX + 1];
	int rc;

	if (dir.fd >= 0)
		return 0;
	if (dir.swept != getpid()) {
		if (tfs_shm_sweep(own_pid, NULL))
			tfs_log(LOG_NOTICE, "host: removed what a dead process with our pid left "
				"in %s", TFS_HOST_SHM_ROOT);
		dir.swept = getpid();
	}
	/* mkdir fails on any name that exists, a link included: the directory is ours.
	 * The random part keeps another user who made tensorfs.<our pid>... first from
	 * stopping us; 0700 until the mode is set, whatever the umask. */
	for (int tries = 0;; tries++) {
		if ((rc = random_hex(hex, TFS_HOST_DIR_HEX / 2)))
			return rc;
		snprintf(dir.name, sizeof(dir.name), TFS_HOST_DIR_PREFIX "%u.%s", (unsigned)getpid(), hex);
		snprintf(path, sizeof(path), TFS_HOST_SHM_ROOT "/%s", dir.name);
		if (mkdir(path, 0700) == 0)
			break;
		if (errno != EEXIST || tries == 8)
			return -errno;
	}
	dir.fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir.fd < 0 || fchmod(dir.fd, 0711)) {
		rc = -errno;
		if (dir.fd >= 0)
			close(dir.fd);
		dir.fd = -1;
		rmdir(path);
		return rc;
	}
	return 0;
}

/* Removes the directory when it holds no object. Called with dir.lock. */
static void dir_close_empty(void)
{
	char path[64];

	if (dir.objects || dir.fd < 0)
		return;
	close(dir.fd);
	dir.fd = -1;
	snprintf(path, sizeof(path), TFS_HOST_SHM_ROOT "/%s", dir.name);
	if (rmdir(path))
		tfs_log(LOG_WARNING, "host: cannot remove %s: %s", path, strerror(errno));
}

/* Creates the object of o in the directory (made if needed). 0 or -errno. */
static int create(struct hobj *o)
{
	char hex[TFS_HOST_OBJ_HEX + 1];
	int rc;

	pthread_mutex_lock(&dir.lock);
	if ((rc = dir_open()))
		goto out;
	for (int tries = 0;; tries++) {
		if ((rc = random_hex(hex, TFS_HOST_OBJ_HEX / 2)))
			break;
		o->fd = openat(dir.fd, hex, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (o->fd >= 0)
			break;
		rc = -errno;
		if (rc != -EEXIST || tries == 8)
			break;
	}
	if (o->fd < 0) {
		dir_close_empty();
		goto out;
	}
	dir.objects++;
	snprintf(o->path, sizeof(o->path), "/%s/%s", dir.name, hex);
	rc = 0;
out:
	pthread_mutex_unlock(&dir.lock);
	return rc;
}

/* Removes the object of o (its descriptor is closed already). */
static void destroy(struct hobj *o)
{
	pthread_mutex_lock(&dir.lock);
	if (unlinkat(dir.fd, strrchr(o->path, '/') + 1, 0))
		tfs_log(LOG_WARNING, "host: cannot remove %s%s: %s", TFS_HOST_SHM_ROOT, o->path,
			strerror(errno));
	dir.objects--;
	dir_close_empty();
	pthread_mutex_unlock(&dir.lock);
}

static int host_mem_alloc(uint64_t size, int device, uid_t uid, gid_t gid, mode_t mode,
			  uint8_t handle[TFS_IPC_HANDLE_SIZE], int *fd, void **priv)
{
	struct hobj *o;
	int rc;

	/* Host memory: the host backend's (0), or the host tier of any mount (docs/tiers.md). */
	if (device != 0 && device != TFS_DEVICE_CPU)
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->fd = -1;
	if ((rc = create(o)))
		goto fail_struct;
	/* Only the owner may map it, as only the owner (and who mode lets) may read the file.
	 * A keeper not run by root keeps it its own user's (backend_host.c). */
	if ((fchown(o->fd, uid, gid) && (errno != EPERM || geteuid() == 0)) ||
	    fchmod(o->fd, mode & 0666)) {
		rc = -errno;
		goto fail_obj;
	}
	/* Pages reserved now: running out of /dev/shm is ENOSPC here, not SIGBUS in a copy. */
	rc = posix_fallocate(o->fd, 0, (off_t)size);
	if (rc) {
		rc = rc == ENOSPC || rc == EFBIG ? -ENOSPC : -rc;
		goto fail_obj;
	}
	memset(handle, 0, TFS_IPC_HANDLE_SIZE);
	memcpy(handle, TFS_HOST_MAGIC, 8);
	memcpy(handle + 8, o->path, strlen(o->path));
	*fd = dup(o->fd);
	if (*fd < 0) {
		rc = -errno;
		goto fail_obj;
	}
	*priv = o;
	return 0;
fail_obj:
	close(o->fd);
	destroy(o);
fail_struct:
	free(o);
	return rc;
}

static void host_mem_free(void *priv, uint64_t size, int device)
{
	struct hobj *o = priv;

	(void)size;
	(void)device;
	close(o->fd);
	destroy(o);
	free(o);
}

static int host_mem_fd(void *priv)
{
	return ((struct hobj *)priv)->fd;
}

const struct tfs_keeper_mem tfs_keeper_mem_host = {
	.name = "host",
	.alloc = host_mem_alloc,
	.free = host_mem_free,
	.fd = host_mem_fd,
};
