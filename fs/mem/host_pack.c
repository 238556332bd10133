/* Small tensors of the host backend packed into blocks (docs/handles.md): a tensor of up
 * to tfs_mem.host_pack bytes is a chunk of a 1 MiB shared-memory object, a block, that the
 * keeper made once; its handle names the block and its ipc_offset the chunk. Making one
 * costs no keeper round trip, no new object and no new mapping, in the daemon or in a
 * client that maps the block already (lib/ipc_cache.c).
 *
 * Isolation: whoever may open a block maps all of it, so a block holds only tensors of one
 * owner, group, mode (its read and write bits: the object's own mode says who opens it for
 * writing) and directory (fs/mem/pool.h tfs_pool_reader_key says why the directory), and
 * the object has that owner and mode. chown, chmod and renames to another directory move a
 * tensor that shares its block (set_owner), as the cuda backend's pool does.
 *
 * Lifetime: a block is the keeper's object like any tensor's, freed through the keeper
 * when its last tensor goes and the pool's cache of empty blocks lets it go: HOST_CACHE
 * bytes per device, and none once the device has had no packed tensor for a second or
 * two (the reaper thread). A restart
 * adopts blocks from the records that name them (tfs_host_pack_adopt); a block no record
 * names is freed by the backend's adopt_end like any object.
 *
 * The blocks are made by the pool (fs/mem/pool.c) through block_get, which runs in the
 * allocating thread under the pool's lock and learns the owner the block is for from that
 * thread's `want` (the pool's callbacks carry no key). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "mem/host_internal.h"
#include "mem/pool.h"
#include "log.h"
#include "meta.h"
#include "util/guard.h"

#define HOST_BLOCK (1u << 20)           /* a block's size */
#define HOST_PACK_MAX (256u << 10)      /* the largest tensor -o host_pack may pack */
#define HOST_CACHE (32u << 20)          /* bytes of empty blocks kept per tier */

/* A pool's context: one backend per daemon. */
static struct pctx {
	struct tfs_backend *be;
	int slot;
} ctxs[TFS_HOST_DEVICES_MAX];

/* The owner of the block block_get makes for this thread's allocation. */
static __thread struct {
	uid_t uid;
	gid_t gid;
	mode_t mode;
} want;

static char zeros[1 << 16];

/* Set by tfs_host_pack_fini: blocks still holding tensors are closed, not freed (the
 * backend's fini frees nothing: a daemon that ends without its tensors' shutdown leaves
 * them to the keeper and to the next daemon's adoption). */
static int closing;

/* Zeroes len bytes of a block, from its offset off: a pwritev on its descriptor, which
 * writes the pages through the kernel's own mapping of them, never through the daemon's.
 * Whoever may write the block may have written those bytes, or truncated the object; a
 * truncated block is -EIO, as a guarded copy would have said (its writer lost its own
 * tensors' bytes, nothing else). Why not a memset: on a virtual machine that shadows its
 * guests' page tables (this project's development VM), the first write of a process to a
 * page another process wrote since costs a trap, and the daemon's memset of a 64 KiB
 * chunk a client had just written took 4 to 6 times the pwritev's time (94-211 against
 * 18-35 µs, tests/bench/RESULTS-small.md). */
