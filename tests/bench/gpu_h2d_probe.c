/* Where a warm load's time goes: page-cache reads into pinned memory, pinned
 * host-to-device copies, and both at once, each with T threads, over one file.
 *   gpu_h2d_probe FILE THREADS CHUNK_MB MODE   (MODE: read | h2d | pipe | mmcpy | mmfault)
 * read: pread into each thread's pinned buffer; h2d: cudaMemcpyAsync of each thread's
 * pinned buffer to the device; pipe: both, double-buffered per thread (what a load
 * does); mmcpy: memcpy from a mapping of the file (populated before the clock) into
 * pinned memory, then the copy; mmfault: the same, the mapping faulted in by the copy.
 * Prints GB/s over the file's size. Build: nvcc -O2 -o gpu_h2d_probe gpu_h2d_probe.c -lpthread */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int fd, nthr, mode;
static size_t chunk, fsize, nchunks;
static char *dev, *map;
static volatile size_t next;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

struct thr {
	char *buf[2];
	cudaStream_t s;
	cudaEvent_t ev[2];
};
static struct thr thrs[64];

static void setup(struct thr *t)
{
	cudaStreamCreateWithFlags(&t->s, cudaStreamNonBlocking);
	for (int i = 0; i < 2; i++) {
		if (cudaHostAlloc((void **)&t->buf[i], chunk, 0)) {
			fprintf(stderr, "cudaHostAlloc failed\n");
			exit(1);
		}
		memset(t->buf[i], 1, chunk);
		cudaEventCreateWithFlags(&t->ev[i], cudaEventDisableTiming);
	}
}

static void *worker(void *arg)
{
	struct thr *t = arg;
	char **buf = t->buf;
	cudaStream_t s = t->s;
	cudaEvent_t *ev = t->ev;
	int b = 0;

	cudaSetDevice(0);
	for (int i = 0; i < 2; i++)
		cudaEventRecord(ev[i], s);
	for (;;) {
		size_t k = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
		size_t off, len;

		if (k >= nchunks)
			break;
		off = k * chunk;
		len = fsize - off < chunk ? fsize - off : chunk;
		cudaEventSynchronize(ev[b]);
		if (mode == 0 || mode == 2) {
			if (pread(fd, buf[b], len, off) != (ssize_t)len) {
				perror("pread");
				exit(1);
			}
		} else if (mode >= 3) {
			memcpy(buf[b], map + off, len);
		}
		if (mode >= 1) {
			cudaMemcpyAsync(dev + off % ((size_t)4 << 30), buf[b], len,
					cudaMemcpyHostToDevice, s);
			cudaEventRecord(ev[b], s);
		}
		b ^= 1;
	}
	cudaStreamSynchronize(s);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *modes[] = { "read", "h2d", "pipe", "mmcpy", "mmfault" };
	pthread_t th[64];
	struct stat st;
	double t0, t1;

	if (argc != 5)
		return 2;
	nthr = atoi(argv[2]);
	chunk = (size_t)atoi(argv[3]) << 20;
	for (mode = 0; mode < 5 && strcmp(argv[4], modes[mode]); mode++)
		;
	if (mode == 5 || nthr < 1 || nthr > 64 || !chunk)
		return 2;
	if ((fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st))
		return perror(argv[1]), 1;
	fsize = st.st_size;
	nchunks = (fsize + chunk - 1) / chunk;
	if (cudaMalloc((void **)&dev, ((size_t)4 << 30) + chunk))
		return fprintf(stderr, "cudaMalloc\n"), 1;
	if (mode >= 3 && (map = mmap(NULL, fsize, PROT_READ, MAP_SHARED | (mode == 3 ? MAP_POPULATE : 0), fd, 0)) == MAP_FAILED)
		return perror("mmap"), 1;
	/* the threads' buffers and streams made before the clock starts */
	for (int i = 0; i < nthr; i++)
		setup(&thrs[i]);
	cudaDeviceSynchronize();
	next = 0;
	t0 = now();
	for (int i = 0; i < nthr; i++)
		pthread_create(&th[i], NULL, worker, &thrs[i]);
	for (int i = 0; i < nthr; i++)
		pthread_join(th[i], NULL);
	t1 = now();
	printf("%-5s threads %2d chunk %3zu MiB: %6.2f GB/s (%.3f s, %.2f GB)\n", modes[mode], nthr, chunk >> 20,
	       fsize / (t1 - t0) / 1e9, t1 - t0, fsize / 1e9);
	return 0;
}
