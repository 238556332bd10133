/* The CUDA driver's virtual memory management calls (--memory vmm, docs/vmm.md), from
 * libcuda by dlopen: the daemon and its keeper link only the runtime. Private to
 * fs/mem/cuda/ (vmm.c in the daemon, keeper_vmm.c in the keeper). */
#ifndef TFS_FS_CUDA_VMM_DRV_H
#define TFS_FS_CUDA_VMM_DRV_H

#include <stdint.h>

#include <cuda.h>

#include "tensorfs.h"      /* TFS_IPC_HANDLE_SIZE */

struct tfs_vmm_drv {
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*MemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *,
						CUmemAllocationGranularity_flags);
	CUresult (*MemCreate)(CUmemGenericAllocationHandle *, size_t,
			      const CUmemAllocationProp *, unsigned long long);
	CUresult (*MemRelease)(CUmemGenericAllocationHandle);
	CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
				      unsigned long long);
	CUresult (*MemAddressFree)(CUdeviceptr, size_t);
	CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			   unsigned long long);
	CUresult (*MemUnmap)(CUdeviceptr, size_t);
	CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
	CUresult (*MemExportToShareableHandle)(void *, CUmemGenericAllocationHandle,
					       CUmemAllocationHandleType, unsigned long long);
	CUresult (*MemImportFromShareableHandle)(CUmemGenericAllocationHandle *, void *,
						 CUmemAllocationHandleType);
};

/* The calls, loaded once (thread-safe); NULL when libcuda or one of them is missing
 * (logged). Valid until the process exits. */
const struct tfs_vmm_drv *tfs_vmm_drv(void);

/* Logs a failed driver call (what, on device) and returns it as a negative errno:
 * -ENOSPC for out of memory, -EINVAL for a bad device, -EIO otherwise. */
int tfs_vmm_fail(CUresult r, const char *what, int device);

/* The properties of a device allocation of ordinal exportable as a POSIX descriptor, and
 * the granularity its size must be a multiple of. 0 or -errno. */
int tfs_vmm_prop(int ordinal, CUmemAllocationProp *prop, size_t *gran);

/* A new allocation of size (a multiple of the granularity) on ordinal, whose context is
 * current, exported: 0 with *h and *fd (close-on-exec, the caller's), or -errno with
 * nothing left. */
int tfs_vmm_create(int ordinal, uint64_t size, CUmemGenericAllocationHandle *h, int *fd);

/* The handle of an allocation (meta.h TFS_VMM_MAGIC): magic, a new id (a counter from a
 * random start per process, the pid mixed into its high half), size, device. */
void tfs_vmm_handle_make(uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t size, int device);

#endif
