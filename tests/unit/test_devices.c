/* --devices (fs/mem/tiers.c): the list parser on bytes, and which devices count as served
 * (fs/mem/devices.c), the host tier included. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../fs/mem/devices.c"
#include "../../fs/mem/tiers.c"

struct tfs_mem tfs_mem;
#include "tap.h"

static void parses(const char *text, uint64_t want)
{
	uint64_t m = 0xdead;
	int cpu = 7, rc = tfs_tiers_parse_list(text, &m, &cpu);

	ok(rc == 0 && m == want && cpu == 0, "'%s' -> %#llx (rc %d, got %#llx)", text,
	   (unsigned long long)want, rc, (unsigned long long)m);
}

static void refused(const char *text)
{
	uint64_t m = 0xdead;
	int cpu = 7, rc = tfs_tiers_parse_list(text, &m, &cpu);

	ok(rc == -EINVAL && m == 0xdead && cpu == 7, "'%s' refused, mask unchanged (rc %d)",
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

	{
		uint64_t m = 0;
		int cpu = 0;

		ok(tfs_tiers_parse_list("cpu,0,1", &m, &cpu) == 0 && m == 3 && cpu == 1,
		   "'cpu,0,1': devices 0 and 1 and the host tier");
		ok(tfs_tiers_parse_list("1:cpu", &m, &cpu) == 0 && m == 2 && cpu == 1,
		   "'1:cpu' (the -o spelling)");
		ok(tfs_tiers_parse_list("cpu", &m, &cpu) == 0 && m == 0 && cpu == 1,
		   "'cpu' alone");
	}
	refused("cpu,cpu");
	refused("CPU");
	refused("cpu0");
	refused("cpu,");
	refused("gpu");

	tfs_mem.ops = &ops;
	tfs_mem.devmask = 0x2;
	ok(!tfs_device_served(0), "device 0 not in the mask: not served");
	ok(tfs_device_served(1), "device 1 in the mask: served");
	tfs_mem.devmask = ~0ull;
	ok(tfs_device_served(0) && tfs_device_served(1), "every device present is served");
	ok(!tfs_device_served(2), "a device past the last is not served");
	ok(!tfs_device_served(-1) && !tfs_device_served(64), "no negative or huge ordinal");
	ok(!tfs_device_served(TFS_DEVICE_CPU), "the host tier, not served: not served");
	tfs_mem.cpu_served = 1;
	ok(tfs_device_served(TFS_DEVICE_CPU), "the host tier, served: served");

	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
