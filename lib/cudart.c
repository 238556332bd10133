/* The CUDA runtime, dlopen'ed at the first CUDA handle so libtensorfs neither links nor
 * needs libcudart on machines without a GPU. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "client_internal.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct tfs_cudart cu;
static int load_rc;
static char load_err[256];

#define SYM(field, name)                                                        \
	do {                                                                    \
		*(void **)&cu.field = dlsym(h, name);                           \
		if (!cu.field) {                                                \
			snprintf(load_err, sizeof(load_err), "libcudart lacks %s", name); \
			goto fail;                                              \
		}                                                               \
	} while (0)

static void load(void)
{
	static const char *const names[] = { "libcudart.so", "libcudart.so.13", "libcudart.so.12",
					     "libcudart.so.11.0" };
	void *h = NULL;

	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(load_err, sizeof(load_err), "cannot load the CUDA runtime (libcudart.so): %s",
			 dlerror());
		load_rc = -ENODEV;
		return;
	}
	SYM(GetDevice, "cudaGetDevice");
	SYM(SetDevice, "cudaSetDevice");
	SYM(IpcOpenMemHandle, "cudaIpcOpenMemHandle");
	SYM(IpcCloseMemHandle, "cudaIpcCloseMemHandle");
	SYM(Memcpy, "cudaMemcpy");
	SYM(GetErrorString, "cudaGetErrorString");
	SYM(EventCreateWithFlags, "cudaEventCreateWithFlags");
	SYM(EventRecord, "cudaEventRecord");
	SYM(EventDestroy, "cudaEventDestroy");
	SYM(IpcGetEventHandle, "cudaIpcGetEventHandle");
	SYM(IpcOpenEventHandle, "cudaIpcOpenEventHandle");
	SYM(StreamWaitEvent, "cudaStreamWaitEvent");
	SYM(HostAlloc, "cudaHostAlloc");
	SYM(FreeHost, "cudaFreeHost");
	SYM(StreamCreateWithFlags, "cudaStreamCreateWithFlags");
	SYM(StreamDestroy, "cudaStreamDestroy");
	SYM(StreamSynchronize, "cudaStreamSynchronize");
	SYM(EventSynchronize, "cudaEventSynchronize");
	SYM(MemcpyAsync, "cudaMemcpyAsync");
	SYM(HostRegister, "cudaHostRegister");
	SYM(HostUnregister, "cudaHostUnregister");
	SYM(Free, "cudaFree");
	SYM(DeviceSynchronize, "cudaDeviceSynchronize");
	load_rc = 0;
	return;
fail:
	dlclose(h);
	load_rc = -ENODEV;
}

const struct tfs_cudart *tfs_cudart_get(int *rc)
{
	pthread_once(&once, load);
	if (load_rc) {
		*rc = tfs_seterr(load_rc, "%s", load_err);
		return NULL;
	}
	*rc = 0;
	return &cu;
}

int tfs_host_pinned(const void *p)
{
	static const char *const names[] = { "libcuda.so.1", "libcuda.so" };
	int (*get)(void *data, int attr, unsigned long long ptr);
	unsigned int type = 0;
	void *h = NULL;
	int rc = -1;

	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h)
		return 0;
	*(void **)&get = dlsym(h, "cuPointerGetAttribute");
	/* CU_POINTER_ATTRIBUTE_MEMORY_TYPE (2); CU_MEMORYTYPE_HOST (1). Memory the driver does
	 * not know answers an error, also before cuInit. */
	if (get)
		rc = get(&type, 2, (unsigned long long)(uintptr_t)p);
	dlclose(h);
	return rc == 0 && type == 1;
}

int tfs_cuda_enter(const struct tfs_cudart *c, int dev, int *prev)
{
	int e;

	if ((e = c->GetDevice(prev)) != 0)
		return tfs_seterr(-ENODEV, "cudaGetDevice: %s", c->GetErrorString(e));
	if (*prev != dev && (e = c->SetDevice(dev)) != 0)
		return tfs_seterr(-ENODEV, "cudaSetDevice(%d): %s", dev, c->GetErrorString(e));
	return 0;
}
