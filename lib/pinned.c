/* Pinned host buffers kept for the process (pinned.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "pinned.h"
#include "tensorfs.h"

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
struct pinned { struct pinned *next; size_t size; };
static struct pinned *pool;            /* free buffers, each behind its 4 KiB header */

int tfs_pinned_get(const struct tfs_cudart *cu, size_t size, struct pinbuf *b)
{
	struct pinned **pp, *e;
	int e2;

	pthread_mutex_lock(&pool_mu);
	for (pp = &pool; *pp; pp = &(*pp)->next)
		if ((*pp)->size == size)
			break;
	e = *pp;
	if (e)
		*pp = e->next;
	pthread_mutex_unlock(&pool_mu);
	if (e) {
		b->p = (char *)e + 4096;
		b->size = size;
		return 0;
	}
	/* the header sits in front of the buffer, inside the pinned allocation: one page */
	if ((e2 = cu->HostAlloc((void **)&e, size + 4096, TFS_CUDA_HOST_ALLOC_PORTABLE)))
		return tfs_seterr(-ENOMEM, "cudaHostAlloc(%zu): %s", size, cu->GetErrorString(e2));
	e->size = size;
	b->p = (char *)e + 4096;
	b->size = size;
	return 0;
}

void tfs_pinned_put(struct pinbuf *b)
{
	struct pinned *e;

	if (!b->p)
		return;
	e = (struct pinned *)((char *)b->p - 4096);
	pthread_mutex_lock(&pool_mu);
	e->next = pool;
	pool = e;
	pthread_mutex_unlock(&pool_mu);
	b->p = NULL;
}

void tfs_load_release(void)
{
	const struct tfs_cudart *cu;
	struct pinned *e;
	int rc;

	pthread_mutex_lock(&pool_mu);
	e = pool;
	pool = NULL;
	pthread_mutex_unlock(&pool_mu);
	if (!e || !(cu = tfs_cudart_get(&rc)))
		return;
	while (e) {
		struct pinned *next = e->next;

		cu->FreeHost(e);
		e = next;
	}
}
/* Headers are 4096 bytes: the buffer starts page-aligned, as O_DIRECT and DMA like. */
_Static_assert(sizeof(struct pinned) <= 4096, "pinned header");
