/* The lifecycle queue's Redis side. A command popped is never only in the daemon's
 * memory: one script moves it from its queue onto this node's processing list, and it
 * leaves that list only in the script that pushes its answer (queued with the records it
 * reports, in one MULTI/EXEC), or in the one that forwards it to its node. What a crash,
 * a failed read of a pop or a Redis stall leaves on the list was not answered and goes
 * again (queue.c's recover). Redis has no blocking pop that moves from several lists, so
 * the wait is a subscription: Redis client tracking (BCAST) on the queues' prefixes,
 * reported to a connection of the queue thread's own. */
#include <errno.h>
#include <poll.h>
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

/* Bytes of an oversize command kept to answer it: its id and reply are read from them. */
#define OVERSIZE_HEAD 4096
#define MAXKEYS 260

/* KEYS[1] the processing list, KEYS[2] a scratch list, KEYS[3] the counter that names
 * set-aside commands (<KEYS[3]>:<n>), then the lists in the order they are tried; ARGV
 * count, byte budget, largest command, bytes kept of a larger one. A key of another type
 * is passed over (pcall), so that one bad key does not stop the others.
 *
 * An element a script reads costs Redis about 30 to 60 ns a byte (0.25 to 0.5 s for
 * 8 MiB, all other clients waiting), so none is read here before its size is known: SORT
 * BY nosort ... STORE copies the oldest into the scratch list at memcpy speed, and MEMORY
 * USAGE weighs them (never less than their bytes, at most about 1.25 times them plus a
 * little). When the whole list weighs no more than the budget and one command more (so
 * that a copy of any of its elements is bounded as the copy of one large command is),
 * the oldest of it, as many as may be taken, are weighed together: when they weigh no
 * more than one command may (2 * max + 4096) and fit the budget left, they are all read
 * and taken off (LRANGE, LTRIM: nothing newer than Redis 6.0) and moved in one LPUSH
 * (small commands by the thousand cost a few calls per grab, not five each). Otherwise
 * they go one at a time: one that may be small enough is read and measured exactly; one
 * that cannot be is set aside under a key of its own, unread, and the daemon fetches its
 * start from there. The DEL first: a script that wrote (even nothing) may go on writing
 * past maxmemory, so the queue still drains when Redis is out of memory. */
static const char grab_lua[] =
	"local count, budget = tonumber(ARGV[1]), tonumber(ARGV[2]) "
	"local max, head = tonumber(ARGV[3]), tonumber(ARGV[4]) "
	"local out, bytes, one = {}, 0, 2 * max + 4096 "
	"local function entry(k, v) "
	"  bytes = bytes + #v "
	"  if #v > max then return k .. '\\n!' .. #v .. '\\n' .. string.sub(v, 1, head) end "
	"  return k .. '\\n' .. v "
	"end "
	"redis.call('DEL', KEYS[2]) "
	"for i = 4, #KEYS do "
	"  local k = KEYS[i] "
	"  local n = redis.pcall('LLEN', k) "
	"  if type(n) ~= 'number' then n = 0 end "
	"  local bulk = n > 1 and "
	"    redis.call('MEMORY', 'USAGE', k, 'SAMPLES', 0) <= budget + one "
	"  while n > 0 and #out < count and bytes < budget do "
	"    local c = math.min(n, count - #out) "
	"    if not bulk then c = 1 end "
	"    redis.call('SORT', k, 'BY', 'nosort', 'LIMIT', n - c, c, 'STORE', KEYS[2]) "
	"    local u = redis.call('MEMORY', 'USAGE', KEYS[2], 'SAMPLES', 0) or 0 "
	"    if c > 1 and (u > one or u > budget - bytes) then "
	"      bulk = false "
	"    elseif u <= one then "
	"      redis.call('DEL', KEYS[2]) "
	"      local vs = redis.call('LRANGE', k, n - c, n - 1) "
	"      if n > c then redis.call('LTRIM', k, 0, n - c - 1) else redis.call('DEL', k) end "
	"      local es = {} "
	"      for j = #vs, 1, -1 do es[#es + 1] = entry(k, vs[j]) out[#out + 1] = es[#es] end "
	"      redis.call('LPUSH', KEYS[1], unpack(es)) "
	"      n = n - c "
	"    else "
	"      local side = KEYS[3] .. ':' .. redis.call('INCR', KEYS[3]) "
	"      redis.call('RENAME', KEYS[2], side) "
	"      redis.call('LTRIM', k, 0, -2) "
	"      local e = k .. '\\n!' .. u .. '\\n@' .. side "
	"      bytes = bytes + u "
	"      redis.call('LPUSH', KEYS[1], e) "
	"      out[#out + 1] = e "
	"      n = n - 1 "
	"    end "
	"  end "
	"  if #out > 0 then return out end "
	"end "
	"return out";

