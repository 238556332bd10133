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

int tfs_set_type(int fd, const char *path, tfs_dtype dt, const struct tfs_shape *sh,
		 int *untyped, const char **failed)
{
	char v[1024];
	const char *dn = tfs_dtype_name(dt);
	int n, rc;

	*failed = "shape";
	n = snprintf(v, sizeof(v), "%s ", dn);
	if (n < 0 || (size_t)n >= sizeof(v) || tfs_shape_format(sh, v + n, sizeof(v) - (size_t)n) < 0)
		return -ENAMETOOLONG;
	if (!untyped || !__atomic_load_n(untyped, __ATOMIC_RELAXED)) {
		rc = set(fd, path, "user.tensor.shape", v);
		if (rc != -EINVAL)
			return rc;
		if (untyped)
			__atomic_store_n(untyped, 1, __ATOMIC_RELAXED);
	}
	*failed = "dtype";
	if ((rc = set(fd, path, "user.tensor.dtype", dn)))
		return rc;
	*failed = "shape";
	return set(fd, path, "user.tensor.shape", v + n);
}
