/* The lifecycle queue's Redis side (redis.h): popping, replies, forwarding to another
 * node, the per-user lists and their ACL users. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "queue/redis.h"
#include "queue/users.h"
#include "store/conn.h"
#include "store/schema.h"
#include "store/writer.h"
#include "strutil.h"

char tfs_node_queue[512];

/* --- the lifecycle queue (queue.c) --- */

redisReply *tfs_store_queue_rpop(int *rc, const char *list, int count)
{
	return tfs_conn_cmdf_unordered(rc, "RPOP %s %d", list, count);
}

int tfs_store_has_blmpop(void)
{
	redisReply *r;
	int rc, unknown;

	r = tfs_conn_cmdf_unordered(&rc, "COMMAND INFO BLMPOP");
	if (!r)
		return 1;
	unknown = r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
		  r->element[0]->type == REDIS_REPLY_NIL;
	freeReplyObject(r);
	return !unknown;
}

/* A queue reply goes onto a list, or onto a key that does not exist (made a list that
 * expires); never onto a key of another type. A list that had no expiry (a user's own)
 * gets none. One script, so that nothing changes the key's type in between. */
static const char reply_lua[] =
	"local t = redis.call('TYPE', KEYS[1]).ok "
	"if t ~= 'none' and t ~= 'list' then return 0 end "
	"local ttl = redis.call('TTL', KEYS[1]) "
	"redis.call('LPUSH', KEYS[1], ARGV[1]) "
	"if t == 'none' or ttl > 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end "
	"return 1";

int tfs_store_queue_reply(const char *key, const char *json, int ttl)
{
	char t[16];

	if (!tfs_store_reply_key_ok(key))
		return -EPERM;
	snprintf(t, sizeof(t), "%d", ttl);
	return tfs_writer_cmdf("EVAL %s 1 %s %s %s", reply_lua, key, json, t);
}

/* --- per-user queues (users.c, queue.c) --- */

int tfs_store_queue_acl(uid_t uid, const char *password)
{
	char name[600], list[600], keys[700], replies[700], pass[128];
	redisReply *r;
	int rc;

	tfs_store_queue_acl_name(name, sizeof(name), uid);
	tfs_store_queue_user_list(list, sizeof(list), uid);
	snprintf(keys, sizeof(keys), "~%s", list);
	snprintf(replies, sizeof(replies), "~%s:reply:*", list);
	snprintf(pass, sizeof(pass), ">%s", password);
	/* Rules reset first (wider ones someone added go), passwords added: daemons of other
	 * nodes serving the same list keep theirs; each takes its own back at unmount. Only
	 * what a queue client needs: push commands, pop replies, connect, ask who it is. */
	r = tfs_writer_read(&rc, "ACL SETUSER %s on resetkeys resetchannels %s %s %s -@all +lpush "
			  "+rpush +brpop "
			  "+blpop +rpop +lpop +llen +lrange +del +exists +ping +echo +hello "
			  "+auth +select +acl|whoami +client|setname +client|id "
			  "+quit +reset", name, pass, keys, replies);
	if (!r)
		return rc == -EPROTO ? -EACCES : rc;
	rc = r->type == REDIS_REPLY_STATUS ? 0 : -EIO;
	freeReplyObject(r);
	return rc;
}

/* The lists the queue worker pops, in the order Redis tries them: the shared queue, this
 * node's forwarded commands, then the per-user lists, starting one further each time:
 * Redis pops the first list that has something, and one user's flood must not starve
 * the others. argv from index first. */
static int pop_keys(const char **argv, int first, char (*lists)[600], int max)
{
	static size_t turn;          /* the queue thread's only */
	size_t users = tfs_qusers_count();
	int n = 0;

	argv[first + n++] = tfs_schema.queue;
	argv[first + n++] = tfs_node_queue;
	turn++;
	for (size_t i = 0; i < users && n < max; i++) {
		const struct tfs_quser *u = tfs_qusers_at((turn + i) % users);

		snprintf(lists[i], 600, "%s", u->list);
		argv[first + n++] = lists[i];
	}
	return n;
}

redisReply *tfs_store_queue_pop_all(int *rc, int count, int lmpop)
{
	enum { MAXK = 260 };
	static char lists[MAXK][600];        /* the queue thread's only */
	const char *argv[MAXK + 8];
	char nk[16], cnt[16];
	redisReply *r;
	char *cmd = NULL;
	long long len;
	int n, argc;

	if (lmpop) {
		argv[0] = "BLMPOP";
		argv[1] = "0.5";
		n = pop_keys(argv, 3, lists, MAXK);
		snprintf(nk, sizeof(nk), "%d", n);
		argv[2] = nk;
		snprintf(cnt, sizeof(cnt), "%d", count);
		argv[3 + n] = "RIGHT";
		argv[4 + n] = "COUNT";
		argv[5 + n] = cnt;
		argc = 6 + n;
	} else {
		argv[0] = "BRPOP";
		n = pop_keys(argv, 1, lists, MAXK);
		argv[1 + n] = "0.5";
		argc = 2 + n;
	}
	len = redisFormatCommandArgv(&cmd, argc, argv, NULL);
	if (len < 0) {
		*rc = -ENOMEM;
		return NULL;
	}
	r = tfs_conn_run(rc, cmd, (size_t)len);
	redisFreeCommand(cmd);
	return r;
}

/* The push and the check of the owner's registry key in one step: a command never lands
 * on the list of a node that is not there to pop it. The list expires when nobody pops it
 * (its node died after the push). */
static const char forward_lua[] =
	"if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end "
	"redis.call('LPUSH', KEYS[2], ARGV[1]) "
	"redis.call('EXPIRE', KEYS[2], ARGV[2]) "
	"return 1";

int tfs_store_queue_forward_live(const char *node, const char *json, size_t len, int ttl)
{
	char alive[600], list[600], t[16];
	redisReply *r;
	int rc;

	tfs_store_alive_key(alive, sizeof(alive), node);
	tfs_store_node_queue(list, sizeof(list), node);
	snprintf(t, sizeof(t), "%d", ttl);
	r = tfs_writer_read(&rc, "EVAL %s 2 %s %s %b %s", forward_lua, alive, list, json, len, t);
	if (!r)
		return rc == -EPROTO ? -EIO : rc;
	rc = r->type == REDIS_REPLY_INTEGER ? (r->integer ? 0 : -EHOSTDOWN) : -EIO;
	freeReplyObject(r);
	return rc;
}

int tfs_store_queue_acl_drop(uid_t uid, const char *password)
{
	char name[600], pass[128];
	redisReply *r;
	int rc;

	tfs_store_queue_acl_name(name, sizeof(name), uid);
	snprintf(pass, sizeof(pass), "<%s", password);
	/* Unordered: at unmount the writer has stopped. */
	r = tfs_conn_cmdf_unordered(&rc, "ACL SETUSER %s %s", name, pass);
	freeReplyObject(r);
	return r ? 0 : rc;
}
