/* One run of the copy pipeline (load_pipe.h): the state that tfs_pipe_run and its
 * preparing threads (load_pipe.c) share with its copy threads (load_copy.c), and the
 * calls both make on it. Private to libtensorfs.
 *
 * Locks: r->mu guards what struct run says it does (finished, first_ns, running, err,
 * msg, the items' state); the counters marked atomic are updated without it. Nothing else
 * is locked here, and no call below is made with r->mu held. */
#ifndef TFS_LOAD_RUN_H
#define TFS_LOAD_RUN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "load_files.h"
#include "load_pipe.h"

#define NBUF 2
#define MAX_THREADS 64
#define FILE_BLOCK (1u << 20)          /* through FUSE: the mount's max_read/max_write */
#define CUDA_H2D 1                     /* cudaMemcpyHostToDevice */
#define CUDA_D2H 2

struct piece {
	size_t item;
	uint64_t off, len;             /* inside the tensor */
};

/* The stages of a load the profile times (TFS_LOAD_PROFILE=1). */
enum stage { ST_PREPARE, ST_READ, ST_H2D_WAIT, ST_FILL, ST_MOUNT_WRITE, ST_HOST_COPY,
	     ST_REGISTER, ST_COUNT };

struct run {
	struct tfs_pipe *p;
	pthread_mutex_t mu;
	pthread_cond_t cv;             /* an item became ready or failed; a thread ended */
	struct piece *pieces;
	size_t npieces;
	size_t *spans;                 /* NULL, or each span's first piece, then npieces */
	size_t nspans;
	size_t next_piece, next_prep;  /* atomics; next_piece counts spans where spans is set */
	size_t finished;               /* items whose bytes all moved; under mu */
	uint64_t done, total;          /* done: atomic */
	size_t chunk;
	int fill;                      /* loads through the mount ask the daemon to fill */
	struct tfs_pipe_src own;       /* the pipe's file, for items with no src of their own */
	struct tfs_load_files files;   /* loads: how each item's file is read */
	int profile;                   /* TFS_LOAD_PROFILE=1: time per stage, printed */
	uint64_t ns[ST_COUNT];         /* atomics: nanoseconds of all threads, per stage */
	uint64_t first_ns;             /* profile: when the first item finished; under mu */
	int stop;                      /* atomic: a failure or a cancel */
	int running;                   /* threads not yet finished; under mu */
	int err;                       /* the first failure; under mu */
	char msg[512];
};

/* Starts timing a stage: 0 when not profiling, so the clock is read only then. */
static inline uint64_t tfs_run_tick(const struct run *r)
{
	return r->profile ? tfs_pipe_now_ns() : 0;
}

static inline void tfs_run_tock(struct run *r, enum stage st, uint64_t t0)
{
	if (t0)
		__atomic_fetch_add(&r->ns[st], tfs_pipe_now_ns() - t0, __ATOMIC_RELAXED);
}

/* The first failure of the run: its errno and message kept (later ones are dropped), and
 * every thread told to stop. Takes r->mu. */
void tfs_run_fail(struct run *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Whether the run stopped: a failure, or the caller's cancel. */
int tfs_run_stopped(struct run *r);
/* len more bytes of item i moved; the last ones finish it (p->finish, then r->finished
 * counted under r->mu). */
void tfs_run_moved(struct run *r, size_t i, uint64_t len);
/* A save's len bytes at foff of the file: into its mapping, or written. 0 or -errno. */
int tfs_run_file_put(struct run *r, const void *buf, size_t len, uint64_t foff);
/* The file item's bytes come from: its own, or the pipe's. */
const struct tfs_pipe_src *tfs_run_src(struct run *r, size_t item);
/* A failure on the file's side (a load reads it, a save writes it), as tfs_run_fail. */
void tfs_run_fail_file(struct run *r, size_t item, int rc);

#endif
