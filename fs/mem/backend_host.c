/* The host backend: each tensor is a shared-memory object in the keeper's directory of
 * /dev/shm, so another process maps it by name. The 64-byte handle is "TFSHOST1" followed
 * by the NUL-terminated path (core/host_handle.h, docs/handles.md); the offset is 0,
 * except in a tier --preallocate names, whose tensors are carved from the segments of its
 * pool (backend_host_pool.c), and for tensors up to -o host_pack elsewhere, packed into
 * blocks shared per owner, mode and directory (host_pack.c). Pages are reserved with fallocate at
 * allocation so running out of /dev/shm is ENOSPC here, not SIGBUS in a later copy.
 * The memory keeper makes and owns the objects (keeper_host.c) and sends the daemon a
 * descriptor of each; without a keeper (a backend used on its own) the same code runs in
 * this process. */
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

#include "mem/backend.h"
#include "mem/tiers.h"
#include "mem/host_mem.h"
#include "mem/host_internal.h"
#include "mem/host_pool.h"
#include "tier.h"
#include "fileio.h"
#include "host_handle.h"
#include "mem/keeper/keeper.h"
#include "meta.h"
#include "log.h"
#include "mem/shm_sweep.h"
#include "util/guard.h"
#include "util/nofile.h"


/* Can a tensor of bytes be charged at all? Bounded before any arithmetic on it: the page
 * rounding and the signed charges below stay in range for every size that passes. */
int hb_chargeable(struct tfs_backend *be, int slot, uint64_t bytes)
{
	uint64_t total = be->tier[slot].total;

	if (bytes > (uint64_t)INT64_MAX - be->page)
		return -EFBIG;
	return total && hb_round_page(be, bytes) > total ? -ENOSPC : 0;
}

/* The slot of device, or -1 when this backend has no such tier. */
static int slot_of(struct tfs_backend *be, int device)
{
	if (device == TFS_DEVICE_CPU)
		return be->ndev;
	return device >= 0 && device < be->ndev ? device : -1;
}

/* Is pid's entry in /dev/shm a leftover? Those of daemons that died without unmounting
 * (kill -9, a crash, a keeper that gave up) stay: their memory is lost to everyone but
 * processes that still map it. Removed at start: those whose pid is gone, and those with
 * the pid of a keeper that is only starting (a dead process's). A live keeper's directory
 * is its own to keep; it removes its pid's older leftovers itself (keeper_host.c). */
static int stale(pid_t pid, void *arg)
{
	(void)arg;
	if (pid == tfs_keeper_pid())
		return !tfs_keeper_present();
	return kill(pid, 0) && errno == ESRCH;
}

static void sweep_orphans(void)
{
	int removed = tfs_shm_sweep(stale, NULL);

	if (removed)
		tfs_log(LOG_NOTICE, "host: removed %d shared-memory object(s) of daemons that "
			"died without unmounting", removed);
}

/* What the keeper holds already (a daemon started again after a crash): kept until
 * host_adopt takes it or host_adopt_end frees it. */
static int list_found(struct tfs_backend *be)
{
	struct tfs_keeper_req req = { .op = TFS_KEEPER_LIST };
	struct tfs_keeper_rep rep;
	size_t cap = 0;
	int fd, rc;

	if (!tfs_keeper_present())
		return 0;
	while ((rc = tfs_keeper_call(&req, &rep, &fd)) == 0) {
		char path[TFS_HOST_PATH_MAX];
		struct found *f;

		req.id = rep.id;
		if (fd < 0 || tfs_host_handle_path(rep.handle, path, sizeof(path))) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (be->nfound == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct found *nf = realloc(be->found, ncap * sizeof(*nf));

			if (!nf) {
				close(fd);
				return -ENOMEM;
			}
			be->found = nf;
			cap = ncap;
		}
		f = &be->found[be->nfound++];
		*f = (struct found){ .id = rep.id, .fd = fd };
		snprintf(f->name, sizeof(f->name), "%s", path);
	}
	return rc == -ENOENT ? 0 : rc;
}

static void host_fini(struct tfs_backend *be);

