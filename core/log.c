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

/* in with its control characters (a newline in a file name, an escape sequence) written
 * as \xNN, into out (cut short to size - 1): a message is one line, and nothing a user
 * names can forge another line or drive a terminal. */
static void escape_controls(char *out, size_t size, const char *in)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *in && o + 1 < size; in++) {
		unsigned char c = (unsigned char)*in;

		if (c >= 0x20 && c != 0x7f) {
			out[o++] = (char)c;
			continue;
		}
		if (o + 4 >= size)
			break;
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[c >> 4];
		out[o++] = hex[c & 15];
	}
	out[o] = '\0';
}

void tfs_log(int level, const char *fmt, ...)
{
	char msg[1024], line[2048];
	va_list ap;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	escape_controls(line, sizeof(line), msg);
	if (use_syslog) {
		syslog(level, "%s", line);
		return;
	}
	/* One fprintf per line so lines of concurrent threads do not interleave. */
	fprintf(stderr, "tensorfs: %s: %s\n", tfs_log_level_name(level), line);
}
