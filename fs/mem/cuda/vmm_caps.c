/* What the CUDA virtual memory management API offers on a device (issue 36): VMM itself,
 * allocations exported as POSIX file descriptors (what a VMM memory mode would hand out
 * over the handle socket), and fabric handles (multi-node NVLink domains; they need an
 * IMEX channel, which tensorfs does not set up). Logged once per device at start-up, so
 * that the log says whether the machine offers them. The driver API comes from libcuda
 * (dlopen: the daemon links only the runtime); the runtime has started the driver by
 * then. */
#include <dlfcn.h>

#include <cuda.h>

#include "mem/cuda/cuda_internal.h"
#include "log.h"

typedef CUresult (*get_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*get_dev_fn)(CUdevice *, int);

/* attr of dev: 1, 0, or -1 when the driver cannot say. */
static int attr(get_attr_fn ga, CUdevice dev, CUdevice_attribute a)
{
	int v = 0;

	return ga(&v, a, dev) == CUDA_SUCCESS ? !!v : -1;
}

static const char *word(int v)
{
	return v > 0 ? "yes" : v == 0 ? "no" : "unknown";
}

void tfs_cuda_vmm_report(int ordinal)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	get_attr_fn ga;
	get_dev_fn gd;
	CUdevice dev;

	if (!lib)
		lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		tfs_log(LOG_INFO, "cuda: device %d: VMM capabilities unknown (no libcuda.so.1)",
			ordinal);
		return;
	}
	ga = (get_attr_fn)dlsym(lib, "cuDeviceGetAttribute");
	gd = (get_dev_fn)dlsym(lib, "cuDeviceGet");
	if (ga && gd && gd(&dev, ordinal) == CUDA_SUCCESS)
		tfs_log(LOG_INFO, "cuda: device %d: virtual memory management %s, POSIX fd "
			"handles %s, fabric handles %s", ordinal,
			word(attr(ga, dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)),
			word(attr(ga, dev,
				  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)),
			word(attr(ga, dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED)));
	dlclose(lib);
}
