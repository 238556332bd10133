/* Small tensors by the thousand (issue 38): create, write and unlink of tensors of a few
 * KiB, from THREADS threads at once, through the library's queue (each thread its own
 * client, BATCH tensors per round trip) or through files (the mount, or tmpfs as the
 * baseline). Prints one line: "<what> <tensors per second> per_s".
 *
 *   small_bench lib URL N THREADS BATCH BYTES    tfs_create_many (the handle in the
 *                                                answer) -> tfs_write -> tfs_close ->
 *                                                tfs_unlink_many, BATCH at a time;
 *                                                BATCH 0: one at a time without them,
 *                                                tfs_create -> tfs_get -> tfs_write ->
 *                                                tfs_close -> tfs_delete (the hold) ->
 *                                                tfs_delete (the name)
 *   small_bench files DIR N THREADS BYTES        open(O_CREAT) -> pwrite -> close -> unlink
 *
 * N is the total number of tensors, shared out between the threads. SMALL_NODE: the
 * daemon's --node, when it is not this host's name. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchutil.h"
#include "tensorfs.h"

struct job {
	int k;
	long n;
	int batch;
	int old;                     /* lib: tfs_create, tfs_get, tfs_delete x 2 per tensor */
	size_t bytes;
	const char *where;
	int rc;
	double phase[4];             /* files: seconds in open, pwrite, close, unlink */
};

static void *lib_thread(void *arg)
{
	struct job *j = arg;
	struct tfs_create_req *reqs = calloc((size_t)j->batch, sizeof(*reqs));
	tfs_tensor **out = calloc((size_t)j->batch, sizeof(*out));
	char (*names)[64] = calloc((size_t)j->batch, 64);
	const char **np = calloc((size_t)j->batch, sizeof(*np));
	int64_t shape[1] = { (int64_t)j->bytes };
	char *buf = malloc(j->bytes);
	tfs_client *c = NULL;
	int rc;

	if (!reqs || !out || !names || !np || !buf) {
		j->rc = -ENOMEM;
		goto out;
	}
	memset(buf, 0x5a, j->bytes);
	if ((rc = tfs_connect(j->where, 30000, &c)) ||
	    (getenv("SMALL_NODE") && (rc = tfs_client_set_node(c, getenv("SMALL_NODE"))))) {
		j->rc = rc;
		goto out;
	}
	for (long done = 0; j->old && done < j->n; done++) {
		tfs_tensor *t;

		snprintf(names[0], 64, "sb%d_%d_%ld", (int)getpid(), j->k, done);
		if ((rc = tfs_create(c, names[0], TFS_U8, 1, shape, -1)) ||
		    (rc = tfs_get(c, names[0], &t))) {
			fprintf(stderr, "create/get: %s\n", tfs_errmsg());
			j->rc = rc;
			goto out;
		}
		rc = tfs_write(t, 0, buf, j->bytes);
		tfs_close(t);
		if (rc || (rc = tfs_delete(c, names[0])) || (rc = tfs_delete(c, names[0]))) {
			fprintf(stderr, "write/delete: %s\n", tfs_errmsg());
			j->rc = rc;
			goto out;
		}
	}
	for (long done = 0; !j->old && done < j->n; ) {
		size_t b = (size_t)(j->n - done < j->batch ? j->n - done : j->batch);

		for (size_t i = 0; i < b; i++) {
			snprintf(names[i], 64, "sb%d_%d_%ld", (int)getpid(), j->k, done + (long)i);
			np[i] = names[i];
			reqs[i] = (struct tfs_create_req){ names[i], TFS_U8, 1, shape, -1 };
		}
		if ((rc = tfs_create_many(c, b, reqs, NULL, out))) {
			fprintf(stderr, "create: %s\n", tfs_errmsg());
			j->rc = rc;
			goto out;
		}
		for (size_t i = 0; i < b; i++) {
			rc = tfs_write(out[i], 0, buf, j->bytes);
			tfs_close(out[i]);
			if (rc) {
				fprintf(stderr, "write: %s\n", tfs_errmsg());
				j->rc = rc;
				goto out;
			}
		}
		if ((rc = tfs_unlink_many(c, b, np, NULL))) {
			fprintf(stderr, "unlink: %s\n", tfs_errmsg());
			j->rc = rc;
			goto out;
		}
		done += (long)b;
	}
out:
	tfs_disconnect(c);
	free(reqs);
	free(out);
	free(names);
	free(np);
	free(buf);
	return NULL;
}

