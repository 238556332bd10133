/* A tensor file typed and sized through its extended attributes (typed.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>

#include "typed.h"

static int set(int fd, const char *path, const char *name, const char *v)
{
	int rc = fd >= 0 ? fsetxattr(fd, name, v, strlen(v), 0) :
			   setxattr(path, name, v, strlen(v), 0);

	return rc ? -errno : 0;
}

/* The allocation's part of a failure, for the caller's message. */
static void say_alloc(char *what, size_t wsize, const char *dn, const char *shape,
		      const struct tfs_shape *sh, tfs_dtype dt)
{
	uint64_t bytes = 0;

	tfs_shape_bytes(sh, tfs_dtype_size(dt), &bytes);
	snprintf(what, wsize, "allocate %s %s (%llu bytes)", dn, shape, (unsigned long long)bytes);
}

int tfs_set_type(int fd, const char *path, tfs_dtype dt, const struct tfs_shape *sh,
		 int *untyped, char *what, size_t wsize)
{
	char v[1024];
	const char *dn = tfs_dtype_name(dt);
	int n, rc;

	n = snprintf(v, sizeof(v), "%s ", dn);
	if (n < 0 || (size_t)n >= sizeof(v) ||
	    tfs_shape_format(sh, v + n, sizeof(v) - (size_t)n) < 0) {
		snprintf(what, wsize, "shape");
		return -ENAMETOOLONG;
	}
	if (!untyped || !__atomic_load_n(untyped, __ATOMIC_RELAXED)) {
		rc = set(fd, path, "user.tensor.shape", v);
		if (rc != -EINVAL)
			goto out;
		if (untyped)
			__atomic_store_n(untyped, 1, __ATOMIC_RELAXED);
	}
	if ((rc = set(fd, path, "user.tensor.dtype", dn))) {
		snprintf(what, wsize, "dtype %s", dn);
		return rc;
	}
	rc = set(fd, path, "user.tensor.shape", v + n);
out:
	if (rc)
		say_alloc(what, wsize, dn, v + n, sh, dt);
	return rc;
}
