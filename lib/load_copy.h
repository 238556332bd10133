/* The copy threads of the pipeline (load_copy.c). Private to libtensorfs. */
#ifndef TFS_LOAD_COPY_H
#define TFS_LOAD_COPY_H

#include "client_internal.h"
#include "load_run.h"
#include "pinned.h"

struct tfs_copy_worker {
	struct run *r;
	const struct tfs_cudart *cu;
	int dev;                       /* the device of stream/ev; -1: none yet */
	void *stream, *ev[NBUF];
	struct pinbuf buf[NBUF];
	int busy[NBUF];                /* a copy from/to buf[b] was queued */
	uint64_t wfoff[NBUF];          /* save: where buf[b] goes in the file */
	size_t wlen[NBUF];             /* the piece in buf[b]: its length and item */
	size_t witem[NBUF];
	unsigned k;
	char *fbuf;                    /* through FUSE */
	char *dbuf;                    /* direct reads not into a pinned buffer */
	int no_direct;                 /* the file system refused a direct read */
	int pipe[2];                   /* a load through FUSE by splice; -1: none yet */
	int no_splice;                 /* splice is not possible here: pread/pwrite */
	int no_fill;                   /* the daemon refused a fill: writes from then on */
};

/* A copy thread's body: w (set up by its creator as { .r = run, .dev = -1, .pipe = { -1,
 * -1 } }) takes pieces until there are none or the run stops, then gives back what it
 * set up (stream, events, buffers, pipe) and counts itself out of r->running. */
void *tfs_copy_main(void *arg);

#endif
