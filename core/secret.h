/* Redis passwords kept out of what other local users can read: command lines
 * (/proc/PID/cmdline is world-readable), log lines and the environment of children.
 * Shared by the daemon, the library and the tools. */
#ifndef TFS_SECRET_H
#define TFS_SECRET_H

#include <stddef.h>

/* The environment variable a password may come in (the daemon, the library). */
#define TFS_PASSWORD_ENV "TENSORFS_REDIS_PASSWORD"
/* Set by the memory keeper for a daemon it starts again: the number of a descriptor (a
 * pipe) holding the password, which never goes through argv. */
#define TFS_PASSWORD_FD_ENV "TFS_REDIS_PASSWORD_FD"
/* The longest password (struct tfs_redis_url's field, less its NUL). */
#define TFS_PASSWORD_MAX 255

/* Where the password lies in url, a redis://, unix:// or sentinel:// URL as tfs_url_parse reads it
 * (also an unparsable one, so that an error message can quote it): 1 with *off and *len
 * set when it has one (len may be 0: "user:@"), else 0. */
int tfs_url_secret(const char *url, size_t *off, size_t *len);

/* url with its password, if any, written as "***" (redis://user:***@host): the only form in
 * which a URL goes into a log line or an error message. Returns out, always terminated
 * (truncated to size). */
char *tfs_url_redact(const char *url, char *out, size_t size);

/* Takes every password out of the URLs in argv, in place (as sshd and mysql do), so that
 * /proc/PID/cmdline no longer shows it: "unix://admin:pw@/s" becomes "unix://admin:@/s",
 * the bytes freed at the end of the string set to NUL. The strings stay where they are (a
 * restart runs the same argv again; the password then comes another way). Returns how
 * many passwords were taken out. */
int tfs_argv_scrub(int argc, char **argv);

/* Reads a password from path: the first line of a regular file that belongs to the
 * effective user and that neither group nor others may read or write. 0 with out set
 * (NUL-terminated), else -EPERM (mode or owner; the reason in err), -EINVAL (empty, or
 * longer than TFS_PASSWORD_MAX), or the errno of open/read. */
int tfs_password_file(const char *path, char *out, size_t size, char *err, size_t errlen);

/* Takes the variable name from the environment: copies its value to out, overwrites the
 * value's bytes where they lay (the process's initial environment, which
 * /proc/PID/environ shows) and unsets it, so that no child inherits it. Not thread-safe
 * (setenv/unsetenv): for the start of main. 1 when it was set, 0 when not, -EINVAL when the
 * value is empty or too long (it is taken all the same). */
int tfs_env_take(const char *name, char *out, size_t size);

/* Reads the password a keeper left on the descriptor named in TFS_PASSWORD_FD_ENV, closes
 * it and unsets the variable. 1 when one was there, 0 when the variable is not set,
 * -EINVAL/-EBADF/-EIO when it is not a readable password. Not thread-safe. */
int tfs_password_from_fd_env(char *out, size_t size);

#endif
