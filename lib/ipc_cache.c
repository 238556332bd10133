/* The per-process IPC handle cache: a handle is opened (CUDA) or mapped (host shm) once
 * per process and shared by every tensor that names it (pooled tensors share one
 * allocation); it is closed when its last user releases it, except that the last IDLE_MAX
 * small host mappings stay (IDLE_SIZE each at most): the host backend packs small tensors
 * into blocks (docs/handles.md), and a tensor created, written and deleted after another of
 * the same block then maps nothing, faults nothing in and flushes no TLB. An idle mapping
 * keeps its object's pages until it is dropped (bounded: IDLE_MAX x IDLE_SIZE per process);
 * it is taken again only after the object is opened again as a new mapping would be, so
 * that it grants no more than the object's mode grants now. A VMM tensor's handle
 * (TFS_VMM_MAGIC, docs/vmm.md) names an allocation whose descriptor comes from the handle
 * socket; it is imported and mapped with access for every device of the process, in a
 * reservation with room behind it: an open of the tensor after it grew in place (its
 * handle keeps its id and says a larger size) maps the new chunks there, so that every
 * holder in the process keeps one address for the whole tensor. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_internal.h"
#include "host_handle.h"

/* Host objects up to this size are mapped with MAP_POPULATE (map_host). */
#define POPULATE_MAX (1u << 20)
#define IDLE_MAX 64
#define IDLE_SIZE (1u << 20)
/* Small host objects whose descriptor stays open beside the mapping (tfs_ipc_host_fd),
 * at most this many per process. */
#define FD_KEEP_MAX 128


