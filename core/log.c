#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"

static int max_level = LOG_INFO;
static int use_syslog;

void tfs_log_set_level(int level) { max_level = level; }

void tfs_log_to_syslog(const char *ident)
{
	openlog(ident, LOG_PID, LOG_DAEMON);
	use_syslog = 1;
}

const char *tfs_log_level_name(int level)
{
	static const char *names[] = { "emerg", "alert", "crit", "error",
				       "warning", "notice", "info", "debug" };
	return level >= 0 && level <= LOG_DEBUG ? names[level] : "?";
}

void tfs_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (use_syslog) {
		syslog(level, "%s", msg);
		return;
	}
	/* One fprintf per line so lines of concurrent threads do not interleave. */
	fprintf(stderr, "tensorfs: %s: %s\n", tfs_log_level_name(level), msg);
}
