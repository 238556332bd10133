#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "secret.h"

/* The password of the URL whose "://" is at sep (its scheme just before), found as
 * tfs_url_parse finds it. */
static int secret_at(const char *url, const char *sep, size_t *off, size_t *len)
{
	const char *p = sep + 3, *at, *colon, *slash;
	int is_unix = sep - url >= 4 && memcmp(sep - 4, "unix", 4) == 0;

	if (is_unix) {
		if (p[0] == '/')
			return 0;
		at = strchr(p, '@');
	} else {
		const char *end, *comma;

		/* The last '@' before the path, as the parser takes it; in an -o list, not one
		 * of a later option: a host has no ',', so the URL ends at the first after the
		 * first '@'. */
		slash = strchr(p, '/');
		end = slash ? slash : p + strlen(p);
		at = memchr(p, '@', (size_t)(end - p));
		if (!at)
			return 0;
		comma = memchr(at, ',', (size_t)(end - at));
		at = memrchr(p, '@', (size_t)((comma ? comma : end) - p));
	}
	if (!at)
		return 0;
	colon = memchr(p, ':', (size_t)(at - p));
	/* Without a colon, a redis:// URL's credentials are the password; a unix:// one
	 * without it is refused, and all of it is hidden; a sentinel:// one names a user. */
	if (!colon && sep - url >= 8 && memcmp(sep - 8, "sentinel", 8) == 0)
		return 0;
	if (colon)
		p = colon + 1;
	*off = (size_t)(p - url);
	*len = (size_t)(at - p);
	return 1;
}

int tfs_url_secret(const char *url, size_t *off, size_t *len)
{
	const char *sep = strstr(url, "://");

	return sep ? secret_at(url, sep, off, len) : 0;
}

char *tfs_url_redact(const char *url, char *out, size_t size)
{
	size_t off, len;

	if (!size)
		return out;
	if (!tfs_url_secret(url, &off, &len) || len == 0)
		snprintf(out, size, "%s", url);
	else
		snprintf(out, size, "%.*s***%s", (int)off, url, url + off + len);
	return out;
}

static void wipe(void *p, size_t n)
{
	explicit_bzero(p, n);
}

int tfs_argv_scrub(int argc, char **argv)
{
	int n = 0;

	for (int i = 0; i < argc; i++) {
		char *s = argv[i], *sep = s;
		size_t off, len;

		/* An -o list may hold several URLs. */
		while ((sep = strstr(sep, "://"))) {
			if (secret_at(s, sep, &off, &len) && len) {
				size_t total = strlen(s);

				memmove(s + off, s + off + len, total - off - len + 1);
				wipe(s + total - len, len);
				n++;
			}
			sep += 3;
		}
	}
	return n;
}

static int take_line(char *buf, size_t n, char *out, size_t size)
{
	char *nl = memchr(buf, '\n', n);

	if (nl)
		n = (size_t)(nl - buf);
	if (n && buf[n - 1] == '\r')
		n--;
	if (n == 0 || n > TFS_PASSWORD_MAX || n >= size || memchr(buf, '\0', n))
		return -EINVAL;
	memcpy(out, buf, n);
	out[n] = '\0';
	return 0;
}

/* Reads at most cap bytes of fd into buf; the count or -errno. */
static ssize_t read_all(int fd, char *buf, size_t cap)
{
	size_t got = 0;

	while (got < cap) {
		ssize_t r = read(fd, buf + got, cap - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int tfs_password_file(const char *path, char *out, size_t size, char *err, size_t errlen)
{
	char buf[TFS_PASSWORD_MAX + 3];
	struct stat st;
	ssize_t n;
	int fd, rc;

	/* O_NONBLOCK: a FIFO put there must not hang the start; it is refused below. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot open the password file %s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		goto out;
	}
	rc = -EPERM;
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "the password file %s is not a regular file", path);
		goto out;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "the password file %s belongs to uid %u, not to the daemon's "
			 "user (uid %u): chown it", path, (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "the password file %s is open to %s (mode %04o): chmod 600 it",
			 path, st.st_mode & 070 ? "its group" : "others",
			 (unsigned)(st.st_mode & 07777));
		goto out;
	}
	n = read_all(fd, buf, sizeof(buf));
	if (n < 0) {
		rc = (int)n;
		snprintf(err, errlen, "cannot read the password file %s: %s", path, strerror(-rc));
		goto out;
	}
	rc = take_line(buf, (size_t)n, out, size);
	if (rc)
		snprintf(err, errlen, "the password file %s must hold one line of 1 to %d bytes",
			 path, TFS_PASSWORD_MAX);
out:
	wipe(buf, sizeof(buf));
	close(fd);
	return rc;
}

int tfs_env_take(const char *name, char *out, size_t size)
{
	char *v = getenv(name);
	size_t n;
	int rc = 1;

	if (!v)
		return 0;
	n = strlen(v);
	if (n == 0 || n > TFS_PASSWORD_MAX || n >= size)
		rc = -EINVAL;
	else
		memcpy(out, v, n + 1);
	/* The initial environment stays in the process's memory after unsetenv, where
	 * /proc/PID/environ (and a core dump) would show it. */
	wipe(v, n);
	unsetenv(name);
	return rc;
}

int tfs_password_from_fd_env(char *out, size_t size)
{
	const char *v = getenv(TFS_PASSWORD_FD_ENV);
	char buf[TFS_PASSWORD_MAX + 3], *end;
	long fd;
	ssize_t n;
	int rc;

	if (!v)
		return 0;
	errno = 0;
	fd = strtol(v, &end, 10);
	unsetenv(TFS_PASSWORD_FD_ENV);
	if (errno || end == v || *end || fd < 3 || fd > 65535)
		return -EBADF;
	n = read_all((int)fd, buf, sizeof(buf));
	close((int)fd);
	if (n < 0)
		return -EIO;
	rc = take_line(buf, (size_t)n, out, size);
	wipe(buf, sizeof(buf));
	return rc ? rc : 1;
}