static int zero(int fd, uint64_t off, uint64_t len)
{
	struct iovec v[HOST_PACK_MAX / sizeof(zeros) + 1];
	struct stat st;
	ssize_t w;
	int n;

	if (fstat(fd, &st) || (uint64_t)st.st_size < off + len)
		return -EIO;
	while (len) {
		uint64_t left = len;

		for (n = 0; n < (int)(sizeof(v) / sizeof(v[0])) && left; n++) {
			v[n].iov_base = zeros;
			v[n].iov_len = left < sizeof(zeros) ? (size_t)left : sizeof(zeros);
			left -= v[n].iov_len;
		}
		w = pwritev(fd, v, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		off += (uint64_t)w;
		len -= (uint64_t)w;
	}
	return 0;
}

static struct tfs_pool_key key_of(uid_t uid, gid_t gid, mode_t mode, uint64_t dir)
{
	struct tfs_pool_key k = { ((uint64_t)uid << 32) | gid, mode & 0666, dir };

	return k;
}

static void set_want(struct tfs_pool_key k)
{
	want.uid = (uid_t)(k.a >> 32);
	want.gid = (gid_t)(k.a & 0xffffffffu);
	want.mode = (mode_t)k.b;
}

static int block_get(void *ctx, uint64_t *sizep, uint64_t *base, void **cookie)
{
	struct pctx *x = ctx;
	uint64_t size = *sizep;
	struct tfs_alloc *b;
	int rc;

	if ((rc = hb_charge(x->be, x->slot, 0, (int64_t)size)))
		return rc;
	b = calloc(1, sizeof(*b));
	if (!b) {
		rc = -ENOMEM;
		goto fail_charge;
	}
	if ((rc = hb_obtain(b, size, want.uid, want.gid, want.mode)))
		goto fail_struct;
	/* Mapped at once, one call instead of a fault per page: its tensors are small and
	 * each is zeroed as it is handed out. */
	b->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, b->fd, 0);
	if (b->base == MAP_FAILED) {
		rc = -ENOMEM;
		b->mapped = size;
		hb_give_back(b);
		goto fail_struct;
	}
	b->bytes = b->mapped = size;
	b->slot = x->slot;
	*base = (uint64_t)(uintptr_t)b->base;
	*cookie = b;
	return 0;
fail_struct:
	free(b);
fail_charge:
	hb_charge(x->be, x->slot, 0, -(int64_t)size);
	return rc == -EIO ? -EIO : rc;
}

static void block_put(void *ctx, uint64_t base, uint64_t size, void *cookie)
{
	struct pctx *x = ctx;
	struct tfs_alloc *b = cookie;

	(void)base;
	munmap(b->base, b->mapped);
	if (closing) {
		close(b->fd);
		free(b);
		return;
	}
	hb_give_back(b);
	hb_charge(x->be, x->slot, 0, -(int64_t)size);
	free(b);
}

static const struct tfs_pool_block_ops ops = { block_get, block_put };

/* The reaper: every REAP_TICK_S it looks at each pool, and gives back the empty blocks of
 * one that had no packed tensor at this tick and the one before, so that a mount whose
 * tensors are all gone holds nothing in /dev/shm, while one that makes and deletes small
 * tensors one at a time keeps reusing its blocks (and the pages every process mapped). */
#define REAP_TICK_S 1
static struct {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, stop;
	int idle[TFS_HOST_DEVICES_MAX];
} reap = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void *reaper(void *arg)
{
	struct tfs_backend *be = arg;
	struct timespec ts;

	pthread_mutex_lock(&reap.mu);
	while (!reap.stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += REAP_TICK_S;
		if (pthread_cond_timedwait(&reap.cv, &reap.mu, &ts) != ETIMEDOUT)
			continue;
		for (int i = 0; i < TFS_HOST_DEVICES_MAX; i++) {
			struct tfs_pool_stats st;

			if (!be->pack[i])
				continue;
			tfs_pool_get_stats(be->pack[i], &st);
			if (st.nallocs || !st.cached) {
				reap.idle[i] = 0;
				continue;
			}
			/* Under the pool's lock: a block taken meanwhile is not empty. */
			if (reap.idle[i]++)
				tfs_pool_trim(be->pack[i]);
		}
	}
	pthread_mutex_unlock(&reap.mu);
	return NULL;
}

int tfs_host_pack_init(struct tfs_backend *be)
{
	struct tfs_pool_config cfg;

	/* Only where the host backend is the mount's: the host tier beside another backend
	 * registers each allocation's mapping with the driver (tiers_backend.c). */
	if (tfs_mem.ops != &tfs_backend_host)
		return 0;
	tfs_pool_config_default(&cfg);
	cfg.align = be->page;
	cfg.small_max = HOST_PACK_MAX;
	cfg.small_block = HOST_BLOCK;
	cfg.medium_max = HOST_PACK_MAX;
	cfg.medium_block = HOST_BLOCK;
	cfg.medium_grow = 0;
	cfg.large_round = HOST_BLOCK;
	cfg.cache_max = HOST_CACHE;
	/* Pools also with packing off: a restart adopts the blocks of one that packed. */
	for (int i = 0; i < be->ndev; i++) {
		ctxs[i].be = be;
		ctxs[i].slot = i;
		if (!(be->pack[i] = tfs_pool_new(&cfg, &ops, &ctxs[i]))) {
			tfs_host_pack_fini(be);
			return -ENOMEM;
		}
	}
	reap.stop = 0;
	if (pthread_create(&reap.thread, NULL, reaper, be)) {
		tfs_host_pack_fini(be);
		return -ENOMEM;
	}
	pthread_setname_np(reap.thread, "tfs-shmreap");
	reap.started = 1;
	return 0;
}

