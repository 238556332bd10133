/* Error messages of the client API: a thread-local sentence per failure. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "client_internal.h"

static __thread char last_msg[512];

int tfs_seterr(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	va_end(ap);
	return err;
}

const char *tfs_errmsg(void)
{
	return last_msg;
}

const char *tfs_strerror(int err)
{
	const char *s;

	if (err < 0)
		err = -err;
	if (err == 0)
		return "Success";
	s = strerrordesc_np(err);        /* static, unlike strerror's buffer */
	return s ? s : "Unknown error";
}
