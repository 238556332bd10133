/* The devices one daemon serves and their figures (devices.h). Every GPU CUDA shows the
 * daemon is served unless --devices names fewer; CUDA_VISIBLE_DEVICES, read by CUDA
 * itself, decides what "every" is and renumbers the ordinals, as for any CUDA program. */
#include <errno.h>
#include <string.h>

#include "mem/devices.h"
#include "mem/backend.h"
#include "mem/tiers.h"
#include "log.h"

int tfs_device_served(int device)
{
	if (device == TFS_DEVICE_CPU)
		return tfs_mem.cpu_served;
	return device >= 0 && device < TFS_DEVICES_MAX &&
	       device < tfs_mem.ops->device_count(tfs_mem.be) && (tfs_mem.devmask >> device & 1);
}

void tfs_devices_stats(int device, struct tfs_backend_stats *st)
{
	int n = tfs_mem.ops->device_count(tfs_mem.be);

	memset(st, 0, sizeof(*st));
	if (device >= 0 || device == TFS_DEVICE_CPU) {
		if (tfs_device_served(device))
			tfs_mem.ops->stats(tfs_mem.be, device, st);
		return;
	}
	for (int i = -1; i < n && i < TFS_DEVICES_MAX; i++) {
		struct tfs_backend_stats one;
		int dev = i < 0 ? TFS_DEVICE_CPU : i;

		if (!tfs_device_served(dev))
			continue;
		tfs_mem.ops->stats(tfs_mem.be, dev, &one);
		st->used += one.used;
		st->reserved += one.reserved;
		st->total += one.total;
		st->nallocs += one.nallocs;
		st->prealloc += one.prealloc;
	}
}

int tfs_prealloc_option(const char *text)
{
	const char *why;

	if (tfs_tiers_parse_sizes(text, &tfs_mem.prealloc) || tfs_mem.prealloc.all)
		why = "not a list of tier:size like cpu:64G,0:40G";
	else if (tfs_mem.vmm && tfs_mem.prealloc.devmask)
		/* Reserved memory no tensor would ever use: refused rather than wasted. */
		why = "a GPU's reservation is made of legacy blocks, from which --memory vmm "
		      "draws nothing (its tensors are VMM allocations of their own): only cpu "
		      "may be named";
	else
		why = tfs_tiers_check_prealloc(&tfs_mem.prealloc, &tfs_mem.caps,
					       tfs_mem.cpu_served);
	if (why)
		tfs_log(LOG_ERR, "--preallocate '%s': %s", text, why);
	return why ? -1 : 0;
}

int tfs_mem_start(int device)
{
	int rc = tfs_mem.ops->init(&tfs_mem.be, device, tfs_mem.max_bytes);

	if (rc == 0 && tfs_mem.ops->set_caps)
		tfs_mem.ops->set_caps(tfs_mem.be, &tfs_mem.caps, &tfs_mem.prealloc);
	return rc;
}
