/* Descriptors this process holds on tensors it opened by path, remembered by their file
 * attributes: a tfs_open of a tensor the process already holds open, in the same access
 * mode, duplicates one of them instead of opening the file again. The open was the one
 * request to the daemon a warm tfs_open still made (a FUSE round trip, 25-30 µs on the
 * H100 machine, nearly all of it); PyTorch's storage cache answers a rebuild of a storage
 * the process holds in the same way.
 *
 * The duplicate is the new tensor's reference, as its own open would have been: the
 * tensor lives while any of the process's descriptors on it is open, and a crash closes
 * them all. The daemon counts open file handles (docs/contract.md), and duplicates share one, so
 * two tfs_opens of one tensor in one process count one reference in Redis.
 *
 * Why the attributes tell the same tensor: lib/meta_cache.c. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "client_internal.h"

#define BUCKETS 64

struct held {
	struct tfs_fileid id;
	int fd;
	int acc;                     /* O_RDONLY, O_WRONLY, O_RDWR */
	struct held *next;
};

static struct held *tab[BUCKETS];
static int count;
static long shared;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

int tfs_fds_any(void)
{
	return __atomic_load_n(&count, __ATOMIC_RELAXED) > 0;
}

int tfs_fds_dup(const struct stat *st, int acc)
{
	struct held *h;
	int fd = -1;

	pthread_mutex_lock(&mu);
	for (h = tab[st->st_ino % BUCKETS]; h; h = h->next) {
		if (h->acc == acc && tfs_fileid_eq(&h->id, st)) {
			/* Under mu: the holder closes its descriptor only after tfs_fds_drop. */
			fd = fcntl(h->fd, F_DUPFD_CLOEXEC, 0);
			if (fd >= 0)
				shared++;
			break;
		}
	}
	pthread_mutex_unlock(&mu);
	return fd;
}

void tfs_fds_add(const struct stat *st, int fd, int acc)
{
	struct tfs_fileid id;
	struct held *h;

	if (!tfs_fileid_set(&id, st) || !(h = malloc(sizeof(*h))))
		return;
	h->id = id;
	h->fd = fd;
	h->acc = acc;
	pthread_mutex_lock(&mu);
	h->next = tab[st->st_ino % BUCKETS];
	tab[st->st_ino % BUCKETS] = h;
	count++;
	pthread_mutex_unlock(&mu);
}

void tfs_fds_drop(ino_t ino, int fd)
{
	struct held **p, *h;

	pthread_mutex_lock(&mu);
	for (p = &tab[ino % BUCKETS]; (h = *p); p = &h->next) {
		if (h->fd == fd && h->id.ino == ino) {
			*p = h->next;
			count--;
			free(h);
			break;
		}
	}
	pthread_mutex_unlock(&mu);
}

long tfs_fds_shared(void)
{
	long n;

	pthread_mutex_lock(&mu);
	n = shared;
	pthread_mutex_unlock(&mu);
	return n;
}
