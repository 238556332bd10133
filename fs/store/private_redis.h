/* The private redis-server (private_redis.c) */
#ifndef TFS_PRIVATE_REDIS_H
#define TFS_PRIVATE_REDIS_H

#include <stddef.h>

/* Starts it on a unix socket in a fresh runtime directory; *url its URL (without the
 * password). password: "" for none, else the server asks for it (given to it on its standard
 * input as configuration, never in argv; kept for its restarts). 0 or -1 (logged).
 * tfs_stop_redis stops it (nothing when none was started). */
int tfs_spawn_redis(char *url, size_t urlsize, const char *password);
void tfs_stop_redis(void);
/* After the fork into the background: a thread that restarts the private redis-server
 * (from its append-only file) when it dies, up to 5 times a minute. 0 or -errno. */
int tfs_spawn_supervise(void);

#endif