void tfs_host_pack_fini(struct tfs_backend *be)
{
	if (reap.started) {
		pthread_mutex_lock(&reap.mu);
		reap.stop = 1;
		pthread_cond_signal(&reap.cv);
		pthread_mutex_unlock(&reap.mu);
		pthread_join(reap.thread, NULL);
		reap.started = 0;
	}
	for (int i = 0; i < TFS_HOST_DEVICES_MAX; i++) {
		struct tfs_pool_stats st;

		if (!be->pack[i])
			continue;
		/* Empty blocks hold no tensor: freed. */
		tfs_pool_trim(be->pack[i]);
		tfs_pool_get_stats(be->pack[i], &st);
		if (st.nallocs)
			tfs_log(LOG_INFO, "host: device %d: %llu packed tensors left to the keeper",
				i, (unsigned long long)st.nallocs);
		closing = 1;
		tfs_pool_destroy(be->pack[i]);
		closing = 0;
		be->pack[i] = NULL;
	}
}

/* a describes chunk c of its block. */
static void fill(struct tfs_alloc *a, struct tfs_pool_chunk *c, uint64_t bytes, int slot)
{
	struct tfs_alloc *b = tfs_pool_chunk_cookie(c);

	a->chunk = c;
	a->blk = b;
	a->off = tfs_pool_chunk_offset(c);
	a->fd = b->fd;
	a->kid = 0;
	a->kpriv = NULL;
	memcpy(a->name, b->name, sizeof(a->name));
	a->base = (char *)b->base + a->off;
	a->mapped = tfs_pool_chunk_capacity(c);
	a->bytes = bytes;
	a->slot = slot;
	a->damaged = 0;
}

int tfs_host_pack_alloc(struct tfs_backend *be, int slot, uint64_t bytes, uid_t uid,
			gid_t gid, mode_t mode, uint64_t dir, struct tfs_alloc *a)
{
	struct tfs_pool *p = slot < TFS_HOST_DEVICES_MAX ? be->pack[slot] : NULL;
	struct tfs_pool_key k = key_of(uid, gid, mode, dir);
	struct tfs_pool_chunk *c;
	int rc;

	if (!p || !bytes || bytes > tfs_mem.host_pack || bytes > HOST_PACK_MAX)
		return -E2BIG;
	if ((rc = hb_charge(be, slot, (int64_t)bytes, 0)))
		return rc;
	set_want(k);
	rc = tfs_pool_alloc(p, k, bytes, 0, &c);
	if (rc) {
		hb_charge(be, slot, -(int64_t)bytes, 0);
		/* No block fits under the cap: an object of its own may. */
		return rc == -ENOSPC || rc == -ENOMEM ? -E2BIG : rc;
	}
	fill(a, c, bytes, slot);
	/* The block's free space may hold what a process that maps it wrote there. */
	if (zero(a->fd, a->off, bytes)) {
		tfs_pool_free(p, c);
		hb_charge(be, slot, -(int64_t)bytes, 0);
		return -EIO;
	}
	return 0;
}

void tfs_host_pack_free(struct tfs_backend *be, struct tfs_alloc *a)
{
	struct tfs_pool *p = be->pack[a->slot];

	tfs_pool_free(p, a->chunk);
	hb_charge(be, a->slot, -(int64_t)a->bytes, 0);
	a->chunk = NULL;
	a->blk = NULL;
}

