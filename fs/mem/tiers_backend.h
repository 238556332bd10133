/* The host tier beside a device backend (tiers_backend.c, docs/tiers.md). */
#ifndef TFS_FS_TIERS_BACKEND_H
#define TFS_FS_TIERS_BACKEND_H

#include "mem/backend.h"

/* The table that serves main's devices and the host tier (TFS_DEVICE_CPU) in one: what
 * tfs_mem.ops becomes when a mount of a device backend serves the host tier. Called once,
 * at start-up, before init (it keeps main). Its name is main's ("cuda"): the records of
 * its GPU tensors are main's. tfs_backend_tiers is the table it copies. */
const struct tfs_backend_ops *tfs_tiers_wrap(const struct tfs_backend_ops *main);
extern const struct tfs_backend_ops tfs_backend_tiers;

/* The backend a tensor on device has its record say, how a client reads its handle:
 * "host" for the host tier, else the mount's backend's name. */
const char *tfs_mem_backend_name(int device);

#endif
