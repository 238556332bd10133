/* The node lease (lease.h): one daemon per node name on a Redis. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mem/keeper/keeper.h"
#include "store/lease.h"
#include "store/store.h"
#include "log.h"
#include "strutil.h"
#include "store/schema.h"
#include "util/clock.h"
#include "store/conn.h"

static struct {
	char token[33];             /* 32 hex digits */
	/* mu: c, said_ms and stop; held across a renewal (a connect, with Sentinel the
	 * primary's lookup, and one script: each bounded by a timeout). Under it only
	 * conn.c's and the log's own locks are taken, whose holders never take it. */
	pthread_mutex_t mu;
	pthread_cond_t wake;        /* stop was set; made by tfs_lease_keep */
	redisContext *c;            /* the lease's own connection: not closed by lease_lost */
	int64_t said_ms;            /* when "held by another" was last logged */
	pthread_t thread;
	int keeping, stop;
} ls = { .mu = PTHREAD_MUTEX_INITIALIZER };

static int new_token(void)
{
	uint8_t raw[16];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -EIO;
	tfs_hex_encode(raw, sizeof(raw), ls.token);
	return 0;
}

/* A token from the keeper: 32 lower-case hex digits, else none. */
static int token_from_env(void)
{
	const char *s = getenv("TFS_LEASE");
	int ok = s && strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;

	if (ok)
		memcpy(ls.token, s, 33);
	unsetenv("TFS_LEASE");
	return ok ? 0 : -ENOENT;
}

/* Where a pid means something: the boot and the pid namespace ("<boot id>/<ns inode>"),
 * so that a holder's pid is looked at only by a daemon that sees the same processes
 * (not by one in another container with the same host name). "?" when unknown. */
static void pid_space(char *buf, size_t size)
{
	char boot[64] = "";
	struct stat st;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			boot[0] = '\0';
		fclose(f);
	}
	boot[strcspn(boot, "\n")] = '\0';
	if (!boot[0] || strspn(boot, "0123456789abcdef-") != strlen(boot) ||
	    stat("/proc/self/ns/pid", &st)) {
		snprintf(buf, size, "?");
		return;
	}
	snprintf(buf, size, "%s/%llu", boot, (unsigned long long)st.st_ino);
}

/* "<pid> <host> <pid space>": who holds it, as another daemon's refusal shows it. The pid
 * is the keeper's (the daemon's own before the keeper starts): it stays across restarts,
 * and SIGTERM to it stops the daemon cleanly. */
