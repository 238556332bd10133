/* Running counters of the daemon (stats.h), served as the JSON attribute user.tensorfs.stats
 * on the mount's root. Only the daemon knows how many FUSE requests and queue commands it
 * served; everything a client can find by itself (tensors, bytes, holders) it finds in
 * the mount (tensorctl top). */
#include <errno.h>
#include <fuse_lowlevel.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "mem/devices.h"
#include "stats.h"
#include "store/schema.h"

struct tfs_stats_slot tfs_stats_slots[TFS_STATS_SLOTS];
_Thread_local struct tfs_stats_slot *tfs_stats_mine;
static atomic_uint next_slot;
static struct timespec started;

static const char *const names[TFS_ST_COUNT] = {
	[TFS_ST_REQUESTS] = "requests",
	[TFS_ST_READS] = "reads",
	[TFS_ST_READ_BYTES] = "read_bytes",
	[TFS_ST_WRITES] = "writes",
	[TFS_ST_WRITE_BYTES] = "write_bytes",
	[TFS_ST_QUEUE_CMDS] = "queue_commands",
	[TFS_ST_URING_REQUESTS] = "uring_requests",
	[TFS_ST_FILLS] = "fills",
	[TFS_ST_FILL_BYTES] = "fill_bytes",
};

/* Threads beyond TFS_STATS_SLOTS share slots round robin: still exact, merely contended. */
struct tfs_stats_slot *tfs_stats_slot_pick(void)
{
	unsigned n = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed);

	tfs_stats_mine = &tfs_stats_slots[n % TFS_STATS_SLOTS];
	return tfs_stats_mine;
}

void tfs_stats_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &started);
}

int tfs_stats_is_xattr(uint64_t ino, const char *name)
{
	return ino == FUSE_ROOT_ID && strcmp(name, TFS_STATS_XATTR) == 0;
}

/* "devices": the memory of each served device, as statfs of a directory placed on it
 * reports it (tensorctl df). 0 or -ENOMEM. */
static int add_devices(cJSON *o)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "devices");
	int n = tfs_d.be_ops->device_count(tfs_d.be);

	if (!arr)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct tfs_backend_stats st;
		cJSON *d;

		if (!tfs_device_served(i))
			continue;
		tfs_devices_stats(i, &st);
		if (!(d = cJSON_CreateObject()) || !cJSON_AddItemToArray(arr, d) ||
		    !cJSON_AddNumberToObject(d, "device", i) ||
		    !cJSON_AddNumberToObject(d, "total", (double)st.total) ||
		    !cJSON_AddNumberToObject(d, "reserved", (double)st.reserved) ||
		    !cJSON_AddNumberToObject(d, "used", (double)st.used) ||
		    !cJSON_AddNumberToObject(d, "allocations", (double)st.nallocs))
			return -ENOMEM;
	}
	return 0;
}

static _Atomic int64_t writes_now;
static _Atomic int64_t writes_max;

void tfs_stats_write_begin(void)
{
	int64_t n = atomic_fetch_add_explicit(&writes_now, 1, memory_order_relaxed) + 1;
	int64_t m = atomic_load_explicit(&writes_max, memory_order_relaxed);

	while (n > m && !atomic_compare_exchange_weak_explicit(&writes_max, &m, n,
								memory_order_relaxed,
								memory_order_relaxed))
		;
}

void tfs_stats_write_end(void)
{
	atomic_fetch_sub_explicit(&writes_now, 1, memory_order_relaxed);
}

int tfs_stats_json(char *value, size_t size)
{
	struct timespec now;
	cJSON *o = cJSON_CreateObject();
	char *text = NULL;
	int rc = -ENOMEM;
	size_t n;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!o || !cJSON_AddNumberToObject(o, "version", 1) ||
	    !cJSON_AddNumberToObject(o, "pid", (double)getpid()) ||
	    !cJSON_AddStringToObject(o, "node", tfs_schema.node) ||
	    !cJSON_AddStringToObject(o, "backend", tfs_d.be_ops->name) ||
	    !cJSON_AddNumberToObject(o, "uptime", (double)(now.tv_sec - started.tv_sec) +
				     (double)(now.tv_nsec - started.tv_nsec) / 1e9))
		goto out;
	for (int s = 0; s < TFS_ST_COUNT; s++) {
		uint64_t sum = 0;

		for (int i = 0; i < TFS_STATS_SLOTS; i++)
			sum += atomic_load_explicit(&tfs_stats_slots[i].v[s], memory_order_relaxed);
		/* A double holds integers exactly up to 2^53: years of requests. */
		if (!cJSON_AddNumberToObject(o, names[s], (double)sum))
			goto out;
	}
	if (!cJSON_AddNumberToObject(o, "writes_together_max",
				     (double)atomic_load_explicit(&writes_max, memory_order_relaxed)))
		goto out;
	if (add_devices(o))
		goto out;
	if (!(text = cJSON_PrintUnformatted(o)))
		goto out;
	n = strlen(text);
	rc = size == 0 ? (int)n : n > size ? -ERANGE : (int)n;
	if (size && rc > 0)
		memcpy(value, text, n);
out:
	free(text);
	cJSON_Delete(o);
	return rc;
}
