/* The host backend's memory as the keeper makes it (keeper.h): a POSIX shared-memory object
 * per tensor, named after the keeper's pid so that backend_host.c's start-up sweep keeps the
 * objects of a live keeper and removes those of dead ones. The keeper keeps the descriptor
 * and sends a copy to the daemon, which maps it, resizes it and sets its owner. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keeper.h"
#include "meta.h"          /* TFS_HOST_MAGIC */

struct hobj {
	int fd;
	char name[56];          /* fits the handle: 64 bytes less the magic and NUL */
};

static uint64_t seq;

static int host_mem_alloc(uint64_t size, int device, uid_t uid, gid_t gid, mode_t mode,
			  uint8_t handle[TFS_IPC_HANDLE_SIZE], int *fd, void **priv)
{
	struct hobj *o;
	int rc;

	if (device != 0)
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	/* A random part: anyone can create names in /dev/shm, and predictable ones would
	 * let any user block every allocation by taking the next names first. */
	for (int tries = 0;; tries++) {
		uint64_t r = 0;

		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (uint64_t)random() << 32 ^ (uint64_t)random();
		snprintf(o->name, sizeof(o->name), "/tensorfs.%d.%llu.%012llx", (int)getpid(),
			 (unsigned long long)++seq, (unsigned long long)(r & 0xffffffffffffULL));
		o->fd = shm_open(o->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (o->fd >= 0)
			break;
		if (errno != EEXIST || tries == 8) {
			rc = -errno;
			goto fail_struct;
		}
	}
	/* Only the owner may map it, as only the owner (and who mode lets) may read the file. */
	if (fchown(o->fd, uid, gid) || fchmod(o->fd, mode & 0666)) {
		rc = -errno;
		goto fail_shm;
	}
	/* Pages reserved now: running out of /dev/shm is ENOSPC here, not SIGBUS in a copy. */
	rc = posix_fallocate(o->fd, 0, (off_t)size);
	if (rc) {
		rc = rc == ENOSPC || rc == EFBIG ? -ENOSPC : -rc;
		goto fail_shm;
	}
	memset(handle, 0, TFS_IPC_HANDLE_SIZE);
	memcpy(handle, TFS_HOST_MAGIC, 8);
	memcpy(handle + 8, o->name, strlen(o->name));
	*fd = dup(o->fd);
	if (*fd < 0) {
		rc = -errno;
		goto fail_shm;
	}
	*priv = o;
	return 0;
fail_shm:
	close(o->fd);
	shm_unlink(o->name);
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
	shm_unlink(o->name);
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