static void who_am_i(char *buf, size_t size)
{
	char host[256], space[128];

	if (gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	for (char *p = host; *p; p++)
		if (*p <= ' ' || *p > '~')
			*p = '?';
	pid_space(space, sizeof(space));
	snprintf(buf, size, "%d %s %s", (int)tfs_keeper_pid(), host, space);
}

/* Whether the holder's value v names a process that is gone: same host and pid space as
 * ours, and no such pid. A daemon and keeper killed together (kill -9, the OOM killer)
 * leave their lease for its TTL; the next start on the same machine need not wait. */
static int holder_gone(const char *v)
{
	char mine[512], tok[64], pid[32], host[256], space[128], my_host[256], my_space[128];
	char *end;
	long p;

	who_am_i(mine, sizeof(mine));
	if (sscanf(v, "%63s %31s %255s %127s", tok, pid, host, space) != 4 ||
	    sscanf(mine, "%*s %255s %127s", my_host, my_space) != 2 ||
	    strcmp(host, my_host) || strcmp(space, my_space) || !strcmp(space, "?"))
		return 0;
	errno = 0;
	p = strtol(pid, &end, 10);
	if (*end || p <= 1 || errno)
		return 0;
	return kill((pid_t)p, 0) && errno == ESRCH;
}

/* "pid P on host H" from a holder's value "<token> <pid> <host>"; anything else (a value
 * from an older version, or garbage) is shown as it is, printable characters only. */
static void describe(const char *v, char *out, size_t size)
{
	char tok[64], pid[32], host[256], clean[128];
	size_t n = 0;

	if (sscanf(v, "%63s %31s %255s", tok, pid, host) == 3) {
		snprintf(out, size, "pid %s on host %s", pid, host);
		return;
	}
	for (const char *p = v; *p && n + 1 < sizeof(clean); p++)
		clean[n++] = *p >= ' ' && *p <= '~' ? *p : '?';
	clean[n] = '\0';
	snprintf(out, size, "its key holds '%s'", clean);
}

static redisContext *conn(void)
{
	char err[256];
	int rc;

	if (!ls.c)
		ls.c = tfs_conn_open(1000, &rc, err, sizeof(err));
	return ls.c;
}

static void conn_drop(void)
{
	if (ls.c)
		redisFree(ls.c);
	ls.c = NULL;
}

static int take(char *holder, size_t hsize)
{
	char who[512];
	redisContext *c = conn();
	int rc;

	if (!c)
		return -EIO;
	who_am_i(who, sizeof(who));
	rc = tfs_store_lease_take(c, ls.token, who, TFS_LEASE_MS, holder, hsize);
	if (rc == -EIO)
		conn_drop();
	return rc;
}

int tfs_lease_init(int restart)
{
	if ((!restart || token_from_env()) && new_token()) {
		tfs_log(LOG_ERR, "cannot make a random token for the node lease");
		return -EIO;
	}
	return 0;
}

int tfs_lease_acquire(void)
{
	char holder[512] = "", desc[400];
	int rc;

	rc = take(holder, sizeof(holder));
	if (rc == -EBUSY && holder_gone(holder)) {
		char who[512];

		who_am_i(who, sizeof(who));
		describe(holder, desc, sizeof(desc));
		if (conn() && tfs_store_lease_steal(ls.c, holder, ls.token, who, TFS_LEASE_MS) == 0) {
			tfs_log(LOG_NOTICE, "node %s: its last daemon (%s) is gone: lease taken over",
				tfs_schema.node, desc);
			rc = 0;
		}
	}
	/* The forked daemon and keeper must not share this connection. */
	conn_drop();
	if (rc == -EBUSY) {
		describe(holder, desc, sizeof(desc));
		tfs_log(LOG_ERR, "node %s is held by another daemon (%s); use --node", tfs_schema.node,
			desc);
		return rc;
	}
	if (rc < 0) {
		tfs_log(LOG_ERR, "cannot take the lease of node %s in Redis: %s", tfs_schema.node,
			rc == -EIO ? "Redis did not answer" : holder);
		return rc;
	}
	return 0;
}

const char *tfs_lease_token(void)
{
	return ls.token;
}

/* One renewal, ls.mu held. */
static int renew(void)
{
	char holder[512] = "", desc[400];
	int64_t now = tfs_mono_ns() / 1000000;
	int rc;

	rc = take(holder, sizeof(holder));
	if (rc == -EBUSY) {
		if (!tfs_redis.lease_lost || now - ls.said_ms >= 60000) {
			describe(holder, desc, sizeof(desc));
			tfs_log(LOG_CRIT, "node %s is now held by another daemon (%s): this daemon "
				"no longer writes the node's records; metadata changes fail with EIO "
				"until the lease is free again (use a --node of its own)",
				tfs_schema.node, desc);
			ls.said_ms = now;
		}
		/* lease_lost first: housekeeping, on another thread, takes down as the sign
		 * to rewrite the node's records, and a connection it then gets must refuse. */
		__atomic_store_n(&tfs_redis.lease_lost, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&tfs_redis.down, 1, __ATOMIC_RELEASE);
		return rc;
	}
	if (rc < 0)
		return -EIO;
	if (tfs_redis.lease_lost)
		tfs_log(LOG_NOTICE, "node %s: the lease is free again and ours: rewriting the "
			"node's records", tfs_schema.node);
	else if (rc == 1)
		tfs_log(LOG_NOTICE, "node %s: the lease was gone from Redis (emptied, or a stall "
			"past %d ms): taken again", tfs_schema.node, TFS_LEASE_MS);
	__atomic_store_n(&tfs_redis.lease_lost, 0, __ATOMIC_RELEASE);
	return 0;
}

int tfs_lease_check(void)
{
	int rc;

	pthread_mutex_lock(&ls.mu);
	rc = renew();
	pthread_mutex_unlock(&ls.mu);
	return rc;
}

static void *keep(void *arg)
{
	struct timespec until;

	(void)arg;
	pthread_mutex_lock(&ls.mu);
	while (!ls.stop) {
		renew();
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		while (!ls.stop && pthread_cond_timedwait(&ls.wake, &ls.mu, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&ls.mu);
	return NULL;
}

int tfs_lease_keep(void)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	if (ls.keeping)
		return 0;
	/* Renewals a second apart whatever the wall clock does. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ls.wake, &ca);
	pthread_condattr_destroy(&ca);
	ls.stop = 0;
	/* As every thread of the daemon's: signals are the main thread's (a renewal's write
	 * to a Redis that went away is EPIPE here, never SIGPIPE). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&ls.thread, NULL, keep, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		pthread_setname_np(ls.thread, "tfs-lease");
	if (rc) {
		tfs_log(LOG_ERR, "node %s: no thread to renew its lease: %s", tfs_schema.node,
			strerror(rc));
		return -rc;
	}
	ls.keeping = 1;
	return 0;
}

static void unkeep(void)
{
	if (!ls.keeping)
		return;
	pthread_mutex_lock(&ls.mu);
	ls.stop = 1;
	pthread_cond_signal(&ls.wake);
	pthread_mutex_unlock(&ls.mu);
	pthread_join(ls.thread, NULL);
	pthread_cond_destroy(&ls.wake);
	ls.keeping = 0;
}

void tfs_lease_release(void)
{
	redisContext *c;

	unkeep();
	/* A fresh connection: the renewals' may be to a Redis that went away since, and a
	 * write on it would raise SIGPIPE. */
	conn_drop();
	if (ls.token[0] && (c = conn()))
		tfs_store_lease_drop(c, ls.token);
	conn_drop();
	ls.token[0] = '\0';
}

/* --- the live-node registry and node lease (lease.c, queue.c) --- */

/* The lease is the registry key itself, "<token> <pid> <host>": taken when free or when
 * its token is ours (a restarted daemon takes over its predecessor's), never another's.
 * 2: taken while free; 1: ours, renewed; else the holder's value. */
static const char lease_take_lua[] =
	"local v = redis.call('GET', KEYS[1]) "
	"if v and string.sub(v, 1, #ARGV[1] + 1) ~= ARGV[1] .. ' ' then return v end "
	"redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2], 'PX', ARGV[3]) "
	"if v then return 1 end "
	"return 2";

static const char lease_drop_lua[] =
	"local v = redis.call('GET', KEYS[1]) "
	"if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then "
	"return redis.call('DEL', KEYS[1]) end "
	"return 0";

int tfs_store_lease_take(redisContext *c, const char *token, const char *who, int ttl_ms,
			 char *holder, size_t hsize)
{
	char key[600], t[16];
	redisReply *r;
	int rc;

	tfs_store_alive_key(key, sizeof(key), tfs_schema.node);
	snprintf(t, sizeof(t), "%d", ttl_ms);
	r = redisCommand(c, "EVAL %s 1 %s %s %s %s", lease_take_lua, key, token, who, t);
	if (!r)
		return -EIO;
	if (tfs_redis_err_failover(r))
		rc = -EIO;           /* a primary turned replica: the next connection follows */
	else if (r->type == REDIS_REPLY_INTEGER && (r->integer == 1 || r->integer == 2))
		rc = r->integer == 2;
	else if (r->type == REDIS_REPLY_STRING) {
		snprintf(holder, hsize, "%.*s", (int)r->len, r->str);
		rc = -EBUSY;
	} else {
		snprintf(holder, hsize, "%.*s", r->type == REDIS_REPLY_ERROR ? (int)r->len : 0,
			 r->type == REDIS_REPLY_ERROR ? r->str : "");
		rc = -EPROTO;
	}
	freeReplyObject(r);
	return rc;
}

/* Compare and set: the lease goes to token only while it still holds exactly old. */
static const char lease_steal_lua[] =
	"if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end "
	"redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. ARGV[3], 'PX', ARGV[4]) "
	"return 1";

int tfs_store_lease_steal(redisContext *c, const char *old, const char *token, const char *who,
			  int ttl_ms)
{
	char key[600], t[16];
	redisReply *r;
	int rc;

	tfs_store_alive_key(key, sizeof(key), tfs_schema.node);
	snprintf(t, sizeof(t), "%d", ttl_ms);
	r = redisCommand(c, "EVAL %s 1 %s %s %s %s %s", lease_steal_lua, key, old, token, who, t);
	if (!r)
		return -EIO;
	rc = r->type == REDIS_REPLY_INTEGER ? (r->integer == 1 ? 0 : -EBUSY) : -EPROTO;
	freeReplyObject(r);
	return rc;
}

int tfs_store_lease_drop(redisContext *c, const char *token)
{
	char key[600];
	redisReply *r;
	int rc;

	tfs_store_alive_key(key, sizeof(key), tfs_schema.node);
	r = redisCommand(c, "EVAL %s 1 %s %s", lease_drop_lua, key, token);
	if (!r)
		return -EIO;
	rc = r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -EPROTO;
	freeReplyObject(r);
	return rc;
}
