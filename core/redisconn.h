/* Redis URLs and connections (hiredis). Shared by the daemon, the library and the tools. */
#ifndef TFS_REDISCONN_H
#define TFS_REDISCONN_H

#include <stddef.h>

#include <hiredis/hiredis.h>

struct tfs_redis_url {
	int is_unix;
	char host[256];
	int port;
	char path[108];                /* sun_path's size */
	char user[128];
	char password[256];
	int db;
};

/* redis://[[user]:password@]host[:port][/db] or unix://[[user]:password@]/path/to/sock[?db=N]. Pure parser:
 * 0 or -EINVAL (with the reason in err, may be NULL). */
int tfs_url_parse(const char *url, struct tfs_redis_url *u, char *err, size_t errlen);

/* Connects, authenticates and selects the db. Returns a context owned by the caller
 * (redisFree), or NULL with *rc set to -ECONNREFUSED/-ENOENT/-ETIMEDOUT (unreachable),
 * -EACCES (password refused) or -EIO, and a message in err. */
redisContext *tfs_redis_connect(const struct tfs_redis_url *u, int timeout_ms, int *rc,
				char *err, size_t errlen);

/* Runs a command given as argv, checks the reply is not an error. Returns the reply (the
 * caller frees it) or NULL; on NULL *rc is -EIO when the connection broke (the context is
 * then unusable) or -EPROTO when Redis answered with an error. */
redisReply *tfs_redis_cmdv(redisContext *c, int argc, const char **argv, const size_t *len,
			   int *rc);

#endif
