/* The handle socket's messages (fd_request.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fd_request.h"

/* Is p (n bytes) a path of the grammar? */
static int path_ok(const char *p, size_t n)
{
	size_t start = 0;

	if (n == 0 || n > TFS_FDREQ_PATH_MAX)
		return 0;
	for (size_t i = 0; i <= n; i++) {
		size_t clen;

		if (i < n && p[i] != '/') {
			if (p[i] == '\0' || p[i] == '\n')
				return 0;
			continue;
		}
		clen = i - start;
		if (clen == 0 || clen > 255 || (clen == 1 && p[start] == '.') ||
		    (clen == 2 && p[start] == '.' && p[start + 1] == '.'))
			return 0;
		start = i + 1;
	}
	return 1;
}

int tfs_fdreq_parse(const char *buf, size_t len, struct tfs_fdreq *out)
{
	const char *nl = memchr(buf, '\n', len < TFS_FDREQ_MAX ? len : TFS_FDREQ_MAX);
	size_t line, plen;
	int access;

	if (!nl)
		return len >= TFS_FDREQ_MAX ? -ENAMETOOLONG : -EAGAIN;
	line = (size_t)(nl - buf);
	if (line < 3 || buf[1] != ' ')
		return -EINVAL;
	if (buf[0] == 'r')
		access = TFS_FDREQ_READ;
	else if (buf[0] == 'w')
		access = TFS_FDREQ_WRITE;
	else
		return -EINVAL;
	plen = line - 2;
	if (!path_ok(buf + 2, plen))
		return -EINVAL;
	out->access = access;
	memcpy(out->path, buf + 2, plen);
	out->path[plen] = '\0';
	out->used = line + 1;
	return 0;
}

int tfs_fdreq_format(char *buf, size_t size, int access, const char *path)
{
	size_t n = strlen(path);

	if ((access != TFS_FDREQ_READ && access != TFS_FDREQ_WRITE) || !path_ok(path, n) ||
	    size < n + 4)
		return -EINVAL;
	buf[0] = access == TFS_FDREQ_READ ? 'r' : 'w';
	buf[1] = ' ';
	memcpy(buf + 2, path, n);
	buf[n + 2] = '\n';
	buf[n + 3] = '\0';
	return (int)(n + 3);
}

int tfs_fdrep_parse(const char *buf, size_t len, uint64_t *bytes)
{
	uint64_t v = 0;
	size_t i = 0, digits = 0;
	int neg = 0;

	if (len < 2 || len > TFS_FDREP_MAX || buf[len - 1] != '\n')
		return -EBADMSG;
	if (buf[0] == '-') {
		neg = 1;
		i = 1;
	}
	for (; i < len - 1 && buf[i] >= '0' && buf[i] <= '9'; i++, digits++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EBADMSG;
		v = v * 10 + (uint64_t)(buf[i] - '0');
	}
	if (!digits || (digits > 1 && buf[neg] == '0'))
		return -EBADMSG;
	if (neg)
		return i == len - 1 && v >= 1 && v <= 4095 ? -(int)v : -EBADMSG;
	if (v != 0 || buf[i] != ' ')
		return -EBADMSG;
	v = 0;
	digits = 0;
	for (i++; i < len - 1 && buf[i] >= '0' && buf[i] <= '9'; i++, digits++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EBADMSG;
		v = v * 10 + (uint64_t)(buf[i] - '0');
	}
	if (!digits || i != len - 1 || (digits > 1 && buf[i - digits] == '0'))
		return -EBADMSG;
	*bytes = v;
	return 0;
}

int tfs_fdrep_format(char *buf, int rc, uint64_t bytes)
{
	if (rc < 0)
		return snprintf(buf, TFS_FDREP_MAX, "%d\n", rc < -4095 ? -EIO : rc);
	return snprintf(buf, TFS_FDREP_MAX, "0 %llu\n", (unsigned long long)bytes);
}
