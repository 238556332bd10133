/* Metadata of tensors this process opened by path, remembered by their file attributes:
 * a warm tfs_open of an unchanged tensor then costs open(2) alone, not a getxattr more.
 *
 * Why the attributes are enough: the daemon gives a tensor a new st_ctim (nanoseconds)
 * whenever what a client maps changes (dtype, shape, device, owner, handle), for another
 * node's tensor too (the record's ctime_ns); the size and the inode number change with
 * the allocation and the name. And the attributes the following fstat reads from the
 * kernel, without asking the daemon, are current after an open by path: the daemon drops
 * them from the kernel whenever the tensor behind the name changes without the kernel
 * seeing it (fs/kernel/kernel_cache.c: other nodes, the queue, a reshape), and an open
 * through a name gone since fails with ESTALE and looks it up again. tfs_open_fd, given a descriptor
 * opened who knows when, does not use it.
 *
 * And metadata parsed from JSON text (tfs_open_meta), remembered by the text itself: a
 * consumer that opens again from the reply it was handed skips the parse and the hex
 * decoding of the handle (~4 µs of ~6). The text is the whole key, so what is served can
 * never be stale: the same bytes parse to the same metadata. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client_internal.h"
#include "strutil.h"

#define SLOTS 64                   /* direct-mapped by inode: a miss only costs a getxattr */

struct entry {
	int used;
	struct tfs_fileid id;
	struct tfs_meta meta;
};

static struct entry cache[SLOTS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long hits;

/* Absolute paths this process opened, by a 64-bit hash: which of tfs_open's two ways to
 * try first (client_open.c). A collision or an eviction only picks the slower way. */
#define PATH_SLOTS 256
static _Atomic uint64_t paths[PATH_SLOTS];

#define JSON_SLOTS 16
#define JSON_MAX 4096              /* a longer text is parsed each time: bounds the memory */

struct json_entry {
	char *text;                /* malloc'd copy of the key, NULL when unused */
	size_t len;
	uint64_t hash;
	struct tfs_meta meta;
};

static struct json_entry jcache[JSON_SLOTS];
static long json_hits;

int tfs_fileid_set(struct tfs_fileid *id, const struct stat *st)
{
	/* Whole seconds: a daemon that does not keep st_ctim in step (records without
	 * ctime_ns) gives nothing to check against. */
	if (!S_ISREG(st->st_mode) || st->st_ctim.tv_nsec == 0)
		return 0;
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->ctim = st->st_ctim;
	id->size = st->st_size;
	return 1;
}

int tfs_fileid_eq(const struct tfs_fileid *id, const struct stat *st)
{
	return id->dev == st->st_dev && id->ino == st->st_ino &&
	       id->ctim.tv_sec == st->st_ctim.tv_sec && id->ctim.tv_nsec == st->st_ctim.tv_nsec &&
	       id->size == st->st_size;
}

/* Enough for the reasons at the top: what a client maps never changes without a new
 * st_ctim, and the descriptor's attributes are current after an open by path. */
int tfs_fileid_eq_meta(const struct tfs_meta *m, const struct stat *st)
{
	return S_ISREG(st->st_mode) && m->ino && m->ctime_ns > 0 &&
	       (uint64_t)st->st_ino == m->ino && (uint64_t)st->st_size == m->bytes &&
	       (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec == m->ctime_ns;
}

int tfs_mc_get(const struct stat *st, struct tfs_meta *m)
{
	struct entry *e = &cache[st->st_ino % SLOTS];
	int hit;

	pthread_mutex_lock(&mu);
	hit = e->used && tfs_fileid_eq(&e->id, st);
	if (hit) {
		*m = e->meta;
		hits++;
	}
	pthread_mutex_unlock(&mu);
	return hit;
}

void tfs_mc_put(const struct stat *st, const struct tfs_meta *m)
{
	struct entry *e = &cache[st->st_ino % SLOTS];
	struct tfs_fileid id;

	if (!tfs_fileid_set(&id, st))
		return;
	pthread_mutex_lock(&mu);
	e->used = 1;
	e->id = id;
	e->meta = *m;
	pthread_mutex_unlock(&mu);
}

long tfs_mc_hits(void)
{
	long n;

	pthread_mutex_lock(&mu);
	n = hits;
	pthread_mutex_unlock(&mu);
	return n;
}

int tfs_mc_get_json(const char *json, size_t len, struct tfs_meta *m)
{
	uint64_t h;
	struct json_entry *e;
	int hit;

	if (len > JSON_MAX)
		return 0;
	h = tfs_fnv1a(TFS_FNV_BASIS, json, len);
	e = &jcache[h % JSON_SLOTS];
	pthread_mutex_lock(&mu);
	hit = e->text && e->hash == h && e->len == len && memcmp(e->text, json, len) == 0;
	if (hit) {
		*m = e->meta;
		json_hits++;
	}
	pthread_mutex_unlock(&mu);
	return hit;
}

void tfs_mc_put_json(const char *json, size_t len, const struct tfs_meta *m)
{
	struct json_entry *e;
	uint64_t h;
	char *copy, *old;

	if (len > JSON_MAX || !(copy = malloc(len ? len : 1)))
		return;
	memcpy(copy, json, len);
	h = tfs_fnv1a(TFS_FNV_BASIS, json, len);
	e = &jcache[h % JSON_SLOTS];
	pthread_mutex_lock(&mu);
	old = e->text;
	e->text = copy;
	e->len = len;
	e->hash = h;
	e->meta = *m;
	pthread_mutex_unlock(&mu);
	free(old);
}

long tfs_mc_json_hits(void)
{
	long n;

	pthread_mutex_lock(&mu);
	n = json_hits;
	pthread_mutex_unlock(&mu);
	return n;
}

static uint64_t path_hash(const char *path)
{
	uint64_t h = 14695981039346656037ull;          /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return h ? h : 1;
}

int tfs_mc_path_seen(const char *path)
{
	uint64_t h = path_hash(path);

	return atomic_load_explicit(&paths[h % PATH_SLOTS], memory_order_relaxed) == h;
}

void tfs_mc_path_mark(const char *path)
{
	uint64_t h = path_hash(path);

	atomic_store_explicit(&paths[h % PATH_SLOTS], h, memory_order_relaxed);
}

void tfs_mc_path_forget(void)
{
	for (int i = 0; i < PATH_SLOTS; i++)
		atomic_store_explicit(&paths[i], 0, memory_order_relaxed);
}
