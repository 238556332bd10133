/* The host backend: each tensor is a POSIX shared-memory object, so another process maps
 * it by name. The 64-byte handle is "TFSHOST1" followed by the NUL-terminated name
 * (README, "IPC handles"); the offset is always 0. Pages are reserved with fallocate at
 * allocation so running out of /dev/shm is ENOSPC here, not SIGBUS in a later copy. */
#include <dirent.h>
#include <errno.h>
#include <sys/random.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "backend.h"
#include "meta.h"
#include "log.h"


struct tfs_backend {
	pthread_mutex_t lock;
	uint64_t used, reserved, total, nallocs, seq;
	size_t page;
};

struct tfs_alloc {
	int fd;
	void *base;
	uint64_t bytes, mapped;
	char name[56];           /* fits the handle: 64 bytes less the magic and NUL */
};

static uint64_t round_page(struct tfs_backend *be, uint64_t n)
{
	return (n + be->page - 1) / be->page * be->page;
}

/* Shared-memory objects of daemons that died without unmounting (kill -9, a crash) stay
 * in /dev/shm. Their memory is lost to everyone but processes that still map it, and
 * once the pid is reused, a new daemon with that pid would find its own names taken
 * (shm_open O_EXCL: EEXIST on its first write). Removed at start: those whose pid is gone,
 * and those with our pid (a dead process's, since we are only starting). */
static void sweep_orphans(void)
{
	char path[300];
	struct dirent *e;
	int removed = 0;
	DIR *d = opendir("/dev/shm");

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, "tensorfs.", 9))
			continue;
		pid = strtol(e->d_name + 9, &end, 10);
		if (end == e->d_name + 9 || *end != '.' || pid <= 0)
			continue;
		if (pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		snprintf(path, sizeof(path), "/%s", e->d_name);
		if (shm_unlink(path) == 0)
			removed++;
	}
	closedir(d);
	if (removed)
		tfs_log(LOG_NOTICE, "host: removed %d shared-memory object(s) of daemons that "
			"died without unmounting", removed);
}

static int host_init(struct tfs_backend **out, int device, uint64_t max_bytes)
{
	struct tfs_backend *be;
	struct statvfs sv;

	if (device != 0)
		return -EINVAL;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	pthread_mutex_init(&be->lock, NULL);
	sweep_orphans();
	be->page = (size_t)sysconf(_SC_PAGESIZE);
	be->total = max_bytes;
	if (be->total == 0 && statvfs("/dev/shm", &sv) == 0)
		be->total = (uint64_t)sv.f_blocks * sv.f_frsize;
	*out = be;
	return 0;
}

static void host_fini(struct tfs_backend *be)
{
	pthread_mutex_destroy(&be->lock);
	free(be);
}

static int host_device_count(struct tfs_backend *be)
{
	(void)be;
	return 1;
}

/* Charges n reserved bytes against the cap; -ENOSPC when it does not fit. */
static int charge(struct tfs_backend *be, int64_t used, int64_t reserved)
{
	int rc = 0;

	pthread_mutex_lock(&be->lock);
	if (reserved > 0 && be->reserved + (uint64_t)reserved > be->total)
		rc = -ENOSPC;
	else {
		be->used += (uint64_t)used;
		be->reserved += (uint64_t)reserved;
	}
	pthread_mutex_unlock(&be->lock);
	return rc;
}

static int host_alloc(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid,
		      gid_t gid, mode_t mode, struct tfs_alloc **out)
{
	struct tfs_alloc *a;
	uint64_t mapped = round_page(be, bytes);
	int rc;

	if (device != 0)
		return -EINVAL;
	if ((rc = charge(be, (int64_t)bytes, (int64_t)mapped)))
		return rc;
	a = calloc(1, sizeof(*a));
	if (!a) {
		rc = -ENOMEM;
		goto fail_charge;
	}
	/* A random part: anyone can create names in /dev/shm, and predictable ones would
	 * let any user block every allocation by taking the next names first. */
	for (int tries = 0;; tries++) {
		uint64_t r = 0;

		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (uint64_t)random() << 32 ^ (uint64_t)random();
		pthread_mutex_lock(&be->lock);
		snprintf(a->name, sizeof(a->name), "/tensorfs.%d.%llu.%012llx", (int)getpid(),
			 (unsigned long long)++be->seq, (unsigned long long)(r & 0xffffffffffffULL));
		pthread_mutex_unlock(&be->lock);
		a->fd = shm_open(a->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (a->fd >= 0)
			break;
		if (errno != EEXIST || tries == 8) {
			rc = -errno;
			goto fail_struct;
		}
	}
	/* Only the owner may map it, as only the owner (and who mode lets) may read the file. */
	if (fchown(a->fd, uid, gid) || fchmod(a->fd, mode & 0666)) {
		rc = -errno;
		goto fail_shm;
	}
	rc = posix_fallocate(a->fd, 0, (off_t)mapped);
	if (rc) {
		rc = rc == ENOSPC || rc == EFBIG ? -ENOSPC : -rc;
		goto fail_shm;
	}
	a->base = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, a->fd, 0);
	if (a->base == MAP_FAILED) {
		rc = -ENOSPC;
		goto fail_shm;
	}
	a->bytes = bytes;
	a->mapped = mapped;
	__atomic_add_fetch(&be->nallocs, 1, __ATOMIC_RELAXED);
	*out = a;
	return 0;
fail_shm:
	close(a->fd);
	shm_unlink(a->name);
fail_struct:
	free(a);
fail_charge:
	charge(be, -(int64_t)bytes, -(int64_t)mapped);
	return rc;
}