/* a leaves its block for an object of its own of bytes. */
static int unpack(struct tfs_backend *be, struct tfs_alloc *a, uint64_t bytes)
{
	struct tfs_pool_key k = tfs_pool_chunk_key(a->chunk);
	uint64_t mapped = hb_round_page(be, bytes);
	struct tfs_alloc n;
	int rc;

	if ((rc = hb_charge(be, a->slot, (int64_t)bytes, (int64_t)mapped)))
		return rc;
	memset(&n, 0, sizeof(n));
	set_want(k);
	if ((rc = hb_obtain(&n, mapped, want.uid, want.gid, want.mode)))
		goto fail_charge;
	n.base = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, n.fd, 0);
	if (n.base == MAP_FAILED) {
		rc = -ENOSPC;
		n.mapped = mapped;
		hb_give_back(&n);
		goto fail_charge;
	}
	hb_prefault(n.base, a->bytes);
	if ((rc = tfs_guarded_copy(n.base, a->base, a->bytes))) {
		munmap(n.base, mapped);
		n.mapped = mapped;
		hb_give_back(&n);
		goto fail_charge;
	}
	n.bytes = bytes;
	n.mapped = mapped;
	n.slot = a->slot;
	n.uid = a->uid;
	n.gid = a->gid;
	n.mode = a->mode;
	n.dir = a->dir;
	tfs_host_pack_free(be, a);
	*a = n;
	return 0;
fail_charge:
	hb_charge(be, a->slot, -(int64_t)bytes, -(int64_t)mapped);
	return rc;
}

int tfs_host_pack_resize(struct tfs_backend *be, struct tfs_alloc *a, uint64_t bytes)
{
	struct tfs_pool *p = be->pack[a->slot];
	struct tfs_pool_chunk *moved;
	uint64_t old = a->bytes;
	int rc;

	if (bytes == old)
		return 0;
	/* Past the packing size, as one made that large would be. */
	if (bytes > tfs_mem.host_pack || bytes > HOST_PACK_MAX)
		return unpack(be, a, bytes);
	if (bytes > old && (rc = hb_charge(be, a->slot, (int64_t)(bytes - old), 0)))
		return rc;
	set_want(tfs_pool_chunk_key(a->chunk));
	rc = tfs_pool_resize(p, a->chunk, bytes, &moved);
	if (rc) {
		if (bytes > old)
			hb_charge(be, a->slot, -(int64_t)(bytes - old), 0);
		return rc == -ENOMEM ? -ENOSPC : rc;
	}
	if (bytes < old) {
		hb_charge(be, a->slot, -(int64_t)(old - bytes), 0);
		a->bytes = bytes;
		a->mapped = tfs_pool_chunk_capacity(a->chunk);
		return 0;
	}
	if (!moved) {
		/* Growing in place: the capacity behind the tensor is mapped by its readers. */
		if (zero(a->fd, a->off + old, bytes - old)) {
			struct tfs_pool_chunk *back = NULL;

			if (tfs_pool_resize(p, a->chunk, old, &back) == 0 && back)
				tfs_pool_free(p, back);     /* shrinking never moves; be safe */
			hb_charge(be, a->slot, -(int64_t)(bytes - old), 0);
			return -EIO;
		}
		a->bytes = bytes;
		a->mapped = tfs_pool_chunk_capacity(a->chunk);
		return 0;
	}
	{
		struct tfs_alloc n = *a;

		fill(&n, moved, bytes, a->slot);
		if (tfs_guarded_copy(n.base, a->base, old) || zero(n.fd, n.off + old, bytes - old)) {
			tfs_pool_free(p, moved);
			hb_charge(be, a->slot, -(int64_t)(bytes - old), 0);
			return -EIO;
		}
		tfs_pool_free(p, a->chunk);
		*a = n;
	}
	return 0;
}

