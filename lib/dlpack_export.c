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

int tfs_dlpack_device(tfs_tensor *t, int32_t *device_type, int32_t *device_id)
{
	if (!t || !device_type || !device_id)
		return tfs_seterr(-EINVAL, "tfs_dlpack_device: NULL argument");
	if (!tfs_tensor_on_host(t)) {
		*device_type = kDLCUDA;
		*device_id = t->meta.device;
	} else {
		*device_type = t->data && tfs_host_pinned(t->data) ? kDLCUDAHost : kDLCPU;
		*device_id = 0;
	}
	return 0;
}

int tfs_to_dlpack(tfs_tensor *t, struct DLManagedTensor **out)
{
	int32_t type, id;

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
	tfs_dlpack_device(t, &type, &id);
	x->dl.dl_tensor.device.device_type = (DLDeviceType)type;
	x->dl.dl_tensor.device.device_id = id;
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
