/* The daemon's FUSE request loop (loop.c) */
#ifndef TFS_LOOP_H
#define TFS_LOOP_H

struct fuse_session;

/* loop.c: serves FUSE requests with nworkers threads until unmount or a signal ends the
 * session. 0, or a negative errno if receiving failed. */
int tfs_loop_run(struct fuse_session *se, int nworkers);

/* `make CFLAGS=-DTFS_PROFILE_IO`: where a read or write request's time goes in the daemon,
 * logged when the loop ends (tests/bench/fusepath.sh). tfs_prof_now: a
 * monotonic clock in ns; tfs_prof_copy: ns spent copying a request's bytes (write: 1). */
#ifdef TFS_PROFILE_IO
#include <stdint.h>
uint64_t tfs_prof_now(void);
void tfs_prof_copy(int write, uint64_t ns);
#define TFS_PROF_START(v) uint64_t v = tfs_prof_now()
#define TFS_PROF_COPY(write, v) tfs_prof_copy(write, tfs_prof_now() - (v))
#else
#define TFS_PROF_START(v) do { } while (0)
#define TFS_PROF_COPY(write, v) do { } while (0)
#endif

#endif
