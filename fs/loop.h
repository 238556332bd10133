/* The daemon's FUSE request loop (loop.c) */
#ifndef TFS_LOOP_H
#define TFS_LOOP_H

struct fuse_session;

/* loop.c: serves FUSE requests with nworkers threads until unmount or a signal ends the
 * session. 0, or a negative errno if receiving failed. */
int tfs_loop_run(struct fuse_session *se, int nworkers);

#endif
