/* Redis URLs and connections (hiredis). Shared by the daemon, the library and the tools. */
#ifndef TFS_REDISCONN_H
#define TFS_REDISCONN_H

#include <stddef.h>

#include <hiredis/hiredis.h>

/* At most this many sentinels in a sentinel:// URL, and a master name this long. */
#define TFS_SENTINELS_MAX 8
#define TFS_MASTER_NAME_MAX 64

struct tfs_redis_url {
	int is_unix;
	char host[256];
	int port;
	char path[108];                /* sun_path's size */
	char user[128];
	char password[256];
	int db;
	/* sentinel://: the sentinels asked for master's address (host and port above are
	 * unused); 0 for redis:// and unix:// URLs. */
	int nsentinels;
	struct tfs_sentinel_addr {
		char host[256];
		int port;
	} sentinel[TFS_SENTINELS_MAX];
	char master[TFS_MASTER_NAME_MAX + 1];
};

/* redis://[[user]:password@]host[:port][/db], unix://[[user]:password@]/path/to/sock[?db=N]
 * or sentinel://[[user]:password@]host:port[,host:port...]/mastername[?db=N] (sentinel.h).
 * Pure parser: 0 or -EINVAL (with the reason in err, may be NULL). */
int tfs_url_parse(const char *url, struct tfs_redis_url *u, char *err, size_t errlen);

/* Connects, authenticates and selects the db. Returns a context owned by the caller
 * (redisFree), or NULL with *rc set to -ECONNREFUSED/-ENOENT/-ETIMEDOUT (unreachable),
 * -EACCES (password refused) or -EIO, and a message in err. A sentinel:// URL is resolved
 * anew at each call (tfs_sentinel_connect): the primary the sentinels name now, checked to
 * be a primary; -ENXIO when no sentinel knows the master's name. */
redisContext *tfs_redis_connect(const struct tfs_redis_url *u, int timeout_ms, int *rc,
				char *err, size_t errlen);

/* Runs a command given as argv, checks the reply is not an error. Returns the reply (the
 * caller frees it) or NULL; on NULL *rc is -EIO when the connection broke (the context is
 * then unusable) or when the server turned replica under it (READONLY: a failover; the
 * caller drops the context as broken and connects again), or -EPROTO when Redis answered
 * with another error. */
redisReply *tfs_redis_cmdv(redisContext *c, int argc, const char **argv, const size_t *len,
			   int *rc);

/* 1 when an error reply says the server is no longer the primary (READONLY, a replica
 * after a failover; MASTERDOWN): the connection is as good as broken. */
int tfs_redis_err_failover(const redisReply *r);

#endif