static void host_free(struct tfs_backend *be, struct tfs_alloc *a)
{
	if (!a)
		return;
	munmap(a->base, a->mapped);
	close(a->fd);
	shm_unlink(a->name);
	charge(be, -(int64_t)a->bytes, -(int64_t)a->mapped);
	__atomic_sub_fetch(&be->nallocs, 1, __ATOMIC_RELAXED);
	free(a);
}

static int host_resize(struct tfs_backend *be, struct tfs_alloc **ap, uint64_t bytes)
{
	struct tfs_alloc *a = *ap;
	uint64_t mapped = round_page(be, bytes);
	void *base;
	int rc;

	if (bytes > a->bytes && mapped > a->mapped) {
		if ((rc = charge(be, 0, (int64_t)(mapped - a->mapped))))
			return rc;
		/* Only the new range: shmem's fallocate walks every page it is given, so
		 * reserving from 0 made a cp that grows the file 1 MiB at a time quadratic. */
		rc = posix_fallocate(a->fd, (off_t)a->mapped, (off_t)(mapped - a->mapped));
		if (rc == 0) {
			base = mremap(a->base, a->mapped, mapped, MREMAP_MAYMOVE);
			rc = base == MAP_FAILED ? ENOMEM : 0;
		}
		if (rc) {
			/* Give back the pages fallocate may have added. */
			if (ftruncate(a->fd, (off_t)a->mapped))
				tfs_log(LOG_WARNING, "host: cannot trim %s back", a->name);
			charge(be, 0, -(int64_t)(mapped - a->mapped));
			return -ENOSPC;
		}
		a->base = base;
		charge(be, (int64_t)(bytes - a->bytes), 0);
		a->mapped = mapped;
		a->bytes = bytes;
		return 0;
	}
	if (bytes < a->bytes) {
		/* Truncating zeroes what is cut, so growing later reads zeros as a file does. */
		if (ftruncate(a->fd, (off_t)bytes))
			return -errno;
		if (mapped < a->mapped) {
			base = mremap(a->base, a->mapped, mapped, 0);
			if (base == MAP_FAILED)
				return -errno;
			charge(be, 0, -(int64_t)(a->mapped - mapped));
			a->mapped = mapped;
		}
		if (ftruncate(a->fd, (off_t)mapped))
			return -errno;
		charge(be, -(int64_t)(a->bytes - bytes), 0);
		a->bytes = bytes;
		return 0;
	}
	/* Growing inside the last page: those bytes are already zero. */
	charge(be, (int64_t)(bytes - a->bytes), 0);
	a->bytes = bytes;
	return 0;
}

static int host_export(struct tfs_backend *be, struct tfs_alloc *a,
		       uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t *offset)
{
	(void)be;
	memset(handle, 0, TFS_IPC_HANDLE_SIZE);
	memcpy(handle, TFS_HOST_MAGIC, 8);
	memcpy(handle + 8, a->name, strlen(a->name));
	*offset = 0;
	return 0;
}

static int host_set_owner(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid, gid_t gid,
			  mode_t mode)
{
	(void)be;
	if (fchown(a->fd, uid, gid) || fchmod(a->fd, mode & 0666))
		return -errno;
	return 0;
}

static int host_copy_in(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
			const void *src, size_t len)
{
	(void)be;
	if (off > a->bytes || len > a->bytes - off)
		return -EINVAL;
	memcpy((char *)a->base + off, src, len);
	return 0;
}

static int host_copy_out(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
			 void *dst, size_t len)
{
	(void)be;
	if (off > a->bytes || len > a->bytes - off)
		return -EINVAL;
	memcpy(dst, (char *)a->base + off, len);
	return 0;
}

static void host_stats(struct tfs_backend *be, struct tfs_backend_stats *st)
{
	pthread_mutex_lock(&be->lock);
	st->used = be->used;
	st->reserved = be->reserved;
	st->total = be->total;
	st->nallocs = be->nallocs;
	pthread_mutex_unlock(&be->lock);
}

const struct tfs_backend_ops tfs_backend_host = {
	.name = "host",
	.init = host_init,
	.fini = host_fini,
	.device_count = host_device_count,
	.alloc = host_alloc,
	.free = host_free,
	.resize = host_resize,
	.export_handle = host_export,
	.set_owner = host_set_owner,
	.copy_in = host_copy_in,
	.copy_out = host_copy_out,
	.stats = host_stats,
};
