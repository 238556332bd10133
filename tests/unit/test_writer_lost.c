/* The write-behind (fs/store/writer.c) against a real redis-server that stalls: a claim
 * whose reply a broken batch lost is answered EIO, never sent again, also when the thread
 * waiting for it sent the batch itself. Sent twice, an HSETNX answers "taken" by its own
 * first copy, and a create then fails EEXIST on a free name.
 *
 * The waiting thread's writes do not wake the writer's thread (tfs_writer_defer_wakes, as
 * in a FUSE request), so the batch it sends is [SET, HSETNX]: Redis, stopped, answers
 * neither within the command timeout, and the SET, nobody's to wait for, stays queued to
 * go again. Redis goes on 1.5 s later and runs both. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../fs/store/writer.c"
#include "../../fs/store/conn.c"
#include "../../fs/store/coalesce.c"
#include "../../fs/store/group_merge.c"
#include "../../fs/util/hash.c"
#include "../../fs/util/clock.c"

#include "tap.h"

static pid_t redis_pid;
static char dir[] = "/tmp/tfs-wlost.XXXXXX";
static char sock[256];

static int ping(void)
{
	redisContext *c = redisConnectUnix(sock);
	redisReply *r = c && !c->err ? redisCommand(c, "PING") : NULL;
	int ok = r && r->type == REDIS_REPLY_STATUS;

	freeReplyObject(r);
	if (c)
		redisFree(c);
	return ok;
}

static int start_redis(void)
{
	if (!mkdtemp(dir))
		return -1;
	snprintf(sock, sizeof(sock), "%s/redis.sock", dir);
	redis_pid = fork();
	if (redis_pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", sock,
		       "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		       "--loglevel", "warning", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		if (ping())
			return 0;
		usleep(25000);
	}
	return -1;
}

/* Whether a command on a connection of the test's own answers the string want. */
static int value_is(const char *cmd, const char *want)
{
	redisContext *c = redisConnectUnix(sock);
	redisReply *r = c && !c->err ? redisCommand(c, cmd) : NULL;
	int yes = r && r->type == REDIS_REPLY_STRING && strcmp(r->str, want) == 0;

	freeReplyObject(r);
	if (c)
		redisFree(c);
	return yes;
}

static void *resume_later(void *arg)
{
	(void)arg;
	usleep(1500000);
	kill(redis_pid, SIGCONT);
	return NULL;
}

int main(void)
{
	char url[300], err[256];
	struct tfs_writer_call *call;
	redisReply *r;
	pthread_t th;
	int rc;

	if (start_redis()) {
		fprintf(stderr, "redis-server did not start\n");
		return 1;
	}
	snprintf(url, sizeof(url), "unix://%s", sock);
	ok(tfs_url_parse(url, &tfs_redis.url, err, sizeof(err)) == 0 && tfs_writer_start() == 0,
	   "the writer starts against a redis-server of its own");

	/* The writer's connection is up before the stall: the batch is sent, not refused at
	 * the connect. */
	ok(tfs_writer_cmdf("SET %s %s", "warm", "1") == 0 && tfs_writer_sync() == 0,
	   "a write reaches Redis");
	tfs_writer_defer_wakes(1);
	kill(redis_pid, SIGSTOP);
	tfs_writer_cmdf("SET %s %s", "before", "1");
	call = tfs_writer_sendf(&rc, "HSETNX %s %s %s", "entries", "name", "t");
	pthread_create(&th, NULL, resume_later, NULL);
	r = call ? tfs_writer_wait(call, &rc) : NULL;
	ok(rc == -EIO || (r && r->type == REDIS_REPLY_INTEGER && r->integer == 1),
	   "the claim is answered EIO (its reply was lost) or taken, never 'taken already' by "
	   "its own first copy (rc %d, reply %lld)", rc,
	   r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1LL);
	freeReplyObject(r);
	pthread_join(th, NULL);
	tfs_writer_defer_wakes(0);

	/* Back: as the queue thread's resync says once Redis answers again. */
	tfs_redis.down = 0;
	ok(tfs_writer_sync() == 0 && value_is("GET before", "1") && value_is("HGET entries name", "t"),
	   "what was queued reaches Redis once it goes on");
	tfs_writer_stop();
	kill(redis_pid, SIGTERM);
	waitpid(redis_pid, NULL, 0);
	snprintf(url, sizeof(url), "rm -rf %s", dir);
	if (system(url)) {
		/* best effort */
	}
	printf("%d checks, %d failed\n", checks, failures);
	return failures != 0;
}
