/* The per-process IPC handle cache: a handle is opened (CUDA) or mapped (host shm) once
 * per process and shared by every tensor that names it (pooled tensors share one
 * allocation); it is closed when its last user releases it. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_internal.h"


struct tfs_ipc_entry {
	struct tfs_ipc_entry *next;
	int cuda, device, users, writable;
	uint8_t handle[TFS_IPC_HANDLE_SIZE];
	void *base;
	size_t size;                 /* mapped length (host); 0 = unknown (cuda) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tfs_ipc_entry *entries;

/* The shm name inside a host handle: "/name", NUL-terminated within the 64 bytes. */
static int host_name(const uint8_t *h, char *name, size_t size)
{
	const char *s = (const char *)h + 8;
	size_t n = strnlen(s, TFS_IPC_HANDLE_SIZE - 8);

	if (n == TFS_IPC_HANDLE_SIZE - 8 || n < 2 || n >= size || s[0] != '/' ||
	    memchr(s + 1, '/', n - 1))
		return -EBADMSG;
	memcpy(name, s, n + 1);
	return 0;
}

static int map_host(struct tfs_ipc_entry *e, const struct tfs_meta *m)
{
	char name[64];
	struct stat st;
	int fd, rc, saved;

	if (memcmp(e->handle, TFS_HOST_MAGIC, 8) || host_name(e->handle, name, sizeof(name)))
		return tfs_seterr(-EBADMSG, "malformed host IPC handle (expected TFSHOST1/name)");
	e->writable = 1;
	fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0 && errno == EACCES) {
		e->writable = 0;
		fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
	}
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT)
			return tfs_seterr(-ESTALE, "handle %s names shared memory that no longer exists "
					  "(daemon gone or tensor freed)", name);
		return tfs_seterr(-saved, "shm_open %s: %s", name, tfs_strerror(saved));
	}
	if (fstat(fd, &st)) {
		rc = tfs_seterr(-errno, "fstat %s: %s", name, tfs_strerror(errno));
		goto out;
	}
	if ((uint64_t)st.st_size < m->ipc_offset || (uint64_t)st.st_size - m->ipc_offset < m->bytes) {
		rc = tfs_seterr(-ESTALE, "handle %s: %lld bytes, the tensor needs %llu at offset %llu "
				"(stale metadata)", name, (long long)st.st_size,
				(unsigned long long)m->bytes, (unsigned long long)m->ipc_offset);
		goto out;
	}
	e->size = (size_t)st.st_size;
	e->base = mmap(NULL, e->size, PROT_READ | (e->writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (e->base == MAP_FAILED) {
		saved = errno;
		e->base = NULL;
		rc = tfs_seterr(-saved, "mmap %s: %s", name, tfs_strerror(saved));
		goto out;
	}
	rc = 0;
out:
	close(fd);                   /* the mapping keeps the object */
	return rc;
}

static int map_cuda(struct tfs_ipc_entry *e)
{
	const struct tfs_cudart *cu;
	tfs_cuda_ipc_handle h;
	int rc, prev, err;

	if (!(cu = tfs_cudart_get(&rc)))
		return rc;
	if ((rc = tfs_cuda_enter(cu, e->device, &prev)))
		return rc;
	memcpy(&h, e->handle, sizeof(h));
	err = cu->IpcOpenMemHandle(&e->base, h, TFS_CUDA_IPC_LAZY_PEER);
	if (err) {
		/* A dead exporter shows as an invalid handle/value or a failed mapping. */
		rc = tfs_seterr(-ESTALE, "cudaIpcOpenMemHandle on device %d: %s (daemon gone or "
				"tensor freed?)", e->device, cu->GetErrorString(err));
		e->base = NULL;
	}
	if (prev != e->device)
		cu->SetDevice(prev);
	e->writable = 1;
	return rc;
}

static int unmap(struct tfs_ipc_entry *e)
{
	const struct tfs_cudart *cu;
	int rc = 0, err;

	if (!e->cuda)
		return munmap(e->base, e->size) ? -errno : 0;
	if (!(cu = tfs_cudart_get(&rc)))
		return rc;
	err = cu->IpcCloseMemHandle(e->base);
	return err ? tfs_seterr(-EIO, "cudaIpcCloseMemHandle: %s", cu->GetErrorString(err)) : 0;
}

int tfs_ipc_acquire(const struct tfs_meta *m, struct tfs_ipc_entry **out, void **base,
		    int *writable)
{
	int cuda = strcmp(m->backend, "cuda") == 0;
	struct tfs_ipc_entry *e;
	int rc;

	if (!m->has_handle)
		return tfs_seterr(-ENODATA, "the tensor has no IPC handle (nothing allocated)");
	if (!cuda && strcmp(m->backend, "host"))
		return tfs_seterr(-EBADMSG, "unknown backend \"%s\"", m->backend);
	if (cuda == !memcmp(m->ipc_handle, TFS_HOST_MAGIC, 8))
		return tfs_seterr(-EBADMSG, "the handle does not match backend \"%s\"", m->backend);
	if (cuda) {
		/* A tensor of another GPU: the caller's kernels read it over NVLink or PCIe. */
		const struct tfs_cudart *cu = tfs_cudart_get(&rc);

		if (!cu || (rc = tfs_cuda_reach(cu, m->device)))
			return rc;
	}
	pthread_mutex_lock(&lock);
	for (e = entries; e; e = e->next)
		if (e->cuda == cuda && (!cuda || e->device == m->device) &&
		    !memcmp(e->handle, m->ipc_handle, TFS_IPC_HANDLE_SIZE))
			break;
	if (e) {
		/* A cached mapping from before a resize could be too short for this tensor. */
		if (e->size && (e->size < m->ipc_offset || e->size - m->ipc_offset < m->bytes)) {
			rc = tfs_seterr(-ESTALE, "cached mapping is smaller than the tensor (resized "
					"while mapped)");
			goto out;
		}
		e->users++;
		rc = 0;
		goto found;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		rc = tfs_seterr(-ENOMEM, "out of memory");
		goto out;
	}
	e->cuda = cuda;
	e->device = m->device;
	memcpy(e->handle, m->ipc_handle, TFS_IPC_HANDLE_SIZE);
	rc = cuda ? map_cuda(e) : map_host(e, m);
	if (rc) {
		free(e);
		goto out;
	}
	e->users = 1;
	e->next = entries;
	entries = e;
found:
	*out = e;
	*base = e->base;
	*writable = e->writable;
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

int tfs_ipc_release(struct tfs_ipc_entry *e)
{
	struct tfs_ipc_entry **pp;
	int rc = 0;

	if (!e)
		return 0;
	pthread_mutex_lock(&lock);
	if (--e->users == 0) {
		for (pp = &entries; *pp && *pp != e; pp = &(*pp)->next)
			;
		if (*pp)
			*pp = e->next;
		rc = unmap(e);
		free(e);
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

int tfs_ipc_cache_size(void)
{
	struct tfs_ipc_entry *e;
	int n = 0;

	pthread_mutex_lock(&lock);
	for (e = entries; e; e = e->next)
		n++;
	pthread_mutex_unlock(&lock);
	return n;
}
