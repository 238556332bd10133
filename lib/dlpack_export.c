/* DLPack export: a view of an opened tensor (no copy) whose deleter drops the reference
 * the export holds, so from_dlpack consumers keep the mapping alive as long as they use it. */
#include <dlpack/dlpack.h>
#include <errno.h>
#include <stdlib.h>

#include "client_internal.h"
#include "dtype.h"

struct export {
	DLManagedTensor dl;          /* first: the consumer's pointer is the struct's */
	tfs_tensor *t;
	int64_t shape[TFS_MAX_DIMS];
};

static void deleter(DLManagedTensor *self)
{
	struct export *x;

	if (!self)
		return;
	x = self->manager_ctx;
	tfs_tensor_unref(x->t);
	free(x);
}

int tfs_to_dlpack(tfs_tensor *t, struct DLManagedTensor **out)
{
	struct export *x;
	uint8_t code, bits;

	if (!t || !out)
		return tfs_seterr(-EINVAL, "tfs_to_dlpack: NULL argument");
	if (t->via_fd)
		return tfs_remote_err(t, "tfs_to_dlpack");
	if (tfs_dtype_dlpack(t->meta.dtype, &code, &bits))
		return tfs_seterr(-ENOTSUP, "dtype %s has no DLPack type code",
				  tfs_dtype_name(t->meta.dtype));
	x = calloc(1, sizeof(*x));
	if (!x)
		return tfs_seterr(-ENOMEM, "out of memory");
	x->t = t;
	for (int i = 0; i < t->meta.shape.ndim; i++)
		x->shape[i] = (int64_t)t->meta.shape.dims[i];
	x->dl.dl_tensor.data = t->data;
	x->dl.dl_tensor.device.device_type = tfs_tensor_on_host(t) ? kDLCPU : kDLCUDA;
	x->dl.dl_tensor.device.device_id = tfs_tensor_on_host(t) ? 0 : t->meta.device;
	x->dl.dl_tensor.ndim = t->meta.shape.ndim;
	x->dl.dl_tensor.dtype.code = code;
	x->dl.dl_tensor.dtype.bits = bits;
	x->dl.dl_tensor.dtype.lanes = 1;
	x->dl.dl_tensor.shape = x->shape;
	x->dl.dl_tensor.strides = NULL;          /* compact row-major */
	x->dl.dl_tensor.byte_offset = 0;
	x->dl.manager_ctx = x;
	x->dl.deleter = deleter;
	tfs_tensor_ref(t);
	*out = &x->dl;
	return 0;
}