static int host_init(struct tfs_backend **out, int device, uint64_t max_bytes)
{
	struct tfs_backend *be;
	struct statvfs sv;
	int rc;

	int ndev = tfs_mem.host_devices ? tfs_mem.host_devices : 1;

	if (device < 0 || device >= ndev || ndev > TFS_HOST_DEVICES_MAX)
		return -EINVAL;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	be->ndev = ndev;
	pthread_mutex_init(&be->lock, NULL);
	/* Before the list: the daemon keeps a descriptor of every object, so that a keeper
	 * that dies hands nothing to the kernel (handover.h). */
	tfs_keeper_two_holders();
	sweep_orphans();
	if ((rc = list_found(be))) {
		free(be->found);
		pthread_mutex_destroy(&be->lock);
		free(be);
		return rc;
	}
	be->page = (size_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i <= ndev; i++) {
		int dev = i == ndev ? TFS_DEVICE_CPU : i;
		uint64_t *total = &be->tier[i].total;

		*total = tfs_tier_size(&tfs_mem.caps, dev);
		if (*total == 0)
			*total = max_bytes;
		if (*total == 0 && statvfs("/dev/shm", &sv) == 0)
			*total = (uint64_t)sv.f_blocks * sv.f_frsize;
		if (dev == TFS_DEVICE_CPU)
			*total = tfs_tier_host_bound(*total);
		/* Without a cap of its own, a preallocated tier is its reservation. */
		if (tfs_tier_size(&tfs_mem.prealloc, dev) && !tfs_tier_size(&tfs_mem.caps, dev) &&
		    !max_bytes)
			*total = hb_round_page(be, tfs_tier_size(&tfs_mem.prealloc, dev));
	}
	/* A restart fills the pools once the keeper's objects are taken back (adopt_end). */
	if ((rc = hb_start_pools(be, be->nfound == 0)) || (rc = tfs_host_pack_init(be))) {
		host_fini(be);
		return rc;
	}
	*out = be;
	return 0;
}

static void host_fini(struct tfs_backend *be)
{
	tfs_host_pack_fini(be);
	hb_stop_pools(be);
	for (size_t i = 0; i < be->nfound; i++)
		if (be->found[i].fd >= 0)
			close(be->found[i].fd);
	free(be->found);
	pthread_mutex_destroy(&be->lock);
	free(be);
}

static int host_device_count(struct tfs_backend *be)
{
	return be->ndev;
}

/* Charges n reserved bytes against the tier's cap; -ENOSPC when it does not fit. */
int hb_charge(struct tfs_backend *be, int slot, int64_t used, int64_t reserved)
{
	struct htier *t = &be->tier[slot];
	int rc = 0;

	/* The host tier also competes with everything else the machine runs: it grows only
	 * into memory available now, never into swap or the OOM killer's reach. */
	if (slot == be->ndev && reserved > 0 && (uint64_t)reserved > tfs_tier_host_available())
		return -ENOSPC;
	pthread_mutex_lock(&be->lock);
	if (reserved > 0 && t->reserved + (uint64_t)reserved > t->total)
		rc = -ENOSPC;
	else {
		t->used += (uint64_t)used;
		t->reserved += (uint64_t)reserved;
	}
	pthread_mutex_unlock(&be->lock);
	return rc;
}

/* A new object of size bytes for uid: from the keeper, or made here without one. Fills
 * a->fd, a->name and a->kid or a->kpriv. */
static int obtain_object(struct tfs_alloc *a, uint64_t size, uid_t uid, gid_t gid,
			 mode_t mode)
{
	/* Every tier of this backend is the host's memory: the keeper makes it as such,
	 * also when the mount's backend is another (docs/tiers.md). */
	struct tfs_keeper_req req = { .op = TFS_KEEPER_ALLOC, .size = size, .uid = uid,
				      .gid = gid, .mode = mode, .device = TFS_DEVICE_CPU };
	struct tfs_keeper_rep rep;
	uint8_t handle[TFS_IPC_HANDLE_SIZE];
	int rc;

	if (!tfs_keeper_present()) {
		rc = tfs_keeper_mem_host.alloc(size, 0, uid, gid, mode, handle, &a->fd, &a->kpriv);
		if (rc == 0)
			snprintf(a->name, sizeof(a->name), "%s", (const char *)handle + 8);
		return rc;
	}
	rc = tfs_keeper_call(&req, &rep, &a->fd);
	if (rc)
		return rc == -EPIPE ? -EIO : rc;
	if (a->fd < 0 || tfs_host_handle_path(rep.handle, a->name, sizeof(a->name))) {
		/* The keeper answered nonsense: give it back rather than serve it. */
		struct tfs_keeper_req fr = { .op = TFS_KEEPER_FREE, .id = rep.id };

		if (a->fd >= 0)
			close(a->fd);
		tfs_keeper_call(&fr, &rep, NULL);
		return -EIO;
	}
	a->kid = rep.id;
	return 0;
}