static void *files_thread(void *arg)
{
	struct job *j = arg;
	char dir[4096], path[4200];
	char *buf = malloc(j->bytes);
	int fd;

	if (!buf) {
		j->rc = -ENOMEM;
		return NULL;
	}
	memset(buf, 0x5a, j->bytes);
	snprintf(dir, sizeof(dir), "%s/sb%d_%d", j->where, (int)getpid(), j->k);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		j->rc = -errno;
		goto out;
	}
	for (long i = 0; i < j->n; i++) {
		double t[5];

		snprintf(path, sizeof(path), "%s/%ld", dir, i);
		t[0] = bench_now();
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		t[1] = bench_now();
		if (fd < 0 || pwrite(fd, buf, j->bytes, 0) != (ssize_t)j->bytes) {
			j->rc = -errno;
			perror(path);
			if (fd >= 0)
				close(fd);
			goto out;
		}
		t[2] = bench_now();
		if (close(fd) || (t[3] = bench_now(), unlink(path))) {
			j->rc = -errno;
			perror(path);
			goto out;
		}
		t[4] = bench_now();
		for (int p = 0; p < 4; p++)
			j->phase[p] += t[p + 1] - t[p];
	}
	rmdir(dir);
out:
	free(buf);
	return NULL;
}

static int run(const char *what, const char *where, long n, int threads, int batch,
	       size_t bytes, void *(*fn)(void *))
{
	pthread_t th[256];
	struct job jobs[256];
	double t0, dt;
	int rc = 0;

	if (threads < 1 || threads > 256 || n < threads || batch < 0 || batch > TFS_BATCH_MAX ||
	    bytes < 1)
		return fprintf(stderr, "bad arguments\n"), 2;
	t0 = bench_now();
	for (int k = 0; k < threads; k++) {
		jobs[k] = (struct job){ k, n / threads + (k < n % threads), batch, batch == 0,
					bytes, where, 0, { 0 } };
		if (!batch)
			jobs[k].batch = 1;
		pthread_create(&th[k], NULL, fn, &jobs[k]);
	}
	for (int k = 0; k < threads; k++) {
		pthread_join(th[k], NULL);
		if (jobs[k].rc)
			rc = 1;
	}
	dt = bench_now() - t0;
	if (rc)
		return fprintf(stderr, "%s: failed\n", what), 1;
	printf("%s %.0f per_s", what, (double)n / dt);
	if (fn == files_thread) {
		/* Where each tensor's time goes, as its thread saw it: mean microseconds. */
		static const char *nm[4] = { "open", "pwrite", "close", "unlink" };

		for (int p = 0; p < 4; p++) {
			double s = 0;

			for (int k = 0; k < threads; k++)
				s += jobs[k].phase[p];
			printf(" %s_us %.1f", nm[p], s / (double)n * 1e6);
		}
	}
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "lib") == 0)
		return run("lib", argv[2], atol(argv[3]), atoi(argv[4]), atoi(argv[5]),
			   (size_t)atol(argv[6]), lib_thread);
	if (argc == 6 && strcmp(argv[1], "files") == 0)
		return run("files", argv[2], atol(argv[3]), atoi(argv[4]), 1,
			   (size_t)atol(argv[5]), files_thread);
	fprintf(stderr, "usage: small_bench lib URL N THREADS BATCH BYTES\n"
		"       small_bench files DIR N THREADS BYTES\n");
	return 2;
}
