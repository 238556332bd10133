/* Unit tests of the handle socket's messages (core/fd_request.h) on raw bytes: the forms
 * the client writes are read back; partial, oversize and malformed requests and replies
 * are told apart and refuse without writing the output. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fd_request.h"

static int fails;

#define CHECK(cond, ...)                                           \
	do {                                                       \
		int ok_ = !!(cond);                                \
		printf(ok_ ? "ok - " : "not ok - ");               \
		printf(__VA_ARGS__);                               \
		printf("\n");                                      \
		fails += !ok_;                                     \
	} while (0)

static struct tfs_fdreq rq;

static int parse(const char *s)
{
	memset(&rq, 0x5a, sizeof(rq));
	return tfs_fdreq_parse(s, strlen(s), &rq);
}

static int untouched(void)
{
	return rq.access == 0x5a5a5a5a;
}

static int rep(const char *s, uint64_t *b)
{
	*b = 77;
	return tfs_fdrep_parse(s, strlen(s), b);
}

static uint64_t cb, cs[TFS_FDREP_FDS_MAX];
static int cn;

static int crep(const char *s)
{
	cb = 77;
	cn = 77;
	memset(cs, 0x5a, sizeof(cs));
	return tfs_fdrep_parse_chunks(s, strlen(s), &cb, cs, &cn);
}

static int cuntouched(void)
{
	return cb == 77 && cn == 77 && cs[0] == 0x5a5a5a5a5a5a5a5aull;
}

/* Replies of several descriptors (a VMM tensor grown in place): the one-descriptor reply
 * stays the same bytes, the longer line carries each piece's size. */
static void test_chunks(void)
{
	static const uint64_t two[2] = { 2097152, 4194304 };
	uint64_t many[TFS_FDREP_FDS_MAX], zero[2] = { 2097152, 0 };
	char buf[TFS_FDREP_MAX], ref[TFS_FDREP_MAX + 2];    /* ref: the longest reply and " 1" */
	int n;

	n = tfs_fdrep_format_chunks(buf, 0, 123, NULL, 1);
	CHECK(n == 6 && !memcmp(buf, "0 123\n", 6) && n == tfs_fdrep_format(ref, 0, 123) &&
	      !memcmp(buf, ref, (size_t)n), "one descriptor: the same bytes as before");
	CHECK(crep("0 4096\n") == 0 && cb == 4096 && cn == 1 && cs[0] == 0,
	      "the one-descriptor reply: one, size not said");
	CHECK(crep("0 5000000 2097152 4194304\n") == 0 && cb == 5000000 && cn == 2 &&
	      cs[0] == 2097152 && cs[1] == 4194304, "two descriptors with their sizes");
	CHECK(crep("-13\n") == -EACCES && cuntouched(), "an error, nothing written");
	CHECK(crep("0 5 7\n") == -EBADMSG && cuntouched(), "one size alone is not a form");
	CHECK(crep("0 5 7 0\n") == -EBADMSG && crep("0 5 07 8\n") == -EBADMSG &&
	      crep("0 5 7  8\n") == -EBADMSG && crep("0 5 7 8 \n") == -EBADMSG &&
	      crep("0 5 7 x\n") == -EBADMSG && crep("0 5 7 8") == -EBADMSG &&
	      crep("1 5 7 8\n") == -EBADMSG && crep("0 5 7 99999999999999999999\n") == -EBADMSG &&
	      crep("0 5 7 18446744073709551616\n") == -EBADMSG && cuntouched(),
	      "malformed sizes: zero, leading zero, double or trailing space, junk, no "
	      "newline, not 0, past UINT64_MAX; nothing written");
	CHECK(crep("0 5 7 18446744073709551615\n") == 0 && cn == 2 &&
	      cs[1] == UINT64_MAX, "UINT64_MAX is a size");
	for (int i = 0; i < TFS_FDREP_FDS_MAX; i++)
		many[i] = UINT64_MAX - (uint64_t)i;
	n = tfs_fdrep_format_chunks(buf, 0, UINT64_MAX, many, TFS_FDREP_FDS_MAX);
	CHECK(n > 0 && n < TFS_FDREP_MAX && buf[n - 1] == '\n' &&
	      tfs_fdrep_parse_chunks(buf, (size_t)n, &cb, cs, &cn) == 0 &&
	      cn == TFS_FDREP_FDS_MAX && cb == UINT64_MAX && cs[15] == UINT64_MAX - 15,
	      "the longest reply fits TFS_FDREP_MAX and round-trips");
	memcpy(ref, buf, (size_t)n - 1);
	memcpy(ref + n - 1, " 1\n", 3);
	CHECK(tfs_fdrep_parse_chunks(ref, (size_t)n + 2, &cb, cs, &cn) == -EBADMSG,
	      "one size more than TFS_FDREP_FDS_MAX is refused");
	CHECK(tfs_fdrep_format_chunks(buf, 0, 1, many, TFS_FDREP_FDS_MAX + 1) == -EINVAL &&
	      tfs_fdrep_format_chunks(buf, 0, 1, many, 0) == -EINVAL &&
	      tfs_fdrep_format_chunks(buf, 0, 1, zero, 2) == -EINVAL,
	      "format refuses too many, none, a size 0");
	n = tfs_fdrep_format_chunks(buf, 0, 6291456, two, 2);
	CHECK(n > 0 && !memcmp(buf, "0 6291456 2097152 4194304\n", (size_t)n),
	      "format of two: the bytes");
	CHECK(tfs_fdrep_parse(buf, (size_t)n, &cb) == -EBADMSG,
	      "an older client's parser refuses the longer line");
	n = tfs_fdrep_format_chunks(buf, -EACCES, 0, NULL, 0);
	CHECK(n == 4 && !memcmp(buf, "-13\n", 4), "an error: the same bytes as before");
}

