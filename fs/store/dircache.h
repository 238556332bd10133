/* The directory cache (dircache.c), kept coherent by Redis client tracking */
#ifndef TFS_DIRCACHE_H
#define TFS_DIRCACHE_H

#include <stdint.h>

#include <hiredis/hiredis.h>

struct tfs_dirrec;

int tfs_dircache_start(void);
void tfs_dircache_stop(void);
/* The subscriber connection's CLIENT ID for the writer's CLIENT TRACKING REDIRECT; 0 when
 * there is none. */
uint64_t tfs_dircache_subscriber(void);
/* Tracking established (1) or lost (0): either way the cache starts empty. */
void tfs_dircache_tracking(int on);
/* Take before a Redis read whose result is to be cached; pass to the put. */
uint64_t tfs_dircache_gen(void);
/* 1 and *d filled when name's record is cached. */
int tfs_dircache_get_dir(const char *name, struct tfs_dirrec *d);
/* Stores a record read with gen (0: this node's own write, stored regardless). */
void tfs_dircache_put_dir(const char *name, const struct tfs_dirrec *d, uint64_t gen);
/* 't'/'d', -ENOENT (known absent) or 0 (not cached); *cacheable says whether reading the
 * whole directory (tfs_dircache_put_ents) is worth it. */
int tfs_dircache_get_type(const char *parent, const char *base, int *cacheable);
/* Stores a directory's entries from its HGETALL reply. */
void tfs_dircache_put_ents(const char *parent, const redisReply *r, uint64_t gen);
/* This node's own change of an entry: type 't'/'d', or 0 for gone. */
void tfs_dircache_set_type(const char *parent, const char *base, int type);
/* Drops what is cached of directory name (its keys changed by other means). */
void tfs_dircache_forget(const char *name);
/* The same for name and every directory under it (a tree moved). */
void tfs_dircache_forget_tree(const char *name);

#endif