/* obtain_object, with out of descriptors (the keeper's, or ours: the object then went
 * back) answered ENOSPC, as a full file system's creates are: EMFILE would tell the
 * caller that its own table is full. */
int hb_obtain(struct tfs_alloc *a, uint64_t size, uid_t uid, gid_t gid, mode_t mode)
{
	int rc = obtain_object(a, size, uid, gid, mode);

	if (rc == -EMFILE || rc == -ENFILE) {
		tfs_nofile_refused("a new tensor's memory");
		rc = -ENOSPC;
	}
	return rc;
}

/* The keeper that made a's object is gone (killed): nobody else would remove it, and its
 * bytes would stay in /dev/shm until a later start swept them. Processes that map it keep
 * their mapping. The directory goes with its last object. */
static void remove_orphan(const struct tfs_alloc *a)
{
	char path[sizeof(TFS_HOST_SHM_ROOT) + TFS_HOST_PATH_MAX], *slash;

	snprintf(path, sizeof(path), TFS_HOST_SHM_ROOT "%s", a->name);
	if (unlink(path) && errno != ENOENT) {
		tfs_log(LOG_WARNING, "host: cannot remove %s: %s", path, strerror(errno));
		return;
	}
	slash = strrchr(path, '/');
	if (slash && slash > path + strlen(TFS_HOST_SHM_ROOT)) {
		*slash = '\0';
		rmdir(path);
	}
}

/* The object goes: the keeper removes it (or this process, without a keeper, or when the
 * keeper is gone). */
void hb_give_back(struct tfs_alloc *a)
{
	struct tfs_keeper_req req = { .op = TFS_KEEPER_FREE, .id = a->kid };
	struct tfs_keeper_rep rep;
	int rc;

	close(a->fd);
	if (a->kpriv)
		tfs_keeper_mem_host.free(a->kpriv, a->mapped, 0);
	else if ((rc = tfs_keeper_call(&req, &rep, NULL)) == -EPIPE)
		remove_orphan(a);
	else if (rc)
		tfs_log(LOG_WARNING, "host: the keeper did not free %s", a->name);
}

/* Charges without the cap (adopted memory). */
void hb_charge_force(struct tfs_backend *be, int slot, int64_t used, int64_t reserved)
{
	pthread_mutex_lock(&be->lock);
	be->tier[slot].used += (uint64_t)used;
	be->tier[slot].reserved += (uint64_t)reserved;
	pthread_mutex_unlock(&be->lock);
}

/* host_alloc, zeroed or not (zero 0: the caller writes every byte, a move). */
static int alloc_in(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid,
		    gid_t gid, mode_t mode, uint64_t dir, int zero, struct tfs_alloc **out)
{
	struct tfs_alloc *a;
	uint64_t mapped;
	int rc, slot = slot_of(be, device);

	if (slot < 0)
		return -EINVAL;
	/* A preallocated tier's tensors are all its pool's; elsewhere a small one is packed
	 * (host_pack.c, zeroed whatever zero says), a larger one is an object of its own. */
	if (be->tier[slot].pool)
		return hb_pool_alloc(be, slot, bytes, 0, uid, gid, mode, dir, zero, out);
	if ((rc = hb_chargeable(be, slot, bytes)))
		return rc;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	rc = tfs_host_pack_alloc(be, slot, bytes, uid, gid, mode, dir, a);
	if (rc == 0)
		goto done;
	if (rc != -E2BIG) {
		free(a);
		return rc;
	}
	mapped = hb_round_page(be, bytes);
	rc = hb_charge(be, slot, (int64_t)bytes, (int64_t)mapped);
	if (rc == -ENOSPC && tfs_host_pack_cached(be, slot)) {
		/* Empty blocks kept for reuse give way. */
		tfs_host_pack_trim(be, slot);
		rc = hb_charge(be, slot, (int64_t)bytes, (int64_t)mapped);
	}
	if (rc) {
		free(a);
		return rc;
	}
	if ((rc = hb_obtain(a, mapped, uid, gid, mode)))
		goto fail_struct;
	/* Not MAP_POPULATE: it faults the whole object in here, in the thread that sizes the
	 * tensor, at about 2.5 GB/s; the copies into it (prefault) map their own pages, in
	 * as many threads as copy. */
	a->base = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (a->base == MAP_FAILED) {
		rc = -ENOSPC;
		goto fail_shm;
	}
	a->bytes = bytes;
	a->mapped = mapped;
	a->slot = slot;
done:
	a->uid = uid;
	a->gid = gid;
	a->mode = mode;
	a->dir = dir;
	__atomic_add_fetch(&be->tier[slot].nallocs, 1, __ATOMIC_RELAXED);
	*out = a;
	return 0;
fail_shm:
	hb_give_back(a);
fail_struct:
	free(a);
	hb_charge(be, slot, -(int64_t)bytes, -(int64_t)mapped);
	return rc;
}

