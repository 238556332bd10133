/* The host backend's memory as the host tier of another backend uses it
 * (mem/tiers_backend.c): where an allocation of tfs_backend_host is mapped in this process. */
#ifndef TFS_FS_HOST_MEM_H
#define TFS_FS_HOST_MEM_H

#include <stdint.h>

#include "mem/backend.h"

/* a's mapping (the shared-memory object, writable), valid until a is freed, resized or
 * moved; *mapped its length (whole pages, at least its bytes). Only for allocations of
 * tfs_backend_host. */
void *tfs_host_mem(struct tfs_alloc *a, uint64_t *mapped);

#endif
