/* The CUDA backend's operations (backend.h), what tfs_backend_find("cuda") returns. */
#include "mem/cuda/cuda_internal.h"

const struct tfs_backend_ops tfs_backend_cuda = {
	.name = "cuda",
	.init = tfs_cuda_init,
	.fini = tfs_cuda_fini,
	.device_count = tfs_cuda_device_count,
	.alloc = tfs_cuda_alloc,
	.free = tfs_cuda_free,
	.resize = tfs_cuda_resize,
	.export_handle = tfs_cuda_export_handle,
	.set_owner = tfs_cuda_set_owner,
	.copy_in = tfs_cuda_copy_in,
	.copy_out = tfs_cuda_copy_out,
	.copy_in_fd = tfs_cuda_copy_in_fd,
	.wait_mark = tfs_cuda_wait_mark,
	.io_region = tfs_cuda_io_region,
	.read_fd = tfs_cuda_read_fd,
	.read_mem = tfs_cuda_read_mem,
	.stats = tfs_cuda_stats,
	.move = tfs_cuda_move,
	.adopt = tfs_cuda_adopt,
	.adopt_end = tfs_cuda_adopt_end,
};