static int host_alloc(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid,
		      gid_t gid, mode_t mode, uint64_t dir, struct tfs_alloc **out)
{
	return alloc_in(be, device, bytes, uid, gid, mode, dir, 1, out);
}

int tfs_host_alloc_uninit(struct tfs_backend *be, int device, uint64_t bytes, uid_t uid,
			  gid_t gid, mode_t mode, uint64_t dir, struct tfs_alloc **out)
{
	return alloc_in(be, device, bytes, uid, gid, mode, dir, 0, out);
}

static void free_now(struct tfs_backend *be, struct tfs_alloc *a)
{
	if (a->seg) {
		hb_pool_free(be, a);
		return;
	}
	if (a->chunk) {
		tfs_host_pack_free(be, a);
	} else {
		munmap(a->base, a->mapped);
		hb_give_back(a);
		hb_charge(be, a->slot, -(int64_t)a->bytes, -(int64_t)a->mapped);
	}
	__atomic_sub_fetch(&be->tier[a->slot].nallocs, 1, __ATOMIC_RELAXED);
	free(a);
}

static void host_free(struct tfs_backend *be, struct tfs_alloc *a)
{
	int later;

	if (!a)
		return;
	/* UCX may still send from it: the last host_span_end frees it. */
	pthread_mutex_lock(&be->lock);
	later = a->spans > 0;
	a->freed = later;
	pthread_mutex_unlock(&be->lock);
	if (!later)
		free_now(be, a);
}

/* Whether a's memory is lent (host_span): it must then stay where it is. */
static int lent(struct tfs_alloc *a)
{
	return __atomic_load_n(&a->spans, __ATOMIC_ACQUIRE) > 0;
}

static int host_resize(struct tfs_backend *be, struct tfs_alloc **ap, uint64_t bytes)
{
	struct tfs_alloc *a = *ap;
	uint64_t mapped;
	void *base;
	int rc;

	if (lent(a))
		return -EBUSY;       /* its mapping must stay whole while UCX reads it */
	if (a->seg)
		return hb_pool_resize(be, a, bytes);
	/* Only growth is bounded: a tensor adopted over a smaller --max-bytes may shrink. */
	if (bytes > a->bytes && (rc = hb_chargeable(be, a->slot, bytes)))
		return rc;
	if (a->chunk)
		return tfs_host_pack_resize(be, a, bytes);
	mapped = hb_round_page(be, bytes);
	if (bytes > a->bytes && mapped > a->mapped) {
		if ((rc = hb_charge(be, a->slot, 0, (int64_t)(mapped - a->mapped))))
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
			hb_charge(be, a->slot, 0, -(int64_t)(mapped - a->mapped));
			return -ENOSPC;
		}
		a->base = base;
		hb_charge(be, a->slot, (int64_t)(bytes - a->bytes), 0);
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
			hb_charge(be, a->slot, 0, -(int64_t)(a->mapped - mapped));
			a->mapped = mapped;
		}
		if (ftruncate(a->fd, (off_t)mapped))
			return -errno;
		hb_charge(be, a->slot, -(int64_t)(a->bytes - bytes), 0);
		a->bytes = bytes;
		return 0;
	}
	/* Growing inside the last page: those bytes are already zero. */
	hb_charge(be, a->slot, (int64_t)(bytes - a->bytes), 0);
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
	*offset = a->seg ? tfs_pool_chunk_offset(a->chunk) : a->off;
	return 0;
}