struct tfs_ipc_entry {
	struct tfs_ipc_entry *next;
	int cuda, device, users, writable;
	int vmm;                     /* a VMM allocation: h[0..nh) imported, base reserved and
				      * they mapped there one after the other */
	int nh;
	unsigned long long h[TFS_FDREP_FDS_MAX];
	size_t hsize[TFS_FDREP_FDS_MAX];
	uint8_t handle[TFS_IPC_HANDLE_SIZE];
	void *base;
	size_t size;                 /* mapped length (host, VMM); 0 = unknown (legacy cuda) */
	size_t resv;                 /* VMM: the address range reserved at base, size and room
				      * for the chunks of a growth (vmm_extend) */
	int fd;                      /* a small host object's descriptor, kept; -1: none */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tfs_ipc_entry *entries;
static struct tfs_ipc_entry *idle;      /* users 0, the most recently released first */
static int nidle;
static int nkept;                       /* entries whose fd is kept */

/* Under lock: keeps fd as e's (a small host object's, while fewer than FD_KEEP_MAX are
 * kept), or closes it. */
static void keep_fd(struct tfs_ipc_entry *e, int fd)
{
	if (e->fd >= 0) {
		close(e->fd);
		e->fd = -1;
		nkept--;
	}
	if (e->size <= IDLE_SIZE && nkept < FD_KEEP_MAX) {
		e->fd = fd;
		nkept++;
	} else {
		close(fd);
	}
}

/* Opens the object a host handle names, read-write when the caller may, else read-only.
 * Only the one form the keeper makes is accepted (host_handle.h), and nothing on the way
 * is followed: the directory is opened with O_NOFOLLOW, then the object inside it, so a
 * link planted in /dev/shm cannot point a handle anywhere else; O_NONBLOCK so that a FIFO
 * planted under such a name fails in map_host instead of hanging here. The descriptor, or
 * -errno. */
static int open_host(const char *path, int *writable)
{
	char dir[TFS_HOST_PATH_MAX];
	const char *slash = strchr(path + 1, '/');
	int dfd, fd, saved;

	snprintf(dir, sizeof(dir), "%s%.*s", TFS_HOST_SHM_ROOT, (int)(slash - path), path);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	*writable = 1;
	fd = openat(dfd, slash + 1, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		*writable = 0;
		fd = openat(dfd, slash + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	}
	saved = errno;
	close(dfd);
	return fd < 0 ? -saved : fd;
}

static int map_host(struct tfs_ipc_entry *e, const struct tfs_meta *m, int tfd)
{
	char name[TFS_HOST_PATH_MAX];
	struct stat st;
	int fd, rc, saved;

	if (tfs_host_handle_path(e->handle, name, sizeof(name)))
		return tfs_seterr(-EBADMSG, "malformed host IPC handle (expected TFSHOST1"
				  "/tensorfs.<pid>.<8 hex>/<24 hex>)");
	fd = open_host(name, &e->writable);
	if (fd == -ENOENT && tfd >= 0) {
		/* The name went, not necessarily the memory (docs/holders.md): the daemon
		 * hands it out on its socket; another node's, its owner's daemon. */
		int w = 1, memfd;

		rc = m->remote ? tfs_hsock_fetch_owner(tfd, m, &w, &memfd) :
		     tfs_hsock_fetch(tfd, &w, &memfd);
		if (rc == 0) {
			fd = memfd;
			e->writable = w;
		} else if (rc == -EACCES) {
			fd = rc;
		} else if (rc == -ENOENT && fstat(tfd, &st) == 0 && st.st_nlink == 0) {
			/* tfs_open opens the path again (client_open.c). */
			return tfs_seterr(-ENOENT, "handle %s: its shared-memory name is gone and "
					  "the tensor has no name in the mount to ask the handle "
					  "socket for (replaced or removed since it was opened)", name);
		}
	}
	if (fd < 0) {
		saved = -fd;
		if (saved == ENOENT)
			return tfs_seterr(-ESTALE, "handle %s names shared memory that no longer exists "
					  "(daemon gone or tensor freed)", name);
		return tfs_seterr(-saved, "open /dev/shm%s: %s", name, tfs_strerror(saved));
	}
	if (fstat(fd, &st)) {
		rc = tfs_seterr(-errno, "fstat %s: %s", name, tfs_strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = tfs_seterr(-EBADMSG, "handle %s names no shared-memory object", name);
		goto out;
	}
	if ((uint64_t)st.st_size < m->ipc_offset || (uint64_t)st.st_size - m->ipc_offset < m->bytes) {
		rc = tfs_seterr(-ESTALE, "handle %s: %lld bytes, the tensor needs %llu at offset %llu "
				"(stale metadata)", name, (long long)st.st_size,
				(unsigned long long)m->bytes, (unsigned long long)m->ipc_offset);
		goto out;
	}
	e->size = (size_t)st.st_size;
	/* A small object's pages are mapped at once: one call instead of a fault per page,
	 * which a virtual machine makes dear; a large one's as they are used. */
	e->base = mmap(NULL, e->size, PROT_READ | (e->writable ? PROT_WRITE : 0),
		       MAP_SHARED | (e->size <= POPULATE_MAX ? MAP_POPULATE : 0), fd, 0);
	if (e->base == MAP_FAILED) {
		saved = errno;
		e->base = NULL;
		rc = tfs_seterr(-saved, "mmap %s: %s", name, tfs_strerror(saved));
		goto out;
	}
	keep_fd(e, fd);
	return 0;
out:
	close(fd);
	return rc;
}

static int map_cuda(struct tfs_ipc_entry *e)
{
	const struct tfs_cudart *cu;
	tfs_cuda_ipc_handle h;
	int rc, prev, err;

	if (!(cu = tfs_cudart_get(&rc)))
		return rc;
	/* On the tensor's own device, where DLPack says it is: a mapping made in another
	 * device's context is not one its own device's kernels can use. */
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

/* A little-endian u64 of a handle. */
static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Undoes what map_vmm and vmm_extend did of e: every chunk's mapping and handle, the
 * reservation. */
static int unmap_vmm(const struct tfs_cudrv *dv, struct tfs_ipc_entry *e)
{
	unsigned long long va = (uintptr_t)e->base;
	size_t off = 0;
	int r, rc = 0;

	for (int i = 0; va && i < e->nh; i++) {
		if ((r = dv->MemUnmap(va + off, e->hsize[i])) != 0 && !rc)
			rc = tfs_seterr(-EIO, "cuMemUnmap: %s", tfs_cudrv_error(dv, r));
		off += e->hsize[i];
	}
	if (va && (r = dv->MemAddressFree(va, e->resv)) != 0 && !rc)
		rc = tfs_seterr(-EIO, "cuMemAddressFree: %s", tfs_cudrv_error(dv, r));
	for (int i = 0; i < e->nh; i++)
		if (e->h[i] && (r = dv->MemRelease(e->h[i])) != 0 && !rc)
			rc = tfs_seterr(-EIO, "cuMemRelease: %s", tfs_cudrv_error(dv, r));
	return rc;
}

/* Maps the imported chunks e->h[from..nh) at va, each after the ones before it, read-write
 * for every device of the process, or, where the driver refuses that, for the tensor's
 * own device. On error none of those is mapped (their handles stay e's). */
static int map_chunks(const struct tfs_cudrv *dv, struct tfs_ipc_entry *e,
		      unsigned long long va, int from)
{
	struct tfs_cu_access acc[64];
	size_t off = 0, at;
	int r, n = 0, i, k, rc;

	for (i = 0; i < from; i++)
		off += e->hsize[i];
	at = off;
	if (dv->DeviceGetCount(&n) != 0 || n <= 0)
		n = 1;
	if (n > (int)(sizeof(acc) / sizeof(acc[0])))
		n = (int)(sizeof(acc) / sizeof(acc[0]));
	for (i = 0; i < n; i++)
		acc[i] = (struct tfs_cu_access){ TFS_CU_LOCATION_DEVICE, i, TFS_CU_ACCESS_RW };
	for (k = from; k < e->nh; k++) {
		if ((r = dv->MemMap(va + off, e->hsize[k], 0, e->h[k], 0)) != 0) {
			rc = tfs_seterr(-EIO, "cuMemMap: %s", tfs_cudrv_error(dv, r));
			goto fail;
		}
		r = dv->MemSetAccess(va + off, e->hsize[k], acc, (size_t)n);
		if (r != 0 && n > 1) {
			acc[0].id = e->device;
			n = 1;
			r = dv->MemSetAccess(va + off, e->hsize[k], acc, 1);
		}
		off += e->hsize[k];
		if (r != 0) {
			k++;
			rc = tfs_seterr(-EIO, "cuMemSetAccess: %s", tfs_cudrv_error(dv, r));
			goto fail;
		}
	}
	return 0;
fail:
	for (off = at, i = from; i < k; off += e->hsize[i++])
		dv->MemUnmap(va + off, e->hsize[i]);
	return rc;
}

/* Room reserved behind a VMM mapping for a later growth (vmm_extend): as much again as
 * the mapping, at least VMM_ROOM_MIN. Address space only; where the driver refuses that
 * much, the mapping gets none. */
#define VMM_ROOM_MIN ((size_t)64 << 20)

/* Reserves e->size bytes and room behind them (VMM_ROOM_MIN), and maps the imported chunks
 * e->h[0..nh) at its start one after the other (a tensor grown in place is several,
 * docs/vmm.md#growth). On error nothing is mapped or reserved (the handles stay e's). */
static int map_imported(const struct tfs_cudrv *dv, struct tfs_ipc_entry *e)
{
	unsigned long long va = 0;
	size_t room = e->size > VMM_ROOM_MIN ? e->size : VMM_ROOM_MIN;
	int r, rc;

	/* Aligned to the largest power of two dividing the size, a multiple of the
	 * granularity the size was rounded to (the driver's default may be finer). */
	size_t align = e->size & -e->size;

	if (align > ((size_t)1 << 30))
		align = (size_t)1 << 30;
	e->resv = e->size <= ((size_t)1 << 47) - room ? e->size + room : e->size;
	if (e->resv > e->size && dv->MemAddressReserve(&va, e->resv, align, 0, 0) != 0)
		e->resv = e->size;
	if (e->resv == e->size && (r = dv->MemAddressReserve(&va, e->size, align, 0, 0)) != 0)
		return tfs_seterr(-ENOMEM, "cuMemAddressReserve(%zu): %s", e->size,
				  tfs_cudrv_error(dv, r));
	if ((rc = map_chunks(dv, e, va, 0))) {
		dv->MemAddressFree(va, e->resv);
		return rc;
	}
	e->base = (void *)(uintptr_t)va;
	return 0;
}

/* The allocation's descriptors from the handle socket: by the open file tfd (another
 * node's tensor from its owner's socket, which alone holds it), else by name from the
 * socket the metadata names. */
static int vmm_fetch(const struct tfs_meta *m, int tfd, const char *name, int *w,
		     struct tfs_hsock_mem *mem)
{
	uint64_t bytes = 0;
	int rc;

	if (tfd >= 0 && m->remote)
		return tfs_hsock_fetch_owner_mem(tfd, m, w, mem);
	if (tfd >= 0)
		return tfs_hsock_fetch_mem(tfd, w, mem);
	rc = tfs_hsock_fetch_name_mem(m->hsock, name, w, mem, &bytes);
	/* By name, another tensor may have taken it since the metadata was read. */
	if (rc == 0 && bytes != m->bytes) {
		tfs_hsock_mem_close(mem);
		rc = -ESTALE;
	}
	return rc;
}

/* Whether m's VMM handle can describe m: a size, and m's bytes inside it. */
static int vmm_handle_ok(const struct tfs_meta *m)
{
	uint64_t size = le64(m->ipc_handle + 16);

	if (!size || size > ((uint64_t)1 << 48) || m->ipc_offset > size ||
	    m->bytes > size - m->ipc_offset)
		return tfs_seterr(-EBADMSG, "malformed VMM handle (size %llu for %llu bytes at "
				  "%llu)", (unsigned long long)size, (unsigned long long)m->bytes,
				  (unsigned long long)m->ipc_offset);
	return 0;
}

/* With the device's context current: m's allocation's descriptors from the handle socket;
 * the first e->nh must be the chunks e holds (their sizes), the others are imported into
 * e->h[e->nh..) and counted in e->nh and e->hsize. *total: every chunk's size added, at
 * least the handle's. On error e is as it was; -ESTALE where the socket's memory is not
 * e's chunks and more. */
static int vmm_import(const struct tfs_cudrv *dv, struct tfs_ipc_entry *e,
		      const struct tfs_meta *m, int tfd, const char *name, int *w,
		      uint64_t *total)
{
	uint64_t size = le64(m->ipc_handle + 16), sum = 0;
	struct tfs_hsock_mem mem = { 0 };
	int rc = 0, r, have = e->nh;

	if ((rc = vmm_fetch(m, tfd, name, w, &mem))) {
		return rc == -EACCES ? tfs_seterr(-EACCES, "the handle socket refused the "
						  "tensor's memory") :
		       rc == -ESTALE ? tfs_seterr(-ESTALE, "the handle socket's tensor of that "
						  "name is another one now") :
		       rc == -ENOENT && tfd >= 0 ?
				       tfs_seterr(-ENOENT, "no handle socket answered for the "
						  "tensor (%s)", m->remote ? "another node's, "
						  "whose mount is not on this machine" : "replaced or "
						  "removed since it was opened: it has no name to ask "
						  "for") :
		       tfs_seterr(rc, "the handle socket: %s", tfs_strerror(-rc));
	}
	/* One descriptor: the handle's size. Several (grown in place): each one's, the
	 * whole at least what the handle says (it may have grown again since). */
	if (mem.n == 1)
		mem.size[0] = size;
	for (int i = 0; i < mem.n; i++) {
		if (mem.size[i] > ((uint64_t)1 << 48) - sum) {
			rc = tfs_seterr(-EBADMSG, "the handle socket's pieces are too large");
			goto out;
		}
		sum += mem.size[i];
	}
	if (sum < size) {
		rc = tfs_seterr(-ESTALE, "the handle socket's memory (%llu bytes) is shorter than "
				"the handle's (%llu)", (unsigned long long)sum,
				(unsigned long long)size);
		goto out;
	}
	if (mem.n <= have) {
		rc = -ESTALE;
		goto out;
	}
	for (int i = 0; i < have; i++)
		if (mem.size[i] != e->hsize[i]) {
			rc = -ESTALE;
			goto out;
		}
	for (; e->nh < mem.n; e->nh++) {
		e->hsize[e->nh] = (size_t)mem.size[e->nh];
		r = dv->MemImportFromShareableHandle(&e->h[e->nh],
						     (void *)(uintptr_t)mem.fd[e->nh],
						     TFS_CU_HANDLE_POSIX_FD);
		if (r != 0) {
			rc = tfs_seterr(-ESTALE, "cuMemImportFromShareableHandle: %s",
					tfs_cudrv_error(dv, r));
			while (e->nh > have)
				dv->MemRelease(e->h[--e->nh]);
			goto out;
		}
	}
	*total = sum;
out:
	/* The imported handles keep the memory. */
	tfs_hsock_mem_close(&mem);
	return rc;
}

/* The device of e made current, its context made (the runtime makes it lazily; the
 * driver's calls need it); *prev the device that was current, for the caller to restore. */
static int vmm_enter(const struct tfs_cudart **cu, const struct tfs_cudrv **dv, int device,
		     int *prev)
{
	int rc, r;

	if (!(*cu = tfs_cudart_get(&rc)) || !(*dv = tfs_cudrv_get(&rc)))
		return rc;
	if ((rc = tfs_cuda_enter(*cu, device, prev)))
		return rc;
	if ((r = (*cu)->Free(NULL)) != 0) {
		rc = tfs_seterr(-ENODEV, "cudaFree(NULL) on device %d: %s", device,
				(*cu)->GetErrorString(r));
		if (*prev != device)
			(*cu)->SetDevice(*prev);
	}
	return rc;
}

static int map_vmm(struct tfs_ipc_entry *e, const struct tfs_meta *m, int tfd, const char *name)
{
	const struct tfs_cudart *cu;
	const struct tfs_cudrv *dv;
	uint64_t total = 0;
	int rc, prev, w = 1;

	/* A small tensor may be packed into a shared allocation (docs/vmm.md): at an offset,
	 * and the whole allocation is mapped, as a legacy handle maps its whole block. */
	if ((rc = vmm_handle_ok(m)))
		return rc;
	if (tfd < 0 && (!name || !m->hsock[0]))
		return tfs_seterr(-ENOTSUP, "a VMM tensor (handle_type posix_fd): its memory comes "
				  "from the handle socket, and neither a file of the mount nor "
				  "metadata with the tensor's name and socket says which");
	if ((rc = vmm_enter(&cu, &dv, e->device, &prev)))
		return rc;
	e->nh = 0;
	if ((rc = vmm_import(dv, e, m, tfd, name, &w, &total)))
		goto out;
	e->size = (size_t)total;
	if ((rc = map_imported(dv, e))) {
		while (e->nh > 0)
			dv->MemRelease(e->h[--e->nh]);
		goto out;
	}
	e->vmm = 1;
	e->writable = w;
out:
	if (prev != e->device)
		cu->SetDevice(prev);
	return rc;
}

/* Under lock: e, a mapping of the VMM allocation m's handle names (its id and device)
 * shorter than m's, made to map all of it at the same address: the chunks a growth in
 * place added (docs/vmm.md#growth) fetched, imported and mapped after e's in the room
 * behind them. 0, or -ESTALE where that cannot be (the socket's memory is not e's chunks
 * and more, or it does not fit the room): the caller then maps m afresh; other errors as
 * map_vmm's. On error e is as it was. */
static int vmm_extend(struct tfs_ipc_entry *e, const struct tfs_meta *m, int tfd,
		      const char *name)
{
	const struct tfs_cudart *cu;
	const struct tfs_cudrv *dv;
	uint64_t total = 0;
	int rc, prev, w = 1, have = e->nh;

	if ((rc = vmm_handle_ok(m)))
		return rc;
	if (tfd < 0 && (!name || !m->hsock[0]))
		return -ESTALE;
	if ((rc = vmm_enter(&cu, &dv, e->device, &prev)))
		return rc;
	if ((rc = vmm_import(dv, e, m, tfd, name, &w, &total)))
		goto out;
	if (total > e->resv)
		rc = -ESTALE;
	else
		rc = map_chunks(dv, e, (uintptr_t)e->base, have);
	if (rc) {
		while (e->nh > have)
			dv->MemRelease(e->h[--e->nh]);
		goto out;
	}
	e->size = (size_t)total;
	memcpy(e->handle, m->ipc_handle, TFS_IPC_HANDLE_SIZE);
	/* What the socket grants now (a chmod since): no more for the opens that follow. */
	e->writable = e->writable && w;
out:
	if (prev != e->device)
		cu->SetDevice(prev);
	return rc;
}

static int unmap(struct tfs_ipc_entry *e)
{
	const struct tfs_cudart *cu;
	const struct tfs_cudrv *dv;
	int rc = 0, err, prev;

	if (!e->cuda) {
		if (e->fd >= 0) {
			close(e->fd);
			e->fd = -1;
			nkept--;
		}
		return munmap(e->base, e->size) ? -errno : 0;
	}
	if (!(cu = tfs_cudart_get(&rc)) || (rc = tfs_cuda_enter(cu, e->device, &prev)))
		return rc;
	/* The work queued on the memory ends first: cuMemUnmap does not wait for it (unlike
	 * cudaFree; cudaIpcCloseMemHandle promises nothing either), and a kernel or copy
	 * still in flight (torch's, on a DLPack view dropped at once) would meet an unmapped
	 * address, an illegal-address error that breaks the process's context. PyTorch waits
	 * so before it unmaps its own VMM segments. */
	if ((err = cu->DeviceSynchronize()) != 0)
		tfs_seterr(-EIO, "cudaDeviceSynchronize before unmapping: %s",
			   cu->GetErrorString(err));
	if (e->vmm) {
		if ((dv = tfs_cudrv_get(&rc)))
			rc = unmap_vmm(dv, e);
	} else if ((rc = cu->IpcCloseMemHandle(e->base)) != 0) {
		rc = tfs_seterr(-EIO, "cudaIpcCloseMemHandle: %s", cu->GetErrorString(rc));
	}
	if (!rc && err)
		rc = -EIO;
	if (prev != e->device)
		cu->SetDevice(prev);
	return rc;
}

/* Under lock: keeps e idle; returns the entry that must go instead (the oldest, when
 * there are IDLE_MAX already), or NULL. */
static struct tfs_ipc_entry *idle_put(struct tfs_ipc_entry *e)
{
	struct tfs_ipc_entry **pp;

	e->next = idle;
	idle = e;
	if (++nidle <= IDLE_MAX)
		return NULL;
	for (pp = &idle; (*pp)->next; pp = &(*pp)->next)
		;
	e = *pp;
	*pp = NULL;
	nidle--;
	return e;
}

/* Under lock: the idle mapping of m's host handle, out of the idle list, when the object
 * may still be opened with the access the mapping has and is large enough for m; else
 * NULL (a stale one is dropped). */
static struct tfs_ipc_entry *idle_take(const struct tfs_meta *m)
{
	struct tfs_ipc_entry **pp, *e;
	char name[TFS_HOST_PATH_MAX];
	int fd, w = 0;

	for (pp = &idle; *pp; pp = &(*pp)->next)
		if (!memcmp((*pp)->handle, m->ipc_handle, TFS_IPC_HANDLE_SIZE))
			break;
	if (!(e = *pp))
		return NULL;
	*pp = e->next;
	nidle--;
	fd = tfs_host_handle_path(e->handle, name, sizeof(name)) ? -EINVAL : open_host(name, &w);
	if (fd < 0 || w != e->writable || e->size < m->ipc_offset ||
	    e->size - m->ipc_offset < m->bytes) {
		if (fd >= 0)
			close(fd);
		unmap(e);
		free(e);
		return NULL;
	}
	/* The descriptor just opened, with the object's access of now. */
	keep_fd(e, fd);
	return e;
}

/* Under lock: the entry of m's handle, or NULL. */
static struct tfs_ipc_entry *find(const struct tfs_meta *m, int cuda)
{
	struct tfs_ipc_entry *e;

	for (e = entries; e; e = e->next)
		if (e->cuda == cuda && (!cuda || e->device == m->device) &&
		    !memcmp(e->handle, m->ipc_handle, TFS_IPC_HANDLE_SIZE))
			break;
	return e;
}

/* Under lock: a VMM mapping of the allocation m's handle names (the same magic and id,
 * the same device), whatever size either says, or NULL. */
static struct tfs_ipc_entry *find_vmm(const struct tfs_meta *m)
{
	struct tfs_ipc_entry *e;

	for (e = entries; e; e = e->next)
		if (e->cuda && e->vmm && e->device == m->device &&
		    !memcmp(e->handle, m->ipc_handle, 16))
			break;
	return e;
}

int tfs_ipc_acquire(const struct tfs_meta *m, struct tfs_ipc_entry **out, void **base,
		    int *writable)
{
	return tfs_ipc_acquire_fd(m, -1, NULL, out, base, writable);
}

int tfs_ipc_acquire_fd(const struct tfs_meta *m, int tfd, const char *name,
		       struct tfs_ipc_entry **out, void **base, int *writable)
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
	pthread_mutex_lock(&lock);
	e = find(m, cuda);
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
	/* A VMM tensor grown in place since this process mapped it: the one mapping, with
	 * the new chunks behind the old (a growth past the room, a fresh one). */
	if (cuda && !memcmp(m->ipc_handle, TFS_VMM_MAGIC, 8) && (e = find_vmm(m))) {
		if ((rc = vmm_handle_ok(m)))
			goto out;
		if (le64(m->ipc_handle + 16) > e->size)
			rc = vmm_extend(e, m, tfd, name);
		if (rc == 0) {
			e->users++;
			goto found;
		}
		if (rc != -ESTALE)
			goto out;
	}
	if (!cuda && (e = idle_take(m))) {
		e->users = 1;
		e->next = entries;
		entries = e;
		goto found;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		rc = tfs_seterr(-ENOMEM, "out of memory");
		goto out;
	}
	e->cuda = cuda;
	e->device = m->device;
	e->fd = -1;
	memcpy(e->handle, m->ipc_handle, TFS_IPC_HANDLE_SIZE);
	rc = !cuda ? map_host(e, m, tfd) :
	     memcmp(m->ipc_handle, TFS_VMM_MAGIC, 8) == 0 ? map_vmm(e, m, tfd, name) : map_cuda(e);
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
		if (!e->cuda && e->size <= IDLE_SIZE) {
			e = idle_put(e);
			if (!e)
				goto out;
		}
		rc = unmap(e);
		free(e);
	}
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

int tfs_ipc_host_fd(const struct tfs_ipc_entry *e)
{
	return e ? e->fd : -1;
}

int tfs_ipc_mapped(const struct tfs_meta *m)
{
	int cuda = strcmp(m->backend, "cuda") == 0;
	struct tfs_ipc_entry *e;

	pthread_mutex_lock(&lock);
	e = find(m, cuda);
	pthread_mutex_unlock(&lock);
	return e != NULL;
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
