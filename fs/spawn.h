/* The private redis-server (spawn.c) */
#ifndef TFS_SPAWN_H
#define TFS_SPAWN_H

#include <stddef.h>

/* Starts it on a unix socket in a fresh runtime directory; *url its URL. 0 or -1
 * (logged). tfs_stop_redis stops it (nothing when none was started). */
int tfs_spawn_redis(char *url, size_t urlsize);
void tfs_stop_redis(void);

#endif