static int host_set_owner(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid, gid_t gid,
			  mode_t mode, uint64_t dir, unsigned flags)
{
	int rc;

	/* Lent to UCX: the old memory stays until it lets go (hb_move_lent). */
	if ((a->seg || a->chunk) && !(flags & TFS_BE_NOMOVE) && lent(a)) {
		rc = host_set_owner(be, a, uid, gid, mode, dir, TFS_BE_NOMOVE);
		return rc == -EBUSY ? hb_move_lent(be, a, uid, gid, mode, dir) : rc;
	}
	if (a->seg)
		return hb_pool_set_owner(be, a, uid, gid, mode, dir, flags);
	if (a->chunk) {
		if ((rc = tfs_host_pack_set_owner(be, a, uid, gid, mode, dir, flags)))
			return rc;
	} else if ((fchown(a->fd, uid, gid) && (errno != EPERM || geteuid() == 0)) ||
		   fchmod(a->fd, mode & 0666)) {
		/* An object of its own: it never moves. A daemon not run by root cannot give
		 * the object away: it stays the daemon user's, and the mode says who else maps
		 * it. */
		return -errno;
	}
	a->uid = uid;
	a->gid = gid;
	a->mode = mode;
	a->dir = dir;
	return 0;
}

/* Maps the pages a copy is about to write, in one call instead of a fault per 4 KiB page.
 * fallocate reserved them, so this cannot run out of memory; where it fails anyway (a
 * kernel before 5.14) the copy faults them in. */
void hb_prefault(void *p, size_t len)
{
	(void)tfs_populate(p, len, MADV_POPULATE_WRITE);
}

/* A guarded copy's result: a fault means the object lost pages under us (truncated or
 * punched by whoever may write it; or /dev/shm full where pages were punched). Said once
 * per tensor, so that repeating it does not fill the log. */
int hb_copied(struct tfs_alloc *a, int rc)
{
	if (rc && !__atomic_exchange_n(&a->damaged, 1, __ATOMIC_RELAXED))
		tfs_log(LOG_WARNING, "host: %s%s lost pages under the daemon (truncated by a "
			"process that may write it?): its reads and writes fail with EIO",
			TFS_HOST_SHM_ROOT, a->name);
	return rc;
}

static int host_copy_in(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
			const void *src, size_t len)
{
	(void)be;
	if (off > a->bytes || len > a->bytes - off)
		return -EINVAL;
	hb_prefault((char *)a->base + off, len);
	return hb_copied(a, tfs_guarded_copy((char *)a->base + off, src, len));
}

static int host_copy_in_fd(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, int fd,
			   uint64_t foff, size_t len)
{
	(void)be;
	if (off > a->bytes || len > a->bytes - off)
		return -EINVAL;
	hb_prefault((char *)a->base + off, len);
	return tfs_pread_full(fd, (char *)a->base + off, len, foff);
}

static int host_copy_out(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
			 void *dst, size_t len)
{
	(void)be;
	if (off > a->bytes || len > a->bytes - off)
		return -EINVAL;
	return hb_copied(a, tfs_guarded_copy(dst, (char *)a->base + off, len));
}

static int host_read_mem(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off,
			 size_t len, const void **mem)
{
	(void)be;
	if (off > a->bytes || len > a->bytes - off)
		return -EINVAL;
	*mem = (const char *)a->base + off;
	return 0;
}

static int host_span(struct tfs_backend *be, struct tfs_alloc *a, uint64_t off, size_t len,
		     int wr, struct tfs_guard_span *span)
{
	struct tfs_alloc *own;
	int rc;

	if (off > a->bytes || len > a->bytes - off)
		return -EINVAL;
	if (wr)
		hb_prefault((char *)a->base + off, len);
	/* The object the bytes lie in, mapped from its start (guard.h): a pooled tensor's
	 * segment, a packed one's block (whose pages are its own: chunks are whole pages). */
	own = a->seg ? a->seg : a->blk ? a->blk : a;
	span->map = own->base;
	span->fd = own->fd;
	span->p = (char *)a->base + off;
	span->len = len;
	span->owner = a;
	span->owner_be = be;
	if ((rc = tfs_guard_span_add(span)))
		return rc;
	pthread_mutex_lock(&be->lock);
	a->spans++;
	pthread_mutex_unlock(&be->lock);
	return 0;
}

static int host_span_end(struct tfs_backend *unused, struct tfs_guard_span *span)
{
	struct tfs_backend *be = span->owner_be;
	struct tfs_alloc *a = span->owner, *old = NULL, *next;
	int rc = tfs_guard_span_del(span), last;

	(void)unused;
	pthread_mutex_lock(&be->lock);
	last = --a->spans == 0;
	if (last) {
		old = a->retired;
		a->retired = NULL;
	}
	last = last && a->freed;
	pthread_mutex_unlock(&be->lock);
	for (; old; old = next) {
		next = old->retired;
		free_now(be, old);
	}
	if (last)
		free_now(be, a);
	return rc;
}

