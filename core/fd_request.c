/* The handle socket's messages (fd_request.h). */
#include <errno.h>
#include <inttypes.h>
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
	if (line < 1 || (line != 1 && (line < 3 || buf[1] != ' ')))
		return -EINVAL;
	if (buf[0] == 'r')
		access = TFS_FDREQ_READ;
	else if (buf[0] == 'w')
		access = TFS_FDREQ_WRITE;
	else
		return -EINVAL;
	if (line == 1) {             /* by the descriptor sent with it */
		out->access = access;
		out->path[0] = '\0';
		out->used = 2;
		return 0;
	}
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
	size_t n = path ? strlen(path) : 0;

	if ((access != TFS_FDREQ_READ && access != TFS_FDREQ_WRITE) ||
	    (path && !path_ok(path, n)) || size < n + 4)
		return -EINVAL;
	buf[0] = access == TFS_FDREQ_READ ? 'r' : 'w';
	if (!path) {
		buf[1] = '\n';
		buf[2] = '\0';
		return 2;
	}
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

/* A decimal number at buf[*i..end) up to a space or end: 0 with *v and *i past it, or
 * -EBADMSG (no digits, a leading zero, past UINT64_MAX). */
static int number(const char *buf, size_t *i, size_t end, uint64_t *v)
{
	size_t start = *i;
	uint64_t x = 0;

	for (; *i < end && buf[*i] >= '0' && buf[*i] <= '9'; (*i)++) {
		unsigned d = (unsigned)(buf[*i] - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -EBADMSG;
		x = x * 10 + d;
	}
	if (*i == start || (*i - start > 1 && buf[start] == '0') ||
	    (*i < end && buf[*i] != ' '))
		return -EBADMSG;
	*v = x;
	return 0;
}

int tfs_fdrep_parse_chunks(const char *buf, size_t len, uint64_t *bytes, uint64_t *sizes,
			   int *n)
{
	uint64_t b, sz[TFS_FDREP_FDS_MAX];
	size_t i = 2, end;
	int k = 0;

	if (len < 2 || len > TFS_FDREP_MAX || buf[len - 1] != '\n')
		return -EBADMSG;
	if (buf[0] == '-')
		return tfs_fdrep_parse(buf, len, &b);   /* an error carries no descriptor */
	end = len - 1;
	if (buf[0] != '0' || buf[1] != ' ' || number(buf, &i, end, &b))
		return -EBADMSG;
	while (i < end) {
		i++;                                    /* the space */
		if (k == TFS_FDREP_FDS_MAX || number(buf, &i, end, &sz[k]) || sz[k] == 0)
			return -EBADMSG;
		k++;
	}
	if (k == 1)
		return -EBADMSG;        /* one descriptor says no size */
	*bytes = b;
	if (k == 0) {
		sizes[0] = 0;
		*n = 1;
	} else {
		memcpy(sizes, sz, (size_t)k * sizeof(*sz));
		*n = k;
	}
	return 0;
}

int tfs_fdrep_format_chunks(char *buf, int rc, uint64_t bytes, const uint64_t *sizes, int n)
{
	int len;

	if (rc < 0 || n == 1)
		return tfs_fdrep_format(buf, rc, bytes);
	if (n < 2 || n > TFS_FDREP_FDS_MAX)
		return -EINVAL;
	len = snprintf(buf, TFS_FDREP_MAX, "0 %" PRIu64, bytes);
	for (int i = 0; i < n; i++) {
		if (!sizes[i])
			return -EINVAL;
		len += snprintf(buf + len, TFS_FDREP_MAX - (size_t)len, " %" PRIu64, sizes[i]);
	}
	buf[len++] = '\n';
	buf[len] = '\0';
	return len;
}
