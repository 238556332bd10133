/* The numbers behind tests/bench/RESULTS.md. One measurement per call, printed as
 * "<what> <value> <unit>" so run.sh can table it.
 *
 *   tfsbench io FILE BYTES STREAMS write|read   sequential, 1 MiB pwrite/pread; each of
 *                                                STREAMS threads owns one contiguous slice
 *   tfsbench cycle DIR N tensor|plain            create -> shape -> unlink, N times;
 *                                                plain: create -> ftruncate -> unlink
 *   tfsbench queue SOCKET N CLIENTS tensor|echo  create/get/delete through the lifecycle
 *                                                queue with replies; echo: the same number
 *                                                of LPUSH+BRPOP round trips, no daemon
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <hiredis.h>

#include "benchutil.h"

#define BLOCK (1u << 20)

static int fail(const char *what)
{
	fprintf(stderr, "tfsbench: %s: %s\n", what, strerror(errno));
	return 1;
}

struct io_job {
	int fd, write;
	uint64_t off, len;
	int err;
};

static void *io_run(void *arg)
{
	struct io_job *j = arg;
	uint8_t *buf;

	if (posix_memalign((void **)&buf, 4096, BLOCK)) {
		j->err = ENOMEM;
		return NULL;
	}
	memset(buf, 0x5a, BLOCK);
	for (uint64_t done = 0; done < j->len;) {
		size_t n = j->len - done < BLOCK ? (size_t)(j->len - done) : BLOCK;
		ssize_t r = j->write ? pwrite(j->fd, buf, n, (off_t)(j->off + done))
				     : pread(j->fd, buf, n, (off_t)(j->off + done));
		if (r <= 0) {
			j->err = r < 0 ? errno : EIO;
			break;
		}
		done += (uint64_t)r;
	}
	free(buf);
	return NULL;
}

static int bench_io(const char *path, uint64_t bytes, int streams, int write)
{
	struct io_job jobs[64];
	pthread_t th[64];
	double t0, t1;
	int fd;

	if (streams < 1 || streams > 64)
		return errno = EINVAL, fail("streams");
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		return fail(path);
	/* Size first (not timed): the runs measure copies, not growth. */
	if (write && ftruncate(fd, (off_t)bytes) < 0)
		return close(fd), fail("ftruncate");
	t0 = bench_now();
	for (int i = 0; i < streams; i++) {
		jobs[i] = (struct io_job){ .fd = fd, .write = write,
			.off = bytes / (uint64_t)streams * (uint64_t)i, .len = bytes / (uint64_t)streams };
		pthread_create(&th[i], NULL, io_run, &jobs[i]);
	}
	for (int i = 0; i < streams; i++)
		pthread_join(th[i], NULL);
	t1 = bench_now();
	close(fd);
	for (int i = 0; i < streams; i++)
		if (jobs[i].err)
			return errno = jobs[i].err, fail(write ? "write" : "read");
	printf("%s_%d %.2f GB/s\n", write ? "write" : "read", streams, (double)bytes / (t1 - t0) / 1e9);
	return 0;
}

static int bench_cycle(const char *dir, long n, int tensor)
{
	char path[4096];
	double t0, t1;

	t0 = bench_now();
	for (long i = 0; i < n; i++) {
		int fd;
		snprintf(path, sizeof(path), "%s/c%ld", dir, i);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			return fail(path);
		if (tensor) {
			if (fsetxattr(fd, "user.tensor.dtype", "f32", 3, 0) < 0 ||
			    fsetxattr(fd, "user.tensor.shape", "[1024]", 6, 0) < 0)
				return close(fd), fail("setxattr");
		} else if (ftruncate(fd, 4096) < 0) {
			return close(fd), fail("ftruncate");
		}
		close(fd);
		if (unlink(path) < 0)
			return fail("unlink");
	}
	t1 = bench_now();
	printf("cycle %.0f per_s\n", (double)n / (t1 - t0));
	return 0;
}

struct q_job {
	const char *sock;
	long n;
	int id, tensor, err;
	double *lat;          /* n round trips' latencies, seconds */
};

