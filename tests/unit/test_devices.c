/* --devices (fs/mem/devices.c): the list parser on bytes, and which devices count as served. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../fs/mem/devices.c"

struct tfs_mem tfs_mem;
#include "tap.h"

static void parses(const char *text, uint64_t want)
{
	uint64_t m = 0xdead;
	int rc = tfs_devices_parse(text, &m);

	ok(rc == 0 && m == want, "'%s' -> %#llx (rc %d, got %#llx)", text,
	   (unsigned long long)want, rc, (unsigned long long)m);
}

static void refused(const char *text)
{
	uint64_t m = 0xdead;
	int rc = tfs_devices_parse(text, &m);

	ok(rc == -EINVAL && m == 0xdead, "'%s' refused, mask unchanged (rc %d)",
	   text ? text : "(null)", rc);
}

static int two_devices(struct tfs_backend *be)
{
	(void)be;
	return 2;
}

int main(void)
{
	static struct tfs_backend_ops ops = { .name = "test", .device_count = two_devices };

	parses("0", 1);
	parses("1", 2);
	parses("0,2,3", 0xd);
	parses("3:0", 9);
	parses("63", 1ull << 63);
	refused(NULL);
	refused("");
	refused(",");
	refused("0,");
	refused(",0");
	refused("0,,1");
	refused("64");
	refused("100");
	refused("007");
	refused("1,1");
	refused("-1");
	refused("0 ,1");
	refused(" 0");
	refused("0;1");
	refused("a");
	refused("1\n");

	tfs_mem.ops = &ops;
	tfs_mem.devmask = 0x2;
	ok(!tfs_device_served(0), "device 0 not in the mask: not served");
	ok(tfs_device_served(1), "device 1 in the mask: served");
	tfs_mem.devmask = ~0ull;
	ok(tfs_device_served(0) && tfs_device_served(1), "every device present is served");
	ok(!tfs_device_served(2), "a device past the last is not served");
	ok(!tfs_device_served(-1) && !tfs_device_served(64), "no negative or huge ordinal");

	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
