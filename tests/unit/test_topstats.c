/* Unit tests of tensorctl top's reading of user.tensorfs.stats and its rates (no daemon). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "topstats.h"

static int fails;

static void check(int cond, const char *what)
{
	printf("%s - %s\n", cond ? "ok" : "not ok", what);
	if (!cond)
		fails++;
}

#define GOOD "{\"version\":1,\"pid\":42,\"node\":\"vm\",\"backend\":\"host\",\"uptime\":2.5," \
	     "\"requests\":100,\"reads\":3,\"read_bytes\":4096,\"writes\":2,\"write_bytes\":8192," \
	     "\"queue_commands\":7}"

static int parse(const char *json, struct top_stats *s)
{
	return top_stats_parse(json, strlen(json), s);
}

static void test_parse(void)
{
	static const char *const bad[] = {
		"", "null", "[]", "{", "42", "{\"version\":1}",
		/* each required field missing or wrong in turn */
		"{\"pid\":42,\"uptime\":1,\"requests\":0,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":0,\"pid\":42,\"uptime\":1,\"requests\":0,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":1,\"uptime\":1,\"requests\":0,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":1,\"pid\":0,\"uptime\":1,\"requests\":0,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":1,\"pid\":42,\"requests\":0,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":1,\"pid\":42,\"uptime\":-1,\"requests\":0,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":1,\"pid\":42,\"uptime\":\"1\",\"requests\":0,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":1,\"pid\":42,\"uptime\":1,\"requests\":-1,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":1,\"pid\":42,\"uptime\":1,\"requests\":1.5,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":1,\"pid\":42,\"uptime\":1,\"requests\":\"7\",\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":1,\"pid\":42,\"uptime\":1,\"requests\":1e300,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
		"{\"version\":1,\"pid\":42,\"uptime\":1,\"requests\":0,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0}",
		"{\"version\":1,\"pid\":99999999999,\"uptime\":1,\"requests\":0,\"reads\":0,\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}",
	};
	struct top_stats s;
	char buf[512];

	check(parse(GOOD, &s) == 0, "parse: the daemon's object");
	check(s.pid == 42 && s.uptime == 2.5 && strcmp(s.node, "vm") == 0 &&
	      strcmp(s.backend, "host") == 0, "parse: pid, uptime, node, backend");
	check(s.c[TOP_REQUESTS] == 100 && s.c[TOP_READS] == 3 && s.c[TOP_READ_BYTES] == 4096 &&
	      s.c[TOP_WRITES] == 2 && s.c[TOP_WRITE_BYTES] == 8192 && s.c[TOP_QUEUE] == 7,
	      "parse: every counter");
	check(top_stats_parse(GOOD, strlen(GOOD) - 1, &s) == -EBADMSG,
	      "parse: a value cut short is -EBADMSG (the length is respected)");
	snprintf(buf, sizeof(buf), "%.*s,\"future\":[1,2]}", (int)strlen(GOOD) - 1, GOOD);
	check(parse(buf, &s) == 0 && s.c[TOP_QUEUE] == 7, "parse: fields it does not know are ignored");
	check(parse("{\"version\":2,\"pid\":1,\"uptime\":0,\"requests\":9007199254740992,\"reads\":0,"
		    "\"read_bytes\":0,\"writes\":0,\"write_bytes\":0,\"queue_commands\":0,\"new\":{}}", &s) == 0
	      && s.c[TOP_REQUESTS] == 9007199254740992ULL,
	      "parse: a newer version with fields it does not know; counts up to 2^53");
	check(parse("{\"version\":1,\"pid\":1,\"uptime\":0,\"requests\":0,\"reads\":0,\"read_bytes\":0,"
		    "\"writes\":0,\"write_bytes\":0,\"queue_commands\":0}", &s) == 0 &&
	      strcmp(s.node, "?") == 0, "parse: node and backend are optional");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "parse: bad value %zu is -EBADMSG: %.60s", i, bad[i]);
		check(parse(bad[i], &s) == -EBADMSG, buf);
	}
}

static void test_rates(void)
{
	struct top_stats a, b;
	double r[TOP_NCOUNTERS];

	parse(GOOD, &a);
	b = a;
	b.uptime = a.uptime + 2;
	b.c[TOP_REQUESTS] += 1000;
	b.c[TOP_READ_BYTES] += 1 << 20;
	check(top_stats_rates(&a, &b, r) == 0 && r[TOP_REQUESTS] == 500 &&
	      r[TOP_READ_BYTES] == 524288 && r[TOP_QUEUE] == 0, "rates: per second of the daemon's clock");
	check(top_stats_rates(&a, &a, r) == -EINVAL, "rates: no time passed is -EINVAL");
	b.pid = 43;
	check(top_stats_rates(&a, &b, r) == -ESTALE, "rates: another daemon (pid) is -ESTALE");
	b = a;
	b.uptime = 1;
	check(top_stats_rates(&a, &b, r) == -ESTALE, "rates: uptime gone back is -ESTALE");
	b = a;
	b.uptime += 1;
	b.c[TOP_WRITES] = 0;
	check(top_stats_rates(&a, &b, r) == -ESTALE, "rates: a counter gone back is -ESTALE");
}

int main(void)
{
	test_parse();
	test_rates();
	return fails ? 1 : 0;
}