static void host_stats(struct tfs_backend *be, int device, struct tfs_backend_stats *st)
{
	int slot = slot_of(be, device);
	uint64_t cached;

	memset(st, 0, sizeof(*st));
	if (slot < 0)
		return;
	pthread_mutex_lock(&be->lock);
	st->used = be->tier[slot].used;
	st->reserved = be->tier[slot].reserved;
	st->total = be->tier[slot].total;
	st->nallocs = be->tier[slot].nallocs;
	pthread_mutex_unlock(&be->lock);
	if (be->tier[slot].pool) {
		tfs_host_pool_stats(be->tier[slot].pool, &st->prealloc, &st->reserved);
		return;
	}
	/* Empty blocks kept for reuse are not held for a tensor. */
	cached = tfs_host_pack_cached(be, slot);
	st->reserved = st->reserved > cached ? st->reserved - cached : 0;
}

/* Moves a to another tier: new memory there (its pool's, or an object of its own), the
 * bytes copied a piece at a time and each piece summed where it landed, while it is still
 * in the cache (no second pass), then the old memory given back. The tensor keeps its
 * owner and mode. */
static int host_move_sum(struct tfs_backend *be, struct tfs_alloc *a, int device,
			 uint64_t *sum, void (*commit)(void *arg), void *arg)
{
	int rc, slot = slot_of(be, device);
	uint64_t acc = TFS_SUM_EMPTY;
	struct tfs_alloc *n;

	if (slot < 0)
		return -EINVAL;
	if (lent(a))
		return -EBUSY;
	if ((rc = alloc_in(be, device, a->bytes, a->uid, a->gid, a->mode, a->dir, 0, &n)))
		return rc;
	hb_prefault(n->base, a->bytes);
	for (uint64_t off = 0; off < a->bytes; off += TFS_SUM_PIECE) {
		size_t len = a->bytes - off < TFS_SUM_PIECE ? (size_t)(a->bytes - off) :
			     TFS_SUM_PIECE;

		if ((rc = hb_copied(a, tfs_guarded_copy((char *)n->base + off,
						     (char *)a->base + off, len))))
			goto fail;
		acc = tfs_sum_add(acc, tfs_sum_piece((char *)n->base + off, len, off));
	}
	acc = tfs_sum_final(acc);
	if (*sum && acc != *sum) {
		rc = -EBADMSG;
		goto fail;
	}
	/* a takes the new memory; n keeps the old until the commit is made. */
	hb_take_over(a, n);
	*sum = acc;
	if (commit)
		commit(arg);
	host_free(be, n);
	return 0;
fail:
	host_free(be, n);
	return rc;
}

static int host_move(struct tfs_backend *be, struct tfs_alloc *a, int device)
{
	uint64_t sum = 0;

	return host_move_sum(be, a, device, &sum, NULL, NULL);
}

void *tfs_host_mem(struct tfs_alloc *a, uint64_t *mapped)
{
	*mapped = a->mapped;
	return a->base;
}

int tfs_host_mem_pinned(struct tfs_alloc *a)
{
	return a->seg && a->seg->pinned;
}

