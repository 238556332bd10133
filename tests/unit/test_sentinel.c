/* Unit tests of the sentinel:// URL parser and the INFO field reader (core/sentinel.c), on
 * bytes: no server. One line per check: "ok - <desc>" or "not ok - <desc> (file:line)";
 * exit status 1 when any check failed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redisconn.h"
#include "secret.h"
#include "sentinel.h"

static int checks, failures;

#define CHECK(cond, desc) check_one(!!(cond), (desc), __FILE__, __LINE__)

static void check_one(int cond, const char *desc, const char *file, int line)
{
	checks++;
	if (cond) {
		printf("ok - %s\n", desc);
	} else {
		failures++;
		printf("not ok - %s (%s:%d)\n", desc, file, line);
	}
}

/* url is refused with a message that holds want. */
static void refused(const char *url, const char *want, const char *desc)
{
	struct tfs_redis_url u;
	char err[256] = "";
	int rc = tfs_url_parse(url, &u, err, sizeof(err));

	CHECK(rc == -EINVAL && strstr(err, want), desc);
	if (rc != -EINVAL || !strstr(err, want))
		printf("#   got %d '%s'\n", rc, err);
}

static void test_good(void)
{
	struct tfs_redis_url u;
	char err[256];
	int rc;

	rc = tfs_url_parse("sentinel://127.0.0.1:26379/tfs", &u, err, sizeof(err));
	CHECK(rc == 0 && u.nsentinels == 1 && strcmp(u.sentinel[0].host, "127.0.0.1") == 0 &&
	      u.sentinel[0].port == 26379 && strcmp(u.master, "tfs") == 0 && u.db == 0 &&
	      !u.is_unix && !u.user[0] && !u.password[0], "one sentinel");
	rc = tfs_url_parse("sentinel://a:1,b:2,c/m-1.x_y?db=3", &u, err, sizeof(err));
	CHECK(rc == 0 && u.nsentinels == 3 && strcmp(u.sentinel[1].host, "b") == 0 &&
	      u.sentinel[1].port == 2 && strcmp(u.sentinel[2].host, "c") == 0 &&
	      u.sentinel[2].port == 26379 && strcmp(u.master, "m-1.x_y") == 0 && u.db == 3,
	      "three sentinels, a default port, ?db=3");
	rc = tfs_url_parse("sentinel://admin@h:5/m", &u, err, sizeof(err));
	CHECK(rc == 0 && strcmp(u.user, "admin") == 0 && !u.password[0] &&
	      strcmp(u.sentinel[0].host, "h") == 0, "user@: a user, no password");
	rc = tfs_url_parse("sentinel://u:p@ss,w@h:5,i:6/m", &u, err, sizeof(err));
	CHECK(rc == 0 && strcmp(u.user, "u") == 0 && strcmp(u.password, "p@ss,w") == 0 &&
	      u.nsentinels == 2 && strcmp(u.sentinel[0].host, "h") == 0,
	      "user:password@, the password holding '@' and ','");
	rc = tfs_url_parse("sentinel://h1:1,h2:2,h3:3,h4:4,h5:5,h6:6,h7:7,h8:8/m", &u, err,
			   sizeof(err));
	CHECK(rc == 0 && u.nsentinels == TFS_SENTINELS_MAX && u.sentinel[7].port == 8,
	      "eight sentinels");
}

