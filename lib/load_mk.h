/* A load's tensors made by batches (core/mkbatch.h): the items of one directory, in file
 * order, as many per request as fit, so a checkpoint of hundreds of tensors does not wait
 * for the kernel's one-at-a-time creates in a directory. The load's preparing threads
 * share one struct tfs_load_mk; whichever first needs an item not yet made sends the
 * batch that begins at the first such item: that item made by a create of its own (its
 * descriptor, open for writing, is what the request goes on, and the request types it), the
 * rest by the daemon; each thread then opens its items by name. The next batch goes out while the
 * last quarter of the one before is still being opened. mu guards everything here but
 * req, which only the thread sending a batch touches (sending set). */
#ifndef TFS_LOAD_MK_H
#define TFS_LOAD_MK_H

#include <pthread.h>
#include <stddef.h>

#include "mkbatch.h"
#include "tensorfs.h"

/* A tensor a load makes. */
struct tfs_load_spec {
	char *path;
	tfs_dtype dtype;
	struct tfs_shape shape;
};

struct tfs_load_mk {
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* a batch came back */
	const struct tfs_load_spec *spec;
	int *made;                 /* the load's: set for each tensor a batch made */
	int *state;                /* per item: 0 not sent (or its own create's), 1 made by a
				    * batch, or -errno */
	size_t n, next;            /* next: the first item no batch has taken */
	unsigned batch;            /* the next batch's size: grows from a few */
	int off;                   /* no batches: each item made by its own create */
	int sending;               /* a batch is with the daemon: mu let go meanwhile */
	size_t sent;               /* TFS_LOAD_PROFILE=1: batches sent, the time in them */
	uint64_t ns, wait_ns;      /* and the time threads waited for them */
	uint32_t flags, mode;
	int32_t device;
	struct tfs_mk_req *req;
};

/* Sets mk up for items spec[0..n) (made: the load's array of n flags); device as
 * tfs_load_opts's (-1: each directory's default). Batches stay off (each item created
 * alone) where they cannot work (the umask cannot be read, memory is short) or where
 * TFS_LOAD_MKBATCH=0 says so. No
 * request is sent yet. */
void tfs_load_mk_init(struct tfs_load_mk *mk, const struct tfs_load_spec *spec, int *made,
		      size_t n, int device);
/* Item i: 1 when a batch made it, typed and on its device (the caller opens it by name:
 * O_NOFOLLOW, and a regular file of its own), 0 when the caller makes it itself (batches
 * off, or the daemon does not take them), or the negative errno its making failed with
 * (the error's message set, naming it). May send a batch; safe from any number of
 * threads. */
int tfs_load_mk_item(struct tfs_load_mk *mk, size_t i);
void tfs_load_mk_fini(struct tfs_load_mk *mk);

#endif
