/* Maps a host-backend tensor from its xattrs, as another process would, without the
 * client library: reads user.tensor.ipc_handle ("TFSHOST1" + the object's path in
 * /dev/shm) and ipc_offset, open + mmap. Used by the tests to check the handle gives the file's bytes.
 *
 *   shm_map PATH dump            write the mapped bytes to stdout
 *   shm_map PATH fill BYTE       set every byte through the mapping
 * Exits 0, or 1 with a message. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "shm_map: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	char h[65] = { 0 }, offs[32] = { 0 }, sizes[32] = { 0 };
	uint64_t off, bytes;
	uint8_t *p;
	int fd, rc = 1;

	if (argc < 3)
		return fprintf(stderr, "usage: shm_map PATH dump|fill BYTE\n"), 2;
	if (getxattr(argv[1], "user.tensor.ipc_handle", h, 64) != 64)
		return die("ipc_handle");
	if (memcmp(h, "TFSHOST1", 8) != 0)
		return errno = EPROTO, die("not a host-backend handle");
	if (getxattr(argv[1], "user.tensor.ipc_offset", offs, sizeof(offs) - 1) < 0 ||
	    getxattr(argv[1], "user.tensor.bytes", sizes, sizeof(sizes) - 1) < 0)
		return die("ipc_offset/bytes");
	off = strtoull(offs, NULL, 10);
	bytes = strtoull(sizes, NULL, 10);
	/* A reader may hold only read permission on the object: ask for no more. */
	int rw = strcmp(argv[2], "fill") == 0;
	char path[80];

	snprintf(path, sizeof(path), "/dev/shm%s", h + 8);
	fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_NOFOLLOW);
	if (fd < 0)
		return die(path);
	p = mmap(NULL, off + bytes, rw ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return die("mmap");
	}
	if (strcmp(argv[2], "dump") == 0) {
		rc = fwrite(p + off, 1, bytes, stdout) == bytes ? 0 : die("write");
	} else if (strcmp(argv[2], "fill") == 0 && argc > 3) {
		memset(p + off, atoi(argv[3]), bytes);
		rc = 0;
	}
	munmap(p, off + bytes);
	close(fd);
	return rc;
}
