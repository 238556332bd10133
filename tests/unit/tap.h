/* The unit tests' one assertion: a TAP-style "ok - ..." or "not ok - ..." line per check,
 * counted in checks and failures for the test's summary line and exit status. */
#ifndef TFS_TESTS_UNIT_TAP_H
#define TFS_TESTS_UNIT_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int failures, checks;

static void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!cond)
		failures++;
	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#endif
