/* The devices one daemon serves (--devices) and the memory figures of each. */
#ifndef TFS_FS_DEVICES_H
#define TFS_FS_DEVICES_H

#include <stdint.h>

#include "mem/backend.h"


/* Whether tensors may live on device: it exists and is served (tfs_mem.devmask), or it
 * is TFS_DEVICE_CPU and the host tier is served (tfs_mem.cpu_served). */
int tfs_device_served(int device);

/* The figures of one device (TFS_DEVICE_CPU: the host tier), or with device -1 the sum
 * over the served tiers (what statfs of the mount reports). Takes what the backend's
 * stats() takes. */
void tfs_devices_stats(int device, struct tfs_backend_stats *st);

/* Start-up: --preallocate's text into tfs_mem.prealloc, checked against the tiers served
 * and their caps (tfs_mem.caps, cpu_served and vmm set before; in --memory vmm a GPU may
 * not be named): 0, or -1 after logging why. */
int tfs_prealloc_option(const char *text);

/* Start-up: tfs_mem's backend started on device (init), and given the per-device caps and
 * preallocations (set_caps). 0 or init's error. */
int tfs_mem_start(int device);

#endif
