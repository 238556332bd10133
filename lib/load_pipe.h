/* The copy pipeline of tfs_load and tfs_save: moves the byte ranges of one file into (or
 * out of) a list of tensors with several threads, while other threads prepare (create,
 * shape, open) the tensors still to come. Private to libtensorfs. */
#ifndef TFS_LOAD_PIPE_H
#define TFS_LOAD_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "tensorfs.h"

#define TFS_PIPE_WINDOW 64

/* Nanoseconds of CLOCK_MONOTONIC: the clock of the loads' profiles (TFS_LOAD_PROFILE). */
uint64_t tfs_pipe_now_ns(void);

/* A file of a load from several (a model directory's shards): read by the items naming it. */
struct tfs_pipe_src {
	int fd;
	const char *name;       /* for messages */
	uint64_t dev, ino;      /* fstat's, for the daemon's fills (fill_ioctl.h) */
};

struct tfs_pipe_item {
	/* Filled by the caller, or by prepare() for items not ready yet. */
	tfs_tensor *t;          /* mapped: bytes move to/from its memory; NULL: through fd */
	int fd;                 /* the tensor's file, used when t is NULL; or -1 */
	uint64_t foff, bytes;   /* the tensor's bytes in the file */
	const struct tfs_pipe_src *src; /* loads: the file they come from; NULL: the pipe's */
	int unsized;            /* loads through fd: its size not yet checked (fstat) against
				 * bytes; the pipeline checks it before the first write() into
				 * fd, and never for fills, whose range the daemon checks */
	int state;              /* private: 0 being prepared, 1 ready, < 0 failed */
	uint64_t left;          /* private: bytes not yet moved */
};

struct tfs_pipe {
	int fd;                 /* the file: read by loads, written by saves */
	char *fmap;             /* saves: the file mapped shared and writable (its blocks
				 * allocated, so a write fault cannot fail), or NULL: pwrite */
	const char *fname;      /* for messages */
	int to_tensor;          /* 1: file -> tensors, 0: tensors -> file */
	size_t n;
	struct tfs_pipe_item *items;
	/* NULL when every item is ready. Otherwise called once per item, in order, from the
	 * pipeline's preparing threads: fills items[i].t or .fd; returns 0, or a negative
	 * errno after tfs_seterr (the message is kept for the caller). */
	int (*prepare)(void *arg, size_t i);
	void *arg;
	/* NULL, or called once per item whose bytes have all moved (device copies
	 * synchronised), from a pipeline thread: the caller may release it then. At most
	 * TFS_PIPE_WINDOW items are prepared and not yet finished, so a file of many tensors
	 * does not hold them all open at once. */
	void (*finish)(void *arg, size_t i);
	int threads;            /* copy threads; <= 0: min(8, CPUs) */
	int via_file;           /* most items go through their files: pieces sized for the
				 * daemon's fills (TFS_LOAD_CHUNK_MB overrides either size) */
	int direct;             /* loads: read the files with O_DIRECT: 1 always, 0 never,
				 * -1 when cold (direct_io.h, tfs_dio_open) */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	const volatile int *cancel;
};

/* Runs the pipeline to its end. 0, or the first failure's negative errno with its message
 * in tfs_errmsg() of the calling thread; the other threads stop at their next piece. Every
 * copy has completed (device copies synchronised) when it returns, failed or not. Items
 * that prepare() made stay as they are for the caller to release. */
int tfs_pipe_run(struct tfs_pipe *p);

#endif
