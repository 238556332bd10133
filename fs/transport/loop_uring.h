/* FUSE requests over io_uring (loop_uring.c), beside the classic loop (loop.c). */
#ifndef TFS_LOOP_URING_H
#define TFS_LOOP_URING_H

#include <stddef.h>

struct fuse_session;

/* Main thread, after fuse_session_mount and before the loop: takes over the session's
 * /dev/fuse I/O (fuse_session_custom_io), so that the INIT reply offers the kernel the
 * io_uring transport and replies to requests that came over a ring go back over it.
 * depth: entries per queue (1..8). 0, or a negative errno (nothing changed). */
int tfs_uring_setup(struct fuse_session *se, int depth);

/* Bytes of request buffers the rings want from the backend's I/O region (0 without
 * tfs_uring_setup), and the region's part for them (NULL: they allocate their own).
 * tfs_loop_run calls both, once, before serving. mem must outlive tfs_uring_stop. */
size_t tfs_uring_region_bytes(void);
void tfs_uring_give_region(void *mem);

/* Main thread, after the classic loop ended: wakes and joins the ring threads, closes the
 * rings, frees their buffers. Safe without setup, and when the rings never started. */
void tfs_uring_stop(void);

#endif