static int roundtrip(redisContext *c, const char *cmd, const char *reply)
{
	redisReply *r = redisCommand(c, "LPUSH %s %s", "tensor_lifecycle", cmd);
	int ok;

	if (!r)
		return -EIO;
	freeReplyObject(r);
	r = redisCommand(c, "BRPOP %s 5", reply);
	ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	     strstr(r->element[1]->str, "\"ok\":true");
	if (r && !ok)
		fprintf(stderr, "tfsbench: reply: %s\n", r->elements == 2 ? r->element[1]->str : "(timeout)");
	freeReplyObject(r);
	return ok ? 0 : -EIO;
}

static void *q_run(void *arg)
{
	struct q_job *j = arg;
	redisContext *c = redisConnectUnix(j->sock);
	char cmd[512], reply[64];
	static const char *ops[] = { "create", "get", "delete", "delete" };

	if (!c || c->err) {
		j->err = EIO;
		redisFree(c);
		return NULL;
	}
	snprintf(reply, sizeof(reply), "bench:reply:%d", j->id);
	for (long i = 0; i < j->n; i++) {
		/* create, get, delete (the holder), delete (the name): 4 round trips a tensor. */
		const char *op = ops[i % 4];
		double t0 = bench_now();
		int rc;
		if (j->tensor) {
			snprintf(cmd, sizeof(cmd), "{\"op\":\"%s\",\"name\":\"q%d_%ld\",\"dtype\":\"f32\","
				 "\"shape\":[256],\"pid\":%d,\"id\":\"%ld\",\"reply\":\"%s\"}",
				 op, j->id, i / 4, (int)getpid(), i, reply);
			if (i % 4 == 3)  /* the name's own reference: no pid */
				snprintf(cmd, sizeof(cmd), "{\"op\":\"delete\",\"name\":\"q%d_%ld\","
					 "\"id\":\"%ld\",\"reply\":\"%s\"}", j->id, i / 4, i, reply);
			rc = roundtrip(c, cmd, reply);
		} else {
			redisReply *r = redisCommand(c, "LPUSH %s {\"ok\":true}", reply);
			freeReplyObject(r);
			r = redisCommand(c, "BRPOP %s 5", reply);
			rc = r && r->type == REDIS_REPLY_ARRAY ? 0 : -EIO;
			freeReplyObject(r);
		}
		if (rc) {
			j->err = EIO;
			break;
		}
		j->lat[i] = bench_now() - t0;
	}
	redisFree(c);
	return NULL;
}

static int bench_queue(const char *sock, long n, int clients, int tensor)
{
	struct q_job jobs[64];
	pthread_t th[64];
	double t0, t1, *lat;
	long per = n / clients / 4 * 4;

	if (clients < 1 || clients > 64 || per < 4)
		return errno = EINVAL, fail("clients");
	lat = calloc((size_t)(per * clients), sizeof(double));
	if (!lat)
		return fail("calloc");
	t0 = bench_now();
	for (int i = 0; i < clients; i++) {
		jobs[i] = (struct q_job){ .sock = sock, .n = per, .id = i, .tensor = tensor,
					  .lat = lat + per * i };
		pthread_create(&th[i], NULL, q_run, &jobs[i]);
	}
	for (int i = 0; i < clients; i++)
		pthread_join(th[i], NULL);
	t1 = bench_now();
	for (int i = 0; i < clients; i++)
		if (jobs[i].err) {
			free(lat);
			return errno = EIO, fail("queue round trip");
		}
	qsort(lat, (size_t)(per * clients), sizeof(double), bench_cmp_double);
	printf("queue_%d %.0f per_s p50 %.0f us p99 %.0f us\n", clients,
	       (double)(per * clients) / (t1 - t0), lat[per * clients / 2] * 1e6,
	       lat[per * clients * 99 / 100] * 1e6);
	free(lat);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "io") == 0)
		return bench_io(argv[2], strtoull(argv[3], NULL, 0), atoi(argv[4]),
				strcmp(argv[5], "write") == 0);
	if (argc == 5 && strcmp(argv[1], "cycle") == 0)
		return bench_cycle(argv[2], atol(argv[3]), strcmp(argv[4], "tensor") == 0);
	if (argc == 6 && strcmp(argv[1], "queue") == 0)
		return bench_queue(argv[2], atol(argv[3]), atoi(argv[4]), strcmp(argv[5], "tensor") == 0);
	fprintf(stderr, "usage: see the comment at the top of tests/bench/tfsbench.c\n");
	return 2;
}