/* The answers of a group of commands (tfs_qredis_answers). KEYS[1] the processing list,
 * then the reply keys; ARGV[1] the ttl, then per command its entry, the index in KEYS of
 * its reply key (0: none) and its answer. Each entry is taken first: once it is gone the
 * command was answered, and a second run (the writer sends again what a broken
 * connection left unanswered) pushes nothing for it. An answer goes onto a list, or onto
 * a key that does not exist (made a list that expires); never onto a key of another
 * type. A reply key's answers go in their commands' order, in one push. The commands of a
 * group are usually the oldest on the processing list, in their order (taken together,
 * answered in turn): when the list's tail is exactly their entries, one LTRIM takes them
 * all, instead of an LREM each; otherwise (an entry answered already, or out of order)
 * each goes by its LREM. */
static const char answers_lua[] =
	"local ttl, push, expire = ARGV[1], {}, {} "
	"local n = (#ARGV - 1) / 3 "
	"local tail = redis.call('LRANGE', KEYS[1], -n, -1) "
	"local all = #tail == n "
	"for i = 1, n do "
	"  if not all or tail[n - i + 1] ~= ARGV[3 * i - 1] then all = false break end "
	"end "
	"if all then redis.call('LTRIM', KEYS[1], 0, -n - 1) end "
	"for i = 2, #ARGV, 3 do "
	"  if all or redis.call('LREM', KEYS[1], -1, ARGV[i]) ~= 0 then "
	"    local k = tonumber(ARGV[i + 1]) "
	"    if k > 1 and push[k] == nil then "
	"      local t = redis.call('TYPE', KEYS[k]).ok "
	"      if t == 'none' then push[k], expire[k] = {}, true "
	"      elseif t == 'list' then "
	"        push[k], expire[k] = {}, redis.call('TTL', KEYS[k]) > 0 "
	"      else push[k] = false end "
	"    end "
	"    if k > 1 and push[k] then table.insert(push[k], ARGV[i + 2]) end "
	"  end "
	"end "
	"for k, l in pairs(push) do "
	"  if l and #l > 0 then "
	"    redis.call('LPUSH', KEYS[k], unpack(l)) "
	"    if expire[k] then redis.call('EXPIRE', KEYS[k], ttl) end "
	"  end "
	"end "
	"return 1";

/* KEYS alive key, the node's list, the processing list; ARGV command, ttl, entry, most
 * commands waiting. The push, the check of the owner's lease and the acknowledgement at
 * once: a command never lands on the list of a node that is not there to pop it, nor
 * twice. The list expires when nobody pops it (its node died after the push). */
static const char forward_lua[] =
	"if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end "
	"if redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[4]) then return -1 end "
	"if redis.call('LREM', KEYS[3], -1, ARGV[3]) == 0 then return 2 end "
	"redis.call('LPUSH', KEYS[2], ARGV[1]) "
	"redis.call('EXPIRE', KEYS[2], ARGV[2]) "
	"return 1";

static struct {
	char processing[600], scratch[600], aside[600];
	char lists[MAXKEYS][600];
	size_t turn;
	redisContext *sub;           /* tracking reported here; NULL: not (yet) */
	int no_tracking;             /* Redis refused it: wait by the clock */
} qr;

void tfs_qredis_processing(char *buf, size_t size)
{
	snprintf(buf, size, "{%s}:processing:%s", tfs_schema.queue, tfs_schema.node);
}

static const char *processing(void)
{
	if (!qr.processing[0]) {
		tfs_qredis_processing(qr.processing, sizeof(qr.processing));
		snprintf(qr.scratch, sizeof(qr.scratch), "{%s}:grab:%s", tfs_schema.queue,
			 tfs_schema.node);
		snprintf(qr.aside, sizeof(qr.aside), "{%s}:oversize:%s", tfs_schema.queue,
			 tfs_schema.node);
	}
	return qr.processing;
}

