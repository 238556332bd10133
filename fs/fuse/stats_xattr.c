/* The daemon's counters (util/stats.h) served as the JSON attribute user.tensorfs.stats
 * on the mount's root (stats_xattr.h). */
#include <errno.h>
#include <fuse_lowlevel.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mem/devices.h"
#include "fuse/stats_xattr.h"
#include "util/stats.h"
#include "store/schema.h"
#include "mem/backend.h"
#include "net/net.h"

int tfs_stats_is_xattr(uint64_t ino, const char *name)
{
	return ino == FUSE_ROOT_ID && strcmp(name, TFS_STATS_XATTR) == 0;
}

/* "devices": the memory of each served device, as statfs of a directory placed on it
 * reports it (tensorctl df). 0 or -ENOMEM. */
static int add_devices(cJSON *o)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "devices");
	int n = tfs_mem.ops->device_count(tfs_mem.be);

	if (!arr)
		return -ENOMEM;
	for (int i = 0; i <= n; i++) {
		/* The GPUs, then the host tier, named "cpu" */
		int dev = i == n ? TFS_DEVICE_CPU : i;
		struct tfs_backend_stats st;
		cJSON *d;

		if (!tfs_device_served(dev))
			continue;
		tfs_devices_stats(dev, &st);
		if (!(d = cJSON_CreateObject()) || !cJSON_AddItemToArray(arr, d) ||
		    !(dev == TFS_DEVICE_CPU ? cJSON_AddStringToObject(d, "device", "cpu") :
		      cJSON_AddNumberToObject(d, "device", i)) ||
		    !cJSON_AddNumberToObject(d, "total", (double)st.total) ||
		    !cJSON_AddNumberToObject(d, "reserved", (double)st.reserved) ||
		    !cJSON_AddNumberToObject(d, "used", (double)st.used) ||
		    !cJSON_AddNumberToObject(d, "allocations", (double)st.nallocs) ||
		    (st.prealloc &&
		     !cJSON_AddNumberToObject(d, "preallocated", (double)st.prealloc)))
			return -ENOMEM;
	}
	return 0;
}

/* "net_threads": the bytes each network thread carried, when they run: how evenly a
 * transfer spread over them (-o net_threads). 0 or -ENOMEM. */
static int add_net_threads(cJSON *o)
{
	uint64_t b[TFS_NET_THREADS_MAX];
	int n = tfs_net_thread_bytes(b, TFS_NET_THREADS_MAX);
	cJSON *arr;

	if (n == 0)
		return 0;
	if (!(arr = cJSON_AddArrayToObject(o, "net_threads")))
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		cJSON *v = cJSON_CreateNumber((double)b[i]);

		if (!v || !cJSON_AddItemToArray(arr, v))
			return -ENOMEM;
	}
	return 0;
}

#define STATS_SLACK 512

int tfs_stats_json(char *value, size_t size)
{
	cJSON *o = cJSON_CreateObject();
	char *text = NULL;
	int rc = -ENOMEM;
	size_t n;

	if (!o || !cJSON_AddNumberToObject(o, "version", 1) ||
	    !cJSON_AddNumberToObject(o, "pid", (double)getpid()) ||
	    !cJSON_AddStringToObject(o, "node", tfs_schema.node) ||
	    !cJSON_AddStringToObject(o, "backend", tfs_mem.ops->name) ||
	    !cJSON_AddNumberToObject(o, "uptime", tfs_stats_uptime()))
		goto out;
	/* A double holds integers exactly up to 2^53: years of requests. */
	for (int s = 0; s < TFS_ST_COUNT; s++)
		if (!cJSON_AddNumberToObject(o, tfs_stats_name(s), (double)tfs_stats_total(s)))
			goto out;
	if (!cJSON_AddNumberToObject(o, "writes_together_max",
				     (double)tfs_stats_writes_max()))
		goto out;
	if (add_devices(o) || add_net_threads(o))
		goto out;
	if (!(text = cJSON_PrintUnformatted(o)))
		goto out;
	n = strlen(text);
	/* The size asked first is an upper bound, with room for the value to grow before it
	 * is asked for: the uptime, a double, prints with more or fewer digits from one call
	 * to the next, and the counters gain digits (that second request alone counts one
	 * more). Without it about one size-then-value pair in ten got ERANGE. */
	rc = size == 0 ? (int)(n + STATS_SLACK) : n > size ? -ERANGE : (int)n;
	if (size && rc > 0)
		memcpy(value, text, n);
out:
	free(text);
	cJSON_Delete(o);
	return rc;
}