static void test_hostile(void)
{
	char big[8192];

	refused("sentinel://h1:1,h2:2,h3:3,h4:4,h5:5,h6:6,h7:7,h8:8,h9:9/m", "more than 8",
		"nine sentinels refused");
	refused("sentinel://h:0/m", "port must be 1..65535", "port 0 refused");
	refused("sentinel://h:65536/m", "port must be 1..65535", "port 65536 refused");
	refused("sentinel://h:-1/m", "port must be 1..65535", "negative port refused");
	refused("sentinel://h:12x/m", "port must be 1..65535", "port with letters refused");
	refused("sentinel://h:/m", "port must be 1..65535", "empty port refused");
	refused("sentinel://h:99999999999999999999999/m", "port must be 1..65535",
		"overflowing port refused");
	refused("sentinel://h:1/", "master's name", "empty master name refused");
	refused("sentinel://h:1", "master's name", "no master name refused");
	refused("sentinel://h:1/a b", "master's name", "a space in the name refused");
	refused("sentinel://h:1/a/b", "master's name", "a '/' in the name refused");
	refused("sentinel://h:1/a\x01", "master's name", "a control byte in the name refused");
	refused("sentinel://h:1/\xc3\xa9", "master's name", "non-ASCII name refused");
	refused("sentinel:///m", "no sentinel", "no sentinel refused");
	refused("sentinel://h:1,/m", "no host", "trailing comma refused");
	refused("sentinel://,h:1/m", "no host", "leading comma refused");
	refused("sentinel://h:1,,h:2/m", "no host", "empty item refused");
	refused("sentinel://:5/m", "no host", "port without host refused");
	refused("sentinel://[::1]:5/m", "IPv4", "IPv6 literal refused");
	refused("sentinel://h\t:5/m", "IPv4", "a tab in a host refused");
	refused("sentinel://h:1/m?db=x", "?db=N", "bad db refused");
	refused("sentinel://h:1/m?db=2000000", "?db=N", "db past 1000000 refused");
	refused("sentinel://h:1/m?timeout=3", "?db=N", "unknown option refused");
	memset(big, 'a', sizeof(big));
	memcpy(big, "sentinel://", 11);
	big[sizeof(big) - 1] = '\0';
	refused(big, "longer than", "an 8 KiB URL refused");
	memset(big, 'a', 300);
	memcpy(big, "sentinel://", 11);
	strcpy(big + 300, ":1/m");
	refused(big, "longer than 255", "a 289-byte host refused");
	memset(big, 'm', 200);
	memcpy(big, "sentinel://h:1/", 15);
	big[15 + TFS_MASTER_NAME_MAX + 1] = '\0';
	refused(big, "master's name", "a 65-byte master name refused");
	big[15 + TFS_MASTER_NAME_MAX] = '\0';
	{
		struct tfs_redis_url u;

		CHECK(tfs_url_parse(big, &u, NULL, 0) == 0 &&
		      strlen(u.master) == TFS_MASTER_NAME_MAX, "a 64-byte master name taken");
	}
	refused("sentinels://h:1/m", "must start with", "another scheme refused");
}

static void test_secret(void)
{
	char out[256], a[] = "sentinel://admin:pw@h:1,h:2/m", b[] = "sentinel://admin@h:1/m";
	char *argv[2] = { a, b };
	size_t off, len;

	CHECK(tfs_url_secret("sentinel://u:pw@h:1,g:2/m", &off, &len) == 1 && off == 13 &&
	      len == 2, "secret: a sentinel URL's password found");
	CHECK(tfs_url_secret("sentinel://admin@h:1/m", &off, &len) == 0,
	      "secret: a sentinel URL's user is not a password");
	tfs_url_redact("sentinel://u:pw@h:1,g:2/m", out, sizeof(out));
	CHECK(strcmp(out, "sentinel://u:***@h:1,g:2/m") == 0, "secret: redacted");
	CHECK(tfs_argv_scrub(2, argv) == 1 && strcmp(a, "sentinel://admin:@h:1,h:2/m") == 0 &&
	      strcmp(b, "sentinel://admin@h:1/m") == 0, "secret: argv scrub keeps the user");
}

static void test_info(void)
{
	const char info[] = "# Server\r\nredis_version:7.0.15\r\nrun_id:abc123\r\nrun_id_x:no\r\n";
	char out[16];

	CHECK(tfs_info_field(info, strlen(info), "run_id", out, sizeof(out)) == 0 &&
	      strcmp(out, "abc123") == 0, "info: run_id read");
	CHECK(tfs_info_field(info, strlen(info), "run", out, sizeof(out)) == -ENOENT,
	      "info: a prefix of a name is not the name");
	CHECK(tfs_info_field(info, strlen(info), "redis_version", out, 4) == -ENAMETOOLONG,
	      "info: a value longer than the buffer refused");
	CHECK(tfs_info_field(info, 20, "run_id", out, sizeof(out)) == -ENOENT,
	      "info: nothing read past len");
	CHECK(tfs_info_field("run_id:z", 8, "run_id", out, sizeof(out)) == 0 &&
	      strcmp(out, "z") == 0, "info: a last line without CRLF");
}

int main(void)
{
	test_good();
	test_hostile();
	test_secret();
	test_info();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