int tfs_qredis_parse(const char *e, size_t len, struct tfs_qentry *q)
{
	const char *nl = memchr(e, '\n', len), *p, *nl2;
	uint64_t n;

	memset(q, 0, sizeof(*q));
	q->entry = e;
	q->elen = len;
	if (!nl || nl == e || (size_t)(nl - e) >= sizeof(q->list))
		return -EBADMSG;
	memcpy(q->list, e, (size_t)(nl - e));
	p = nl + 1;
	q->json = p;
	q->len = len - (size_t)(p - e);
	if (q->len && *p == '!') {
		nl2 = memchr(p, '\n', q->len);
		if (!nl2 || tfs_parse_u64(p + 1, (size_t)(nl2 - p - 1), &n) || !n)
			return -EBADMSG;
		q->oversize = n;
		q->json = nl2 + 1;
		q->len = len - (size_t)(q->json - e);
		if (q->len && *q->json == '@') {
			if (q->len - 1 >= sizeof(q->aside))
				return -EBADMSG;
			memcpy(q->aside, q->json + 1, q->len - 1);
			q->json += q->len;
			q->len = 0;
		}
	}
	return 0;
}

/* The lists tried, in order: the shared queue, this node's forwarded commands, then the
 * per-user lists starting one further each time: the first list that has something is
 * popped, and one user's flood must not starve the others. */
static int pop_keys(const char **argv, int first)
{
	size_t users = tfs_qusers_count();
	int n = 0;

	argv[first + n++] = tfs_schema.queue;
	argv[first + n++] = tfs_node_queue;
	qr.turn++;
	for (size_t i = 0; i < users && n < MAXKEYS - 2; i++) {
		const struct tfs_quser *u = tfs_qusers_at((qr.turn + i) % users);

		snprintf(qr.lists[i], sizeof(qr.lists[i]), "%s", u->list);
		argv[first + n++] = qr.lists[i];
	}
	return n;
}

redisReply *tfs_qredis_grab(int *rc, int count, size_t max_batch, size_t max_cmd)
{
	const char *argv[MAXKEYS + 12];
	char nk[16], cnt[24], bud[24], max[24], head[24];
	redisReply *r;
	char *cmd = NULL;
	long long len;
	int n, argc = 0;

	argv[argc++] = "EVAL";
	argv[argc++] = grab_lua;
	argv[argc++] = nk;
	argv[argc++] = processing();
	argv[argc++] = qr.scratch;
	argv[argc++] = qr.aside;
	n = pop_keys(argv, argc);
	argc += n;
	snprintf(nk, sizeof(nk), "%d", n + 3);
	snprintf(cnt, sizeof(cnt), "%d", count);
	snprintf(bud, sizeof(bud), "%zu", max_batch);
	snprintf(max, sizeof(max), "%zu", max_cmd);
	snprintf(head, sizeof(head), "%zu", max_cmd < OVERSIZE_HEAD ? max_cmd : OVERSIZE_HEAD);
	argv[argc++] = cnt;
	argv[argc++] = bud;
	argv[argc++] = max;
	argv[argc++] = head;
	len = redisFormatCommandArgv(&cmd, argc, argv, NULL);
	if (len < 0) {
		*rc = -ENOMEM;
		return NULL;
	}
	r = tfs_conn_run(rc, cmd, (size_t)len);
	redisFreeCommand(cmd);
	if (r && r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		*rc = -EPROTO;
		return NULL;
	}
	return r;
}

redisReply *tfs_qredis_pending(int *rc, int n, long long *total)
{
	redisReply *r, *l;

	r = tfs_conn_cmdf_unordered(rc, "LLEN %s", processing());
	if (!r)
		return NULL;
	*total = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
	freeReplyObject(r);
	l = tfs_conn_cmdf_unordered(rc, "LRANGE %s %d -1", processing(), -n);
	if (l && l->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(l);
		*rc = -EPROTO;
		return NULL;
	}
	return l;
}