int tfs_host_pack_set_owner(struct tfs_backend *be, struct tfs_alloc *a, uid_t uid,
			    gid_t gid, mode_t mode, uint64_t dir, unsigned flags)
{
	struct tfs_pool *p = be->pack[a->slot];
	struct tfs_pool_key k = key_of(uid, gid, mode, dir), old = tfs_pool_chunk_key(a->chunk);
	struct tfs_pool_chunk *nc;
	struct tfs_alloc n;
	int rc;

	if (!memcmp(&k, &old, sizeof(k)))
		return 0;
	rc = tfs_pool_rekey(p, a->chunk, k);
	if (rc == 0) {
		/* Alone in its block, which is now its own and never shared again. A daemon
		 * not run by root cannot give the object away (backend_host.c). */
		if ((fchown(a->fd, uid, gid) && (errno != EPERM || geteuid() == 0)) ||
		    fchmod(a->fd, mode & 0666)) {
			rc = -errno;
			tfs_pool_rekey(p, a->chunk, old);
			return rc;
		}
		return 0;
	}
	if (rc != -EBUSY || (flags & TFS_BE_NOMOVE))
		return rc;
	set_want(k);
	if ((rc = tfs_pool_alloc(p, k, a->bytes, 0, &nc)))
		return rc == -ENOMEM ? -ENOSPC : rc;
	n = *a;
	fill(&n, nc, a->bytes, a->slot);
	if (tfs_guarded_copy(n.base, a->base, a->bytes)) {
		tfs_pool_free(p, nc);
		return -EIO;
	}
	tfs_pool_free(p, a->chunk);
	*a = n;
	return 0;
}

int tfs_host_pack_adopt(struct tfs_backend *be, int slot, const struct tfs_meta *m,
			struct found *f, struct tfs_alloc *a)
{
	struct tfs_pool *p = slot < TFS_HOST_DEVICES_MAX ? be->pack[slot] : NULL;
	struct tfs_pool_key k = key_of(m->uid, m->gid, m->mode, m->dir);
	struct tfs_pool_chunk *c;
	struct tfs_alloc *b = f->blk;
	struct stat st;
	int rc;

	if (!p)
		return 0;
	if (b && b->slot != slot)
		return -EINVAL;         /* one block, two devices: records that contradict */
	if (!b) {
		/* Objects of one tensor are page-rounded to its size, which is larger than
		 * any packed tensor where it is a block's. */
		if (m->bytes > HOST_PACK_MAX || fstat(f->fd, &st) || st.st_size != HOST_BLOCK)
			return 0;
		if (!(b = calloc(1, sizeof(*b))))
			return -ENOMEM;
		b->base = mmap(NULL, HOST_BLOCK, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
		if (b->base == MAP_FAILED) {
			rc = -errno;
			free(b);
			return rc;
		}
		b->fd = f->fd;
		b->kid = f->id;
		b->bytes = b->mapped = HOST_BLOCK;
		b->slot = slot;
		memcpy(b->name, f->name, sizeof(b->name));
	}
	rc = tfs_pool_adopt(p, k, (uint64_t)(uintptr_t)b->base, HOST_BLOCK, b, m->ipc_offset,
			    m->bytes, &c);
	if (rc) {
		if (!f->blk) {
			munmap(b->base, HOST_BLOCK);
			free(b);
		}
		return rc;
	}
	if (!f->blk) {
		f->blk = b;
		f->fd = -1;
		hb_charge_force(be, slot, 0, HOST_BLOCK);
	}
	hb_charge_force(be, slot, (int64_t)m->bytes, 0);
	fill(a, c, m->bytes, slot);
	return 1;
}

/* Nothing to zero: a packed tensor's memory is zeroed when it is handed out. */
static void no_zero(void *ctx, uint64_t addr, uint64_t len)
{
	(void)ctx;
	(void)addr;
	(void)len;
}

void tfs_host_pack_adopt_end(struct tfs_backend *be)
{
	for (int i = 0; i < TFS_HOST_DEVICES_MAX; i++)
		if (be->pack[i])
			tfs_pool_adopt_end(be->pack[i], no_zero, NULL);
}

uint64_t tfs_host_pack_cached(struct tfs_backend *be, int slot)
{
	struct tfs_pool_stats st;

	if (slot >= TFS_HOST_DEVICES_MAX || !be->pack[slot])
		return 0;
	tfs_pool_get_stats(be->pack[slot], &st);
	return st.cached;
}

void tfs_host_pack_trim(struct tfs_backend *be, int slot)
{
	if (slot < TFS_HOST_DEVICES_MAX && be->pack[slot])
		tfs_pool_trim(be->pack[slot]);
}
