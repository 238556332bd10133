/* Another node's tensors pulled into tensors of this node that exist already (the pull
 * ioctl, core/pull_ioctl.h, as tfs_copy issues it: THREADS threads, 16 MiB each), so that
 * the destination's memory is not fresh: ucx_bench.sh's "warm destination" row, the
 * network path without the first touch of new memory that every replica pays (and that
 * ucx_perftest, reusing one buffer, never does). Also what a replica refreshed in place
 * costs (weights updated at the source, pulled again).
 *
 *   pull_bench MOUNT SRC_DIR DEST_DIR NAME... [-j THREADS]
 *
 * SRC_DIR and DEST_DIR are under MOUNT (DEST_DIR's tensors this node's, SRC_DIR's another
 * node's); each NAME is in both, of the same size. Prints "<bytes> <seconds>". Exit 1 on
 * any failure, with the reason. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pull_ioctl.h"

#define PIECE (16ull << 20)
#define MAXT 64
#define MAXN 4096

static struct item {
	char rel[TFS_PULL_PATH + 1];
	char dst[4096];
	uint64_t ino, bytes;
} items[MAXN];
static int nitems, next_item, failed;
static uint64_t next_off;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	struct tfs_pull_req *q = calloc(1, sizeof(*q));

	(void)arg;
	for (;;) {
		struct item *it = NULL;
		uint64_t off = 0;
		int fd;

		pthread_mutex_lock(&mu);
		while (next_item < nitems && next_off >= items[next_item].bytes) {
			next_item++;
			next_off = 0;
		}
		if (!failed && q && next_item < nitems) {
			it = &items[next_item];
			off = next_off;
			next_off += PIECE;
		}
		pthread_mutex_unlock(&mu);
		if (!it)
			break;
		q->ino = it->ino;
		q->src_off = q->dst_off = off;
		q->len = it->bytes - off < PIECE ? it->bytes - off : PIECE;
		q->pathlen = (uint32_t)strlen(it->rel);
		memcpy(q->path, it->rel, q->pathlen);
		fd = open(it->dst, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, TFS_IOC_PULL, q)) {
			fprintf(stderr, "pull_bench: %s at %llu: %s\n", it->dst,
				(unsigned long long)off, strerror(errno));
			pthread_mutex_lock(&mu);
			failed = 1;
			pthread_mutex_unlock(&mu);
		}
		if (fd >= 0)
			close(fd);
	}
	free(q);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 8, nt = 0;
	pthread_t th[MAXT];
	uint64_t total = 0;
	size_t mlen;
	double t0;

	if (argc > 2 && !strcmp(argv[argc - 2], "-j")) {
		threads = atoi(argv[argc - 1]);
		argc -= 2;
	}
	if (argc < 5 || threads < 1 || threads > MAXT || argc - 4 > MAXN) {
		fprintf(stderr, "usage: pull_bench MOUNT SRC_DIR DEST_DIR NAME... [-j THREADS]\n");
		return 2;
	}
	mlen = strlen(argv[1]);
	for (int i = 4; i < argc; i++) {
		struct item *it = &items[nitems++];
		char src[4096];
		struct stat ss, ds;

		snprintf(src, sizeof(src), "%s/%s", argv[2], argv[i]);
		snprintf(it->dst, sizeof(it->dst), "%s/%s", argv[3], argv[i]);
		if (stat(src, &ss) || stat(it->dst, &ds) || ss.st_size != ds.st_size ||
		    strncmp(src, argv[1], mlen) || src[mlen] != '/' ||
		    strlen(src + mlen + 1) > TFS_PULL_PATH) {
			fprintf(stderr, "pull_bench: %s and %s: not two tensors of one size under %s\n",
				src, it->dst, argv[1]);
			return 1;
		}
		snprintf(it->rel, sizeof(it->rel), "%s", src + mlen + 1);
		it->ino = (uint64_t)ss.st_ino;
		it->bytes = (uint64_t)ss.st_size;
		total += it->bytes;
	}
	t0 = now();
	for (; nt < threads; nt++)
		if (pthread_create(&th[nt], NULL, worker, NULL))
			break;
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	if (failed || nt == 0)
		return 1;
	printf("%llu %.6f\n", (unsigned long long)total, now() - t0);
	return 0;
}