redisReply *tfs_qredis_aside_head(const struct tfs_qentry *e, int *rc)
{
	redisReply *r;

	if (!e->aside[0] || e->oversize > TFS_QREDIS_FETCH_MAX) {
		*rc = -EFBIG;
		return NULL;
	}
	r = tfs_conn_cmdf_unordered(rc, "LINDEX %s 0", e->aside);
	if (r && r->type != REDIS_REPLY_STRING) {
		freeReplyObject(r);
		*rc = -ENOENT;
		return NULL;
	}
	return r;
}

/* The answers held for the calling thread's group (tfs_qredis_answer), until it goes. */
struct held {
	char *entry, *reply, *json;
	size_t elen, jlen;
};
static struct {
	struct held a[TFS_QREDIS_ANSWERS_MAX];
	size_t n;
	int ttl;
} hold;

static void held_free(void)
{
	for (size_t i = 0; i < hold.n; i++) {
		free(hold.a[i].entry);
		free(hold.a[i].reply);
		free(hold.a[i].json);
	}
	hold.n = 0;
}

int tfs_qredis_answer(const struct tfs_qentry *e, const char *reply, const char *json, int ttl)
{
	struct held *h;

	/* In the caller's group, so with the answer or not at all. */
	if (e->aside[0] && tfs_writer_cmdf("DEL %s", e->aside))
		return -ENOMEM;
	if (hold.n == TFS_QREDIS_ANSWERS_MAX && tfs_qredis_answers(NULL))
		return -ENOMEM;
	h = &hold.a[hold.n];
	memset(h, 0, sizeof(*h));
	h->elen = e->elen;
	h->jlen = json ? strlen(json) : 0;
	if (!(h->entry = malloc(e->elen ? e->elen : 1)) ||
	    (reply && !(h->reply = strdup(reply))) ||
	    (json && !(h->json = strdup(json)))) {
		free(h->entry);
		free(h->reply);
		return -ENOMEM;
	}
	memcpy(h->entry, e->entry, e->elen);
	hold.ttl = ttl;
	hold.n++;
	return 0;
}

int tfs_qredis_answers(void *arg)
{
	const char *argv[6 + 4 * TFS_QREDIS_ANSWERS_MAX];
	size_t len[6 + 4 * TFS_QREDIS_ANSWERS_MAX];
	char t[16], nk[16], idx[TFS_QREDIS_ANSWERS_MAX][16];
	int argc = 0, nkeys = 1, rc;
	size_t keyat[TFS_QREDIS_ANSWERS_MAX];

	(void)arg;
	if (!hold.n)
		return 0;
	argv[argc] = "EVAL"; len[argc++] = 4;
	argv[argc] = answers_lua; len[argc++] = sizeof(answers_lua) - 1;
	argv[argc] = nk; len[argc++] = 0;
	argv[argc] = processing(); len[argc++] = strlen(processing());
	/* The reply keys, once each: a batch's commands share one. */
	for (size_t i = 0; i < hold.n; i++) {
		keyat[i] = 0;
		if (!hold.a[i].reply)
			continue;
		for (size_t j = 0; j < i && !keyat[i]; j++)
			if (hold.a[j].reply && strcmp(hold.a[j].reply, hold.a[i].reply) == 0)
				keyat[i] = keyat[j];
		if (!keyat[i]) {
			keyat[i] = (size_t)++nkeys;
			argv[argc] = hold.a[i].reply;
			len[argc++] = strlen(hold.a[i].reply);
		}
	}
	snprintf(nk, sizeof(nk), "%d", nkeys);
	len[2] = strlen(nk);
	snprintf(t, sizeof(t), "%d", hold.ttl);
	argv[argc] = t; len[argc++] = strlen(t);
	for (size_t i = 0; i < hold.n; i++) {
		snprintf(idx[i], sizeof(idx[i]), "%zu", keyat[i]);
		argv[argc] = hold.a[i].entry; len[argc++] = hold.a[i].elen;
		argv[argc] = idx[i]; len[argc++] = strlen(idx[i]);
		argv[argc] = hold.a[i].json ? hold.a[i].json : ""; len[argc++] = hold.a[i].jlen;
	}
	rc = tfs_writer_cmdv(argc, argv, len);
	held_free();
	return rc;
}

