/* The Redis password that does not come in the URL (password.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store/password.h"
#include "log.h"
#include "secret.h"

/* From the keeper (a restart) or from TENSORFS_REDIS_PASSWORD, until tfs_password_get. */
static char env_password[TFS_PASSWORD_MAX + 1];
static int env_password_rc, keeper_password_rc;

void tfs_password_take_env(void)
{
	keeper_password_rc = tfs_password_from_fd_env(env_password, sizeof(env_password));
	if (keeper_password_rc == 0)
		env_password_rc = tfs_env_take(TFS_PASSWORD_ENV, env_password,
					       sizeof(env_password));
	else
		tfs_env_take(TFS_PASSWORD_ENV, env_password, 0);
}

int tfs_password_get(const char *file, int inline_pw, char *pw, size_t size)
{
	char err[512];
	int ways = !!file + (env_password_rc != 0) + !!inline_pw;

	pw[0] = '\0';
	if (keeper_password_rc < 0) {
		tfs_log(LOG_ERR, "cannot read the Redis password the memory keeper passed: %s",
			strerror(-keeper_password_rc));
		return -1;
	}
	if (keeper_password_rc > 0) {
		snprintf(pw, size, "%s", env_password);
		explicit_bzero(env_password, sizeof(env_password));
		return 0;
	}
	if (ways > 1) {
		tfs_log(LOG_ERR, "the Redis password is given more than one way: give it in "
			"--redis-password-file, in %s or in the URL, not in several",
			TFS_PASSWORD_ENV);
		return -1;
	}
	if (env_password_rc < 0) {
		tfs_log(LOG_ERR, "%s must hold 1 to %d bytes", TFS_PASSWORD_ENV, TFS_PASSWORD_MAX);
		return -1;
	}
	if (env_password_rc > 0)
		snprintf(pw, size, "%s", env_password);
	if (file && tfs_password_file(file, pw, size, err, sizeof(err))) {
		tfs_log(LOG_ERR, "%s", err);
		return -1;
	}
	if (inline_pw)
		tfs_log(LOG_WARNING, "the Redis password was given in the --redis URL: other "
			"local users could read it in the command line until the daemon took it "
			"out; use --redis-password-file or %s", TFS_PASSWORD_ENV);
	explicit_bzero(env_password, sizeof(env_password));
	return 0;
}