static int host_adopt(struct tfs_backend *be, const struct tfs_meta *m, struct tfs_alloc **out)
{
	char path[TFS_HOST_PATH_MAX];
	struct found *f = NULL;
	struct tfs_alloc *a;
	struct stat st;
	int rc, slot = slot_of(be, m->device);

	if (tfs_host_handle_path(m->ipc_handle, path, sizeof(path)) || slot < 0)
		return -EINVAL;
	for (size_t i = 0; i < be->nfound && !f; i++)
		if ((be->found[i].fd >= 0 || be->found[i].seg || be->found[i].blk) &&
		    strcmp(be->found[i].name, path) == 0)
			f = &be->found[i];
	if (!f)
		return -ENOENT;
	if (be->tier[slot].pool)
		return f->blk ? -EINVAL : hb_pool_adopt(be, slot, f, m, out);
	if (m->bytes == 0 || f->seg)     /* f->seg: another tier's segment */
		return -EINVAL;
	if (!(a = calloc(1, sizeof(*a))))
		return -ENOMEM;
	/* A tensor packed into a block (host_pack.c), or an object of its own. */
	if ((rc = tfs_host_pack_adopt(be, slot, m, f, a)) > 0)
		goto adopted;
	free(a);
	if (rc < 0)
		return rc;
	if (m->ipc_offset != 0 || f->fd < 0)
		return -EINVAL;
	/* The record says how big the tensor is, not the object: whoever may write the
	 * object may also have grown it (a sparse ftruncate to terabytes, which would be
	 * charged and so refuse everyone else's allocations), or the daemon that died grew
	 * it before its record said so. Pages past the mapping are trimmed by the next
	 * resize. A shrunk object is refused: its bytes are gone. */
	if (m->bytes == 0 || hb_chargeable(be, slot, m->bytes) == -EFBIG || fstat(f->fd, &st) ||
	    (uint64_t)st.st_size < m->bytes)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->mapped = hb_round_page(be, m->bytes);
	a->bytes = m->bytes;
	a->base = mmap(NULL, a->mapped, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	if (a->base == MAP_FAILED) {
		rc = -errno;
		free(a);
		return rc;
	}
	if ((rc = hb_charge(be, slot, (int64_t)a->bytes, (int64_t)a->mapped)) && rc != -ENOSPC) {
		munmap(a->base, a->mapped);
		free(a);
		return rc;
	}
	if (rc)        /* a smaller --max-bytes than before: keep it, it was there first */
		hb_charge_force(be, slot, (int64_t)a->bytes, (int64_t)a->mapped);
	a->fd = f->fd;
	a->kid = f->id;
	snprintf(a->name, sizeof(a->name), "%s", f->name);
	f->fd = -1;
	a->slot = slot;
adopted:
	a->uid = m->uid;
	a->gid = m->gid;
	a->mode = m->mode;
	a->dir = m->dir;
	__atomic_add_fetch(&be->tier[slot].nallocs, 1, __ATOMIC_RELAXED);
	*out = a;
	return 0;
}

static int host_adopt_end(struct tfs_backend *be)
{
	int n = 0;

	tfs_host_pack_adopt_end(be);
	for (size_t i = 0; i < be->nfound; i++) {
		struct tfs_keeper_req req = { .op = TFS_KEEPER_FREE, .id = be->found[i].id };
		struct tfs_keeper_rep rep;

		if (be->found[i].fd < 0 || hb_pool_take_found(be, &be->found[i]))
			continue;
		tfs_log(LOG_NOTICE, "host: freeing %s: no record names it", be->found[i].name);
		close(be->found[i].fd);
		be->found[i].fd = -1;
		tfs_keeper_call(&req, &rep, NULL);
		n++;
	}
	free(be->found);
	be->found = NULL;
	be->nfound = 0;
	/* What the reservation lacks still (segments freed, or a larger --preallocate). */
	for (int i = 0; i <= be->ndev; i++)
		if (be->tier[i].pool && tfs_host_pool_reserve(be->tier[i].pool, be->tier[i].prealloc))
			tfs_log(LOG_WARNING, "host: tier %d holds less than its preallocation of "
				"%llu MiB", i == be->ndev ? TFS_DEVICE_CPU : i,
				(unsigned long long)(be->tier[i].prealloc >> 20));
	return n;
}

/* A read-only descriptor is a new open of the object (through /proc/self/fd), not a dup of
 * ours: a dup would share our read-write access. A pooled tensor's is its segment's, which
 * holds tensors of its key only (host_pool.h). */
static int host_export_fd(struct tfs_backend *be, struct tfs_alloc *a, int writable, int *fd)
{
	int own = a->seg ? a->seg->fd : a->fd;
	char proc[32];

	(void)be;
	if (writable) {
		*fd = fcntl(own, F_DUPFD_CLOEXEC, 3);
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", own);
		*fd = open(proc, O_RDONLY | O_CLOEXEC);
	}
	return *fd < 0 ? -errno : 0;
}

const struct tfs_backend_ops tfs_backend_host = {
	.export_fd = host_export_fd,
	.adopt = host_adopt,
	.adopt_end = host_adopt_end,
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
	.copy_in_fd = host_copy_in_fd,
	.read_mem = host_read_mem,
	.host_span = host_span,
	.host_span_end = host_span_end,
	.stats = host_stats,
	.move = host_move,
	.move_sum = host_move_sum,
};
