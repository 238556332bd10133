/* The Redis password the daemon logs in with (password.c): from the memory keeper on a
 * restart, --redis-password-file, TENSORFS_REDIS_PASSWORD or the URL, one way at most. */
#ifndef TFS_STORE_PASSWORD_H
#define TFS_STORE_PASSWORD_H

#include <stddef.h>

/* First thing in main, before anything forks: reads the password a keeper passed (its
 * descriptor is closed), and takes TENSORFS_REDIS_PASSWORD out of the environment (also
 * out of the memory /proc/PID/environ shows), so that no child inherits it. Not
 * thread-safe (it changes the environment). */
void tfs_password_take_env(void);

/* The password to log in with, into pw (empty when none): the keeper's on a restart; else
 * the first line of file (NULL: none; secret.h's checks of owner and mode), or the
 * environment's. inline_pw: the URL carried one (main took it out of argv): a warning, or
 * an error when it comes another way too. 0 or -1 (logged). */
int tfs_password_get(const char *file, int inline_pw, char *pw, size_t size);

#endif
