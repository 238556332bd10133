/* The tiers one mount serves (docs/tiers.md): "cpu", host shared memory that every process
 * maps by name, and GPU ordinals (on the host backend, stand-in devices of host memory:
 * -o host_devices=N). Their lists as the options write them, and each tier's cap. The
 * parsers do no I/O. */
#ifndef TFS_FS_TIERS_H
#define TFS_FS_TIERS_H

#include <stdint.h>

#include "mem/devices.h"

/* Parses a list of tiers, "cpu,0,1" (or "cpu:0:1", as -o devices= spells it): ordinals
 * below TFS_DEVICES_MAX of one or two digits and "cpu", none twice, nothing else. 0 with *mask (the ordinals) and *cpu (1
 * when cpu is named), or -EINVAL with both unchanged. */
int tfs_tiers_parse_list(const char *text, uint64_t *mask, int *cpu);

/* Parses sizes: one size ("512M", "64G": all tiers), or tier:size pairs separated by ','
 * or '/' (-o's commas separate options): "cpu:1M,0:10M", "0:40G/cpu:64G". Sizes are
 * decimal with an optional K, M, G or T (powers of 1024). 0 with *out filled, or -EINVAL
 * with *out unchanged (a tier twice, a bad size or tier, an empty entry). */
int tfs_tiers_parse_sizes(const char *text, struct tfs_tier_sizes *out);
int tfs_tiers_parse_size(const char *s, size_t len, uint64_t *out);

/* Whether --preallocate pre fits the mount: the cpu tier only when cpu_served, none above
 * its cap in caps. NULL, or why not (a static message). The ordinals are checked against
 * the devices present once the backend runs (main.c). No I/O. */
const char *tfs_tiers_check_prealloc(const struct tfs_tier_sizes *pre,
				     const struct tfs_tier_sizes *caps, int cpu_served);

/* The size s gives device (TFS_DEVICE_CPU or an ordinal): its own, else all. */
uint64_t tfs_tier_size(const struct tfs_tier_sizes *s, int device);

/* The host tier's cap bounded by the machine's memory (MemTotal of /proc/meminfo); total
 * when it cannot tell. tfs_tier_host_available: MemAvailable, what the host tier may still
 * grow by, UINT64_MAX when it cannot tell. These two read /proc; the rest does no I/O. */
uint64_t tfs_tier_host_bound(uint64_t total);
uint64_t tfs_tier_host_available(void);

/* -o host_devices: the host backend's stand-in GPUs (default 1: device 0, as before
 * tiers). At most TFS_HOST_DEVICES_MAX. */
#define TFS_HOST_DEVICES_MAX 8

#endif
