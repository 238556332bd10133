/* Pinned host buffers of the loader's pipeline (load_pipe.c), allocated with
 * cudaHostAlloc at first use and kept for the process: allocating them costs
 * milliseconds a load should not pay again. tfs_load_release (tensorfs.h) frees them.
 * Private to libtensorfs. */
#ifndef TFS_PINNED_H
#define TFS_PINNED_H

#include <stddef.h>

#include "client_internal.h"

struct pinbuf { void *p; size_t size; };

/* A page-aligned pinned buffer of size bytes into *b: one kept of that size, else a new
 * one. 0, or -ENOMEM with the message set. Thread-safe. */
int tfs_pinned_get(const struct tfs_cudart *cu, size_t size, struct pinbuf *b);
/* Keeps b's buffer for the next tfs_pinned_get (NULL p: nothing); b->p becomes NULL. */
void tfs_pinned_put(struct pinbuf *b);

#endif
