/* Redis Sentinel: the sentinel:// URL and the primary its sentinels name (sentinel.c).
 * tfs_url_parse and tfs_redis_connect call these for sentinel:// URLs; nothing else
 * needs to. */
#ifndef TFS_SENTINEL_H
#define TFS_SENTINEL_H

#include <stddef.h>

#include <hiredis/hiredis.h>

#include "redisconn.h"

/* The URL after "sentinel://": [[user]:password@]host[:port][,host[:port]...]/name[?db=N].
 * Port 26379 when left out; 1 to TFS_SENTINELS_MAX sentinels; name 1 to
 * TFS_MASTER_NAME_MAX bytes of [A-Za-z0-9._-]. No IPv6 literals. Pure parser: 0 or
 * -EINVAL with the reason in err (may be NULL); u was cleared by the caller. */
int tfs_sentinel_url_parse(const char *s, struct tfs_redis_url *u, char *err, size_t errlen);

/* Asks the sentinels of u in turn, starting with the one that answered last, for the
 * address of master u->master (SENTINEL get-master-addr-by-name), connects there as
 * tfs_redis_connect does (AUTH, SELECT, PING) and keeps the connection only when ROLE says
 * master (a demoted primary some sentinel still names is passed over; ROLE refused by an
 * ACL counts as master). A sentinel that answers NOAUTH is sent AUTH with u's user and
 * password first. timeout_ms bounds each connection and each reply. Returns a context the
 * caller owns, or NULL with *rc: -ENXIO (no sentinel knows the name), -EACCES (the primary
 * refused the password), -EINVAL (SELECT refused), -ECONNREFUSED or -EIO (no sentinel,
 * or no primary, answers: a failover under way) and the reason in err. */
redisContext *tfs_sentinel_connect(const struct tfs_redis_url *u, int timeout_ms, int *rc,
				   char *err, size_t errlen);

/* Field name of an INFO reply (text of len bytes, "name:value\r\n" lines) into out.
 * Pure: 0, -ENOENT (no such field) or -ENAMETOOLONG (value does not fit). */
int tfs_info_field(const char *info, size_t len, const char *name, char *out, size_t size);

/* The run id of the server c is connected to (INFO server), which changes when another
 * server answers at the same address or a replica is promoted: 0 or -EIO. */
int tfs_redis_run_id(redisContext *c, char *out, size_t size);

#endif
