/* The CUDA driver's virtual memory management calls, dlopen'ed from libcuda at the first
 * VMM tensor (docs/vmm.md), as cudart.c loads the runtime: libtensorfs neither links nor
 * needs libcuda on machines without a GPU. The types are the driver's (cuda.h), spelled
 * here so that the library builds without CUDA headers. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "client_internal.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct tfs_cudrv drv;
static int load_rc;
static char load_err[256];

static void load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(load_err, sizeof(load_err), "cannot load the CUDA driver (libcuda.so.1): %s",
			 dlerror());
		load_rc = -ENODEV;
		return;
	}
#define SYM(f) do {                                                                     \
		if (!(*(void **)&drv.f = dlsym(h, "cu" #f))) {                          \
			snprintf(load_err, sizeof(load_err), "libcuda lacks cu%s", #f);  \
			goto fail;                                                      \
		}                                                                       \
	} while (0)
	SYM(DeviceGetCount);
	SYM(GetErrorString);
	SYM(MemImportFromShareableHandle);
	SYM(MemAddressReserve);
	SYM(MemAddressFree);
	SYM(MemMap);
	SYM(MemUnmap);
	SYM(MemSetAccess);
	SYM(MemRelease);
#undef SYM
	load_rc = 0;
	return;
fail:
	dlclose(h);
	load_rc = -ENODEV;
}

const struct tfs_cudrv *tfs_cudrv_get(int *rc)
{
	pthread_once(&once, load);
	if (load_rc) {
		*rc = tfs_seterr(load_rc, "%s", load_err);
		return NULL;
	}
	*rc = 0;
	return &drv;
}

const char *tfs_cudrv_error(const struct tfs_cudrv *d, int r)
{
	const char *s = NULL;

	if (d->GetErrorString(r, &s) != 0 || !s)
		return "unknown CUDA driver error";
	return s;
}
