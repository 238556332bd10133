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
#include <dirent.h>
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

/* A directory of a keeper that died whose objects this keeper took over (handover.h),
 * marked TFS_HOST_KEEPER_MARK<our pid> while it holds any; removed with its last. */
struct adir {
	struct adir *next;
	int fd;
	size_t objects;
	char name[32];
};

struct hobj {
	int fd;
	struct adir *ad;                /* NULL: in our own directory, or nameless */
	int nameless;                   /* adopted after its name went: only fd holds it */
	ino_t ino;                      /* adopted objects: to tell them from orphans */
	char path[TFS_HOST_PATH_MAX];   /* "/tensorfs.<pid>.<hex>/<hex>", relative to /dev/shm */
};

/* The adopted directories, and the objects taken until adopt_done (the keeper is
 * single-threaded: no lock). */
static struct adir *adirs;
static struct hobj **taken;
static size_t ntaken, taken_cap;

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

static void mark_name(char *buf, size_t size)
{
	snprintf(buf, size, TFS_HOST_KEEPER_MARK "%d", (int)getpid());
}

/* An adopted directory's last object went: the mark and the directory go too. */
static void adir_release(struct adir *ad)
{
	char mark[32], path[64];

	mark_name(mark, sizeof(mark));
	unlinkat(ad->fd, mark, 0);
	close(ad->fd);
	snprintf(path, sizeof(path), TFS_HOST_SHM_ROOT "/%s", ad->name);
	if (rmdir(path) && errno != ENOENT)
		tfs_log(LOG_WARNING, "host: cannot remove %s: %s", path, strerror(errno));
	for (struct adir **pp = &adirs; *pp; pp = &(*pp)->next)
		if (*pp == ad) {
			*pp = ad->next;
			break;
		}
	free(ad);
}

static void host_mem_free(void *priv, uint64_t size, int device)
{
	struct hobj *o = priv;

	(void)size;
	(void)device;
	close(o->fd);
	if (o->nameless) {
		/* nothing in /dev/shm to remove */
	} else if (o->ad) {
		if (unlinkat(o->ad->fd, strrchr(o->path, '/') + 1, 0) && errno != ENOENT)
			tfs_log(LOG_WARNING, "host: cannot remove %s%s: %s", TFS_HOST_SHM_ROOT,
				o->path, strerror(errno));
		if (--o->ad->objects == 0)
			adir_release(o->ad);
	} else {
		destroy(o);
	}
	free(o);
}

/* The adopted directory called name (opened, checked to be ours and marked when it is
 * new). NULL with errno. */
static struct adir *adir_get(const char *name)
{
	char path[64], mark[32];
	struct adir *ad;
	struct stat st;
	int fd;

	for (ad = adirs; ad; ad = ad->next)
		if (strcmp(ad->name, name) == 0)
			return ad;
	snprintf(path, sizeof(path), TFS_HOST_SHM_ROOT "/%s", name);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* Another user's directory of that name is not one a keeper of ours made. */
	if (fstat(fd, &st) || st.st_uid != geteuid()) {
		close(fd);
		errno = EPERM;
		return NULL;
	}
	mark_name(mark, sizeof(mark));
	ad = calloc(1, sizeof(*ad));
	if (!ad) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	/* Before anything is taken: a sweep from now on sees a live keeper's mark. */
	int mfd = openat(fd, mark, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (mfd < 0) {
		int e = errno;

		close(fd);
		free(ad);
		errno = e;
		return NULL;
	}
	close(mfd);
	ad->fd = fd;
	snprintf(ad->name, sizeof(ad->name), "%s", name);
	ad->next = adirs;
	adirs = ad;
	return ad;
}

static int host_mem_adopt(int fd, const uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t size,
			  int device, void **priv)
{
	char path[TFS_HOST_PATH_MAX], name[32];
	struct hobj *o = NULL, **nt;
	struct stat st;
	const char *slash;
	int rc;

	(void)size;
	if ((device != 0 && device != TFS_DEVICE_CPU) ||
	    tfs_host_handle_path(handle, path, sizeof(path)) ||
	    fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto fail;
	}
	slash = strchr(path + 1, '/');
	snprintf(name, sizeof(name), "%.*s", (int)(slash - path - 1), path + 1);
	if (ntaken == taken_cap) {
		size_t cap = taken_cap ? taken_cap * 2 : 256;

		if (!(nt = realloc(taken, cap * sizeof(*nt)))) {
			rc = -ENOMEM;
			goto fail;
		}
		taken = nt;
		taken_cap = cap;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		rc = -ENOMEM;
		goto fail;
	}
	o->fd = fd;
	o->ino = st.st_ino;
	snprintf(o->path, sizeof(o->path), "%s", path);
	if (!(o->ad = adir_get(name))) {
		if (errno != ENOENT) {
			rc = -errno;
			goto fail;
		}
		/* Its name went (a sweep of a version that knows no marks, or by hand): the
		 * memory lives in the descriptor, and the daemon serves it; only mapping it by
		 * its handle is over. Kept, or the bytes would go with the handover. */
		tfs_log(LOG_WARNING, "host: %s%s is gone from /dev/shm: kept by its descriptor "
			"(processes cannot map it by its handle)", TFS_HOST_SHM_ROOT, path);
		o->nameless = 1;
	} else {
		o->ad->objects++;
	}
	taken[ntaken++] = o;
	*priv = o;
	return 0;
fail:
	free(o);
	close(fd);
	return rc;
}

/* Whether the entry name of ad is an object some adopted descriptor holds. */
static int held(const struct adir *ad, const char *name, ino_t ino)
{
	for (size_t i = 0; i < ntaken; i++)
		if (!taken[i]->nameless && taken[i]->ad == ad && taken[i]->ino == ino &&
		    strcmp(strrchr(taken[i]->path, '/') + 1, name) == 0)
			return 1;
	return 0;
}

/* What else the dead keepers' directories hold is nobody's: an allocation whose answer the
 * dead keeper never sent, older marks. It goes, or the directory would outlive its last
 * object with its pages. */
static void host_mem_adopt_done(void)
{
	char mark[32];

	mark_name(mark, sizeof(mark));
	for (struct adir *ad = adirs; ad; ad = ad->next) {
		int dfd = dup(ad->fd);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *e;
		struct stat st;

		if (!d) {
			if (dfd >= 0)
				close(dfd);
			continue;
		}
		rewinddir(d);
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    !strcmp(e->d_name, mark) ||
			    fstatat(ad->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			    held(ad, e->d_name, st.st_ino))
				continue;
			if (unlinkat(ad->fd, e->d_name, 0) == 0)
				tfs_log(LOG_NOTICE, "host: removed %s/%s/%s, which no daemon held",
					TFS_HOST_SHM_ROOT, ad->name, e->d_name);
		}
		closedir(d);
	}
	free(taken);
	taken = NULL;
	ntaken = taken_cap = 0;
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
	.adopt = host_mem_adopt,
	.adopt_done = host_mem_adopt_done,
};
