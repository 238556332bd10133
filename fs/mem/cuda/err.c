/* CUDA errors reported and turned into errnos (cuda_internal.h): the leaf every file of
 * the backend reports driver errors through. */
#include <errno.h>

#include "mem/cuda/cuda_internal.h"
#include "log.h"

static int cuda_errno(cudaError_t e)
{
	switch (e) {
	case cudaSuccess:
		return 0;
	case cudaErrorMemoryAllocation:
		return -ENOMEM;
	case cudaErrorInvalidDevice:
	case cudaErrorNoDevice:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* Log a failed call and turn it into a negative errno. Clears the error if it was not
 * sticky, so the next call on this thread does not report it again. */
int tfs_cuda_fail(cudaError_t e, const char *what, int device)
{
	tfs_log(LOG_ERR, "cuda: device %d: %s: %s (%s)", device, what, cudaGetErrorString(e),
		cudaGetErrorName(e));
	(void)cudaGetLastError();
	return cuda_errno(e);
}