int tfs_qredis_forward(const struct tfs_qentry *e, const char *node, const char *cmd,
		       size_t len, int ttl, long max)
{
	char alive[600], list[600], t[16], m[24];
	redisReply *r;
	int rc;

	tfs_store_alive_key(alive, sizeof(alive), node);
	tfs_store_node_queue(list, sizeof(list), node);
	snprintf(t, sizeof(t), "%d", ttl);
	snprintf(m, sizeof(m), "%ld", max);
	r = tfs_writer_read(&rc, "EVAL %s 3 %s %s %s %b %s %b %s", forward_lua, alive, list,
			  processing(), cmd, len, t, e->entry, e->elen, m);
	if (!r)
		return rc == -EPROTO ? -EIO : rc;
	rc = r->type != REDIS_REPLY_INTEGER ? -EIO : r->integer == 0 ? -EHOSTDOWN :
	     r->integer < 0 ? -EAGAIN : 0;
	freeReplyObject(r);
	return rc;
}

static void sub_close(void)
{
	if (qr.sub)
		redisFree(qr.sub);
	qr.sub = NULL;
}

/* The subscriber: Redis reports every change of a key under the queue's name (the shared
 * queue, the per-user lists and their reply keys) or of this node's list. A client may
 * redirect its tracking to itself, so one connection does it all. */
static void sub_open(void)
{
	char err[256];
	redisReply *r;
	long long id;
	int rc;

	qr.sub = tfs_conn_open(1000, &rc, err, sizeof(err));
	if (!qr.sub)
		return;
	r = redisCommand(qr.sub, "CLIENT ID");
	if (!r || r->type != REDIS_REPLY_INTEGER)
		goto fail;
	id = r->integer;
	freeReplyObject(r);
	r = redisCommand(qr.sub, "CLIENT TRACKING on REDIRECT %lld BCAST PREFIX %s PREFIX %s",
			 id, tfs_schema.queue, tfs_node_queue);
	if (r && r->type == REDIS_REPLY_ERROR) {
		tfs_log(LOG_NOTICE, "queue: Redis has no client tracking (%s): the queue is "
			"looked at every %d ms", r->str, 50);
		qr.no_tracking = 1;
		goto fail;
	}
	if (!r)
		goto fail;
	freeReplyObject(r);
	r = redisCommand(qr.sub, "SUBSCRIBE __redis__:invalidate");
	if (!r || r->type != REDIS_REPLY_ARRAY)
		goto fail;
	freeReplyObject(r);
	return;
fail:
	freeReplyObject(r);
	sub_close();
}

/* Reads what came (1), nothing came within ms (0), or the connection broke (-1). */
static int sub_read(int ms)
{
	struct pollfd p = { .fd = qr.sub->fd, .events = POLLIN };
	redisReply *r;
	int n = poll(&p, 1, ms);

	if (n <= 0)
		return 0;
	if (redisBufferRead(qr.sub) != REDIS_OK) {
		sub_close();
		return -1;
	}
	while (redisGetReplyFromReader(qr.sub, (void **)&r) == REDIS_OK && r)
		freeReplyObject(r);
	return 1;
}

void tfs_qredis_drain(void)
{
	if (!qr.sub && !qr.no_tracking)
		sub_open();
	while (qr.sub && sub_read(0) == 1)
		;
}

void tfs_qredis_wait(int ms)
{
	if (qr.no_tracking) {
		usleep(50000);
		return;
	}
	if (!qr.sub || sub_read(ms) < 0)
		usleep((useconds_t)ms * 1000);
}

void tfs_qredis_close(void)
{
	sub_close();
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
	 * what a queue client needs: push commands, pop replies, connect, ask who it is and
	 * whether the server is a primary (a sentinel:// client). */
	r = tfs_writer_read(&rc, "ACL SETUSER %s on resetkeys resetchannels %s %s %s -@all +lpush "
			  "+rpush +brpop "
			  "+blpop +rpop +lpop +llen +lrange +del +exists +ping +echo +hello "
			  "+auth +select +acl|whoami +client|setname +client|id "
			  "+quit +reset +role", name, pass, keys, replies);
	if (!r)
		return rc == -EPROTO ? -EACCES : rc;
	rc = r->type == REDIS_REPLY_STATUS ? 0 : -EIO;
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
