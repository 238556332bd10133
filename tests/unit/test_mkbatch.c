/* core/mkbatch.c: the batch create request's bytes, built and parsed without a mount. */
#include <errno.h>
#include <string.h>

#include "mkbatch.h"
#include "tap.h"

static struct tfs_shape shape(int ndim, uint64_t a, uint64_t b)
{
	struct tfs_shape s = { .ndim = ndim };

	s.dims[0] = a;
	s.dims[1] = b;
	return s;
}

int main(void)
{
	static struct tfs_mk_req q, r;
	struct tfs_shape s2 = shape(2, 4096, 1024), s0 = shape(0, 0, 0), big = shape(17, 1, 1);
	struct tfs_mk_entry e;
	size_t used, used2, off;
	int rc, n;

	ok(sizeof(q) == 16376 && _IOC_SIZE(TFS_IOC_MKBATCH) == sizeof(q),
	   "the request is 16376 bytes, all carried by the ioctl number");
	tfs_mk_init(&q, TFS_MK_DEVICE, 1, 0640, &used);
	ok(used == 0 && q.count == 0 && q.flags == TFS_MK_DEVICE && q.device == 1 &&
	   q.mode == 0640, "init");
	ok(tfs_mk_check(&q, sizeof(q), &used2) == -EINVAL, "an empty request is refused");
	ok(tfs_mk_add(&q, &used, "w", 1, TFS_BF16, &s2) == 0 && used == 4 + 16 + 1, "add [4096,1024]");
	ok(tfs_mk_add(&q, &used, "scalar", 6, TFS_F64, &s0) == 0 && q.count == 2, "add a scalar");
	rc = tfs_mk_check(&q, sizeof(q), &used2);
	ok(rc == 0 && used2 == used, "check: both entries, all the used bytes");
	off = 0;
	rc = tfs_mk_next(q.data, used, &off, &e);
	ok(rc == 0 && e.len == 1 && !memcmp(e.name, "w", 1) && e.dtype == TFS_BF16 &&
	   e.shape.ndim == 2 && e.shape.dims[0] == 4096 && e.shape.dims[1] == 1024, "parse the first");
	rc = tfs_mk_next(q.data, used, &off, &e);
	ok(rc == 0 && e.len == 6 && e.shape.ndim == 0 && e.dtype == TFS_F64 && off == used,
	   "parse the second, to the end");
	ok(tfs_mk_next(q.data, used, &off, &e) == -EINVAL, "nothing past the end");

	ok(tfs_mk_add(&q, &used, "a/b", 3, TFS_U8, &s0) == -EINVAL, "add: a name with '/'");
	ok(tfs_mk_add(&q, &used, "..", 2, TFS_U8, &s0) == -EINVAL, "add: '..'");
	ok(tfs_mk_add(&q, &used, ".", 1, TFS_U8, &s0) == -EINVAL, "add: '.'");
	ok(tfs_mk_add(&q, &used, "", 0, TFS_U8, &s0) == -EINVAL, "add: an empty name");
	ok(tfs_mk_add(&q, &used, "a\0b", 3, TFS_U8, &s0) == -EINVAL, "add: a NUL in the name");
	{
		char longn[300];

		memset(longn, 'x', sizeof(longn));
		ok(tfs_mk_add(&q, &used, longn, 256, TFS_U8, &s0) == -EINVAL, "add: 256 bytes");
		ok(tfs_mk_add(&q, &used, longn, 255, TFS_U8, &s0) == 0, "add: 255 bytes");
	}
	ok(tfs_mk_add(&q, &used, "x", 1, TFS_DTYPE_COUNT, &s0) == -EINVAL, "add: a dtype out of range");
	ok(tfs_mk_add(&q, &used, "x", 1, TFS_U8, &big) == -EINVAL, "add: 17 dims");

	/* fill to the brim: the entry that does not fit leaves the request as it was */
	tfs_mk_init(&r, 0, 0, 0644, &used);
	for (n = 0; (rc = tfs_mk_add(&r, &used, "0123456789abcdef", 16, TFS_F32, &s2)) == 0; n++)
		;
	ok(rc == -ENOSPC && n == TFS_MK_COUNT_MAX && used == (size_t)n * 36 &&
	   r.count == (uint32_t)n, "full after %d entries of 36 bytes (the count's bound): "
	   "-ENOSPC, nothing half-written", n);
	ok(tfs_mk_check(&r, sizeof(r), &used2) == 0 && used2 == used, "a full request checks");
	{
		char longn[255];

		memset(longn, 'y', sizeof(longn));
		tfs_mk_init(&r, 0, 0, 0644, &used);
		for (n = 0; (rc = tfs_mk_add(&r, &used, longn, 255, TFS_F32, &s2)) == 0; n++)
			;
		ok(rc == -ENOSPC && n == TFS_MK_DATA / 275 && used == (size_t)n * 275,
		   "data full after %d entries of 275 bytes", n);
		ok(tfs_mk_check(&r, sizeof(r), &used2) == 0 && used2 == used,
		   "a request with its data full checks");
	}

	/* what a hostile caller could send */
	tfs_mk_init(&r, 0, 0, 0644, &used);
	tfs_mk_add(&r, &used, "w", 1, TFS_F32, &s2);
	ok(tfs_mk_check(&r, sizeof(r) - 1, &used2) == -EINVAL, "check: a short request");
	r.flags = 4;
	ok(tfs_mk_check(&r, sizeof(r), &used2) == -EINVAL, "check: unknown flags");
	r.flags = 0;
	r.count = 2;
	ok(tfs_mk_check(&r, sizeof(r), &used2) == -EINVAL, "check: a count past the entries");
	r.count = 1;
	r.data[used + 100] = 1;
	ok(tfs_mk_check(&r, sizeof(r), &used2) == -EINVAL, "check: a byte past the entries");
	r.data[used + 100] = 0;
	r.count = 0x7fffffff;
	ok(tfs_mk_check(&r, sizeof(r), &used2) == -EINVAL, "check: a huge count");
	r.count = TFS_MK_COUNT_MAX + 1;
	ok(tfs_mk_check(&r, sizeof(r), &used2) == -EINVAL, "check: a count past the bound");
	r.count = 1;
	ok(tfs_mk_check(&r, sizeof(r), &used2) == 0, "check: as it was, good");
	r.data[3] = TFS_MAX_DIMS + 1;
	ok(tfs_mk_check(&r, sizeof(r), &used2) == -EINVAL, "check: too many dims");
	r.data[3] = 2;
	r.data[2] = 0xff;
	ok(tfs_mk_check(&r, sizeof(r), &used2) == -EINVAL, "check: a dtype out of range");
	r.data[2] = TFS_F32;
	{
		uint16_t l = 0xffff;

		memcpy(r.data, &l, 2);
		ok(tfs_mk_check(&r, sizeof(r), &used2) == -EINVAL, "check: a name past the data");
		off = 0;
		ok(tfs_mk_next(r.data, 20, &off, &e) == -EINVAL && off == 0,
		   "next: a truncated entry, nothing consumed");
	}
	printf("%d checks, %d failed\n", checks, failures);
	return failures != 0;
}
