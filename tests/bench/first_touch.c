/* What a new shared-memory object costs a process before its first bytes land (issue 38,
 * RESULTS-small.md): 64 KiB copies into a 1 MiB object mapped once and reused, and into a
 * new object each time (made, mapped with MAP_POPULATE as libtensorfs maps small objects,
 * written, unmapped), as a tensor of its own per create costs the daemon and each client.
 *
 *   first_touch [ROUNDS]      prints three lines: "<what> <microseconds>"
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define OBJ (1u << 20)
#define PIECE (64u << 10)

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	static char src[PIECE];
	double t, copy_new = 0, whole_new = 0;
	char *p;
	int fd;

	if (rounds < 1)
		return fprintf(stderr, "usage: first_touch [ROUNDS]\n"), 2;
	memset(src, 1, sizeof(src));
	fd = memfd_create("first_touch", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, OBJ))
		return perror("memfd"), 1;
	p = mmap(NULL, OBJ, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	for (unsigned i = 0; i < OBJ / PIECE; i++)
		memcpy(p + i * PIECE, src, PIECE);
	t = now_us();
	for (int r = 0; r < rounds * 16; r++)
		memcpy(p + (unsigned)(r % (OBJ / PIECE)) * PIECE, src, PIECE);
	printf("copy_64k_warm_us %.2f\n", (now_us() - t) / (rounds * 16));
	munmap(p, OBJ);
	close(fd);
	for (int r = 0; r < rounds; r++) {
		double t0 = now_us(), t1;

		fd = memfd_create("first_touch", MFD_CLOEXEC);
		if (fd < 0 || posix_fallocate(fd, 0, OBJ))
			return perror("memfd"), 1;
		p = mmap(NULL, OBJ, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
		if (p == MAP_FAILED)
			return perror("mmap"), 1;
		t1 = now_us();
		memcpy(p, src, PIECE);
		copy_new += now_us() - t1;
		munmap(p, OBJ);
		close(fd);
		whole_new += now_us() - t0;
	}
	printf("copy_64k_new_object_us %.2f\n", copy_new / rounds);
	printf("new_object_make_map_copy_unmap_us %.2f\n", whole_new / rounds);
	return 0;
}
