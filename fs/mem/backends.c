/* The backends this build has, chosen by name (backend.h). */
#include <string.h>
#include <unistd.h>

#include "mem/backend.h"

struct tfs_mem tfs_mem;

const struct tfs_backend_ops *tfs_backend_find(const char *name)
{
	if (name && strcmp(name, "host") == 0)
		return &tfs_backend_host;
#ifdef TFS_HAVE_CUDA
	if (name && strcmp(name, "cuda") == 0)
		return &tfs_backend_cuda;
	/* Looking at the device node, not asking CUDA: CUDA must not start before the
	 * daemon forks into the background. */
	if ((!name || strcmp(name, "auto") == 0) && access("/dev/nvidiactl", F_OK) == 0)
		return &tfs_backend_cuda;
#endif
	if (!name || strcmp(name, "auto") == 0)
		return &tfs_backend_host;
	return NULL;
}
