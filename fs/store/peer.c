/* A node's UCX address in Redis (peer.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store/conn.h"
#include "store/peer.h"
#include "store/schema.h"

/* The address goes with the lease: set only while the lease's token is the caller's. */
static const char peer_set_lua[] =
	"local v = redis.call('GET', KEYS[1]) "
	"if not v or string.sub(v, 1, #ARGV[1] + 1) ~= ARGV[1] .. ' ' then return 0 end "
	"redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3]) "
	"return 1";

int tfs_store_peer_publish(const char *token, const char *value, int ttl_ms)
{
	char alive[600], key[600], t[16];
	redisReply *r;
	int rc;

	tfs_store_alive_key(alive, sizeof(alive), tfs_schema.node);
	tfs_store_peer_key(key, sizeof(key), tfs_schema.node);
	snprintf(t, sizeof(t), "%d", ttl_ms);
	r = tfs_conn_cmdf_unordered(&rc, "EVAL %s 2 %s %s %s %s %s", peer_set_lua, alive, key,
				    token, value, t);
	if (!r)
		return rc;
	rc = r->type != REDIS_REPLY_INTEGER ? -EPROTO : r->integer == 1 ? 0 : -EBUSY;
	freeReplyObject(r);
	return rc;
}

int tfs_store_peer_get(const char *node, char *buf, size_t size)
{
	char key[600];
	redisReply *r;
	int rc;

	tfs_store_peer_key(key, sizeof(key), node);
	r = tfs_conn_cmdf_unordered(&rc, "GET %s", key);
	if (!r)
		return rc;
	if (r->type == REDIS_REPLY_NIL)
		rc = -ENOENT;
	else if (r->type != REDIS_REPLY_STRING)
		rc = -EPROTO;
	else if (r->len >= size)
		rc = -E2BIG;
	else {
		memcpy(buf, r->str, r->len);
		buf[r->len] = '\0';
		rc = 0;
	}
	freeReplyObject(r);
	return rc;
}
