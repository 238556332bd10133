/* What this machine charges for the first write into fresh shared memory, which every
 * replica pays at the puller (its tensors are new memory) and ucx_perftest, reusing one
 * buffer, never does: a shared-memory object of MB MiB, mapped and populated
 * (MADV_POPULATE_WRITE, as the daemon prefaults a pull's destination), then written twice
 * by one thread (memcpy from a buffer). On bare metal both writes run at memory speed;
 * on some virtual machines the first costs the host's fault per page (ucx_bench.sh prints
 * both, RESULTS-ucx.md).
 *
 *   fresh_write [MB]       prints "populate S first_write GB/s second_write GB/s"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t n = (size_t)(argc > 1 ? atoi(argv[1]) : 256) << 20;
	char *src = malloc(n), *p;
	double t0, t1, t2, t3;
	int fd;

	if (!n || !src)
		return 1;
	memset(src, 7, n);
	fd = memfd_create("fresh_write", 0);
	if (fd < 0 || ftruncate(fd, (off_t)n))
		return 1;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	t0 = now();
	(void)madvise(p, n, MADV_POPULATE_WRITE);
	t1 = now();
	memcpy(p, src, n);
	t2 = now();
	memcpy(p, src + 1, n - 1);
	t3 = now();
	printf("populate %.3f first_write %.2f second_write %.2f\n", t1 - t0,
	       (double)n / (t2 - t1) / 1e9, (double)n / (t3 - t2) / 1e9);
	return 0;
}