int main(void)
{
	static char big[TFS_FDREQ_MAX + 16];
	char buf[TFS_FDREQ_MAX + 1];
	uint64_t b;
	int n;

	CHECK(parse("r a/b/t1\n") == 0 && rq.access == TFS_FDREQ_READ &&
	      !strcmp(rq.path, "a/b/t1") && rq.used == 9, "a read request");
	CHECK(parse("w t\nr u\n") == 0 && rq.access == TFS_FDREQ_WRITE && !strcmp(rq.path, "t") &&
	      rq.used == 4, "a write request, the next one left in the buffer");
	CHECK(parse("r a/b") == -EAGAIN && untouched(), "no newline yet: wait for more");
	CHECK(parse("") == -EAGAIN, "nothing yet: wait");
	CHECK(parse("x a\n") == -EINVAL && untouched(), "unknown access");
	CHECK(parse("rw a\n") == -EINVAL, "two letters of access");
	CHECK(parse("r \n") == -EINVAL, "an empty path");
	CHECK(parse("r\nw a\n") == 0 && rq.access == TFS_FDREQ_READ && rq.path[0] == '\0' &&
	      rq.used == 2, "a read request by descriptor, the next one left in the buffer");
	CHECK(parse("w\n") == 0 && rq.access == TFS_FDREQ_WRITE && rq.path[0] == '\0',
	      "a write request by descriptor");
	CHECK(parse("x\n") == -EINVAL && untouched() && parse("\n") == -EINVAL && untouched(),
	      "by descriptor: unknown or no access");
	CHECK(parse("r") == -EAGAIN && untouched(), "one letter: wait for the newline");
	CHECK(parse("r /a\n") == -EINVAL, "a leading slash");
	CHECK(parse("r a//b\n") == -EINVAL && parse("r a/\n") == -EINVAL, "an empty component");
	CHECK(parse("r ../etc/passwd\n") == -EINVAL && parse("r a/../b\n") == -EINVAL &&
	      parse("r a/./b\n") == -EINVAL && parse("r .\n") == -EINVAL, "dot components");
	CHECK(parse("r ...\n") == 0 && parse("r .a/..b\n") == 0, "names that only begin with dots");
	CHECK(tfs_fdreq_parse("r a\0b\n", 6, &rq) == -EINVAL, "a NUL in the path");
	memset(big, 'a', sizeof(big));
	big[0] = 'r';
	big[1] = ' ';
	for (int i = 2; i < (int)sizeof(big); i += 200)
		big[i] = '/';
	big[2] = 'a';
	CHECK(tfs_fdreq_parse(big, TFS_FDREQ_MAX, &rq) == -ENAMETOOLONG,
	      "TFS_FDREQ_MAX bytes without a newline: too long, not wait");
	CHECK(tfs_fdreq_parse(big, sizeof(big), &rq) == -ENAMETOOLONG,
	      "a newline past the bound is not looked for");
	memset(big, 'a', sizeof(big));
	big[1] = ' ';
	for (int i = 2; i < TFS_FDREQ_MAX - 1; i += 256)
		big[i + 255] = '/';
	big[TFS_FDREQ_MAX - 1] = '\n';
	CHECK(tfs_fdreq_parse(big, TFS_FDREQ_MAX, &rq) == -EINVAL || rq.used == TFS_FDREQ_MAX,
	      "the longest line is parsed (or refused on its grammar), never overrun");
	memset(big, 'a', 300);
	memcpy(big, "r ", 2);
	big[300] = '\n';
	CHECK(tfs_fdreq_parse(big, 301, &rq) == -EINVAL, "a component over 255 bytes");

	n = tfs_fdreq_format(buf, sizeof(buf), TFS_FDREQ_WRITE, "a/b/c");
	CHECK(n == 8 && !memcmp(buf, "w a/b/c\n", 8), "format writes the request");
	CHECK(tfs_fdreq_parse(buf, (size_t)n, &rq) == 0 && !strcmp(rq.path, "a/b/c"),
	      "and the parser reads it back");
	n = tfs_fdreq_format(buf, sizeof(buf), TFS_FDREQ_WRITE, NULL);
	CHECK(n == 2 && !memcmp(buf, "w\n", 2) && tfs_fdreq_parse(buf, 2, &rq) == 0 &&
	      rq.access == TFS_FDREQ_WRITE && rq.path[0] == '\0', "format by descriptor, read back");
	CHECK(tfs_fdreq_format(buf, sizeof(buf), TFS_FDREQ_READ, "") == -EINVAL,
	      "an empty path is not the request by descriptor");
	CHECK(tfs_fdreq_format(buf, sizeof(buf), TFS_FDREQ_READ, "../x") == -EINVAL &&
	      tfs_fdreq_format(buf, sizeof(buf), 3, "x") == -EINVAL &&
	      tfs_fdreq_format(buf, 4, TFS_FDREQ_READ, "xy") == -EINVAL,
	      "format refuses bad paths, access and small buffers");

	CHECK(rep("0 4096\n", &b) == 0 && b == 4096, "a reply with the size");
	CHECK(rep("-13\n", &b) == -EACCES && b == 77, "EACCES");
	CHECK(rep("-0\n", &b) == -EBADMSG && rep("-4096\n", &b) == -EBADMSG,
	      "errnos out of range");
	CHECK(rep("0\n", &b) == -EBADMSG && rep("1 5\n", &b) == -EBADMSG &&
	      rep("0 \n", &b) == -EBADMSG && rep("0 5", &b) == -EBADMSG &&
	      rep("0 05\n", &b) == -EBADMSG && rep("00 5\n", &b) == -EBADMSG &&
	      rep("0 5 \n", &b) == -EBADMSG && rep("0 99999999999999999999\n", &b) == -EBADMSG,
	      "malformed replies");
	CHECK(b == 77, "which leave the size alone");
	n = tfs_fdrep_format(buf, 0, 123);
	CHECK(tfs_fdrep_parse(buf, (size_t)n, &b) == 0 && b == 123, "format 0 round-trips");
	n = tfs_fdrep_format(buf, -EACCES, 0);
	CHECK(tfs_fdrep_parse(buf, (size_t)n, &b) == -EACCES, "format -EACCES round-trips");
	test_chunks();
	printf("# %d failed\n", fails);
	return fails ? 1 : 0;
}
