/* A second process for tests/gpu/backend_cuda_test.c: opens a tensor's CUDA IPC handle the
 * way a user program does (cudaIpcOpenMemHandle, then add the offset) and reads or writes
 * bytes there.
 *
 *   consumer MODE HANDLE_HEX OFFSET LEN SEED [DEVICE]
 *   HANDLE_HEX: the 64-byte handle as hex, or @PATH for a VMM tensor (--memory vmm,
 *            docs/vmm.md) at PATH in a mount, whose handle grants nothing: the consumer
 *            then asks the mount's handle socket for the memory's descriptor as a user
 *            program does (read-write, else read-only), imports it with the driver
 *            (cuMemImportFromShareableHandle), maps the whole allocation (every chunk of
 *            a tensor grown in place, one after the other) with access for
 *            this device and takes its start as the base OFFSET counts from. It keeps no
 *            file of the mount open.
 *   MODE: check   the LEN bytes at OFFSET hold pattern SEED (byte i of the range is pattern
 *                 byte i; see tfs_pattern_byte)
 *         zero    the LEN bytes are all zero
 *         write   write pattern SEED there with cudaMemcpy, then cudaDeviceSynchronize
 *         kwrite  the same with a kernel (when built with fill_kernel.cu)
 *         dump    write the LEN bytes to stdout (for cmp against the file in the mount)
 *         hold    map the handle, print "holding" and sleep until killed (SEED ignored)
 *         fill    set every byte of the range to SEED (cudaMemset), then synchronise
 *         gen     no CUDA: write pattern SEED of LEN bytes to stdout (HANDLE_HEX ignored)
 *         kmark   (consumer kmark HANDLE_HEX OFFSET LEN SEED FILE SPIN_MS) queue a kernel that
 *                 spins SPIN_MS then writes pattern SEED, record an interprocess event
 *                 behind it and publish its handle in FILE's user.tensorfs.event (what
 *                 libtensorfs's tfs_mark_written does), print "marked" without waiting
 *                 for the kernel, then wait for it and exit
 * Exit status: 0 done and matched, 1 mismatch, 2 usage or CUDA error, 3 kwrite not built in.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "fd_request.h"
#include "pattern.h"

#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
	fprintf(stderr, "consumer: %s: %s\n", #call, cudaGetErrorString(e_)); \
	rc = 2; goto out; } } while (0)

#ifdef TFS_TEST_KERNEL
int tfs_test_fill_kernel(void *p, uint64_t n, uint64_t base, uint64_t seed);
int tfs_test_fill_kernel_async(void *p, uint64_t n, uint64_t base, uint64_t seed,
			       uint64_t spin_ns, void *stream);

/* The producer side of the written mark, by hand: the daemon's read() must wait for it. */
static int kmark(uint8_t *p, uint64_t len, uint64_t seed, const char *file, uint64_t spin_ms)
{
	cudaStream_t st = NULL;
	cudaEvent_t ev = NULL;
	cudaIpcEventHandle_t eh;
	int rc = 0;

	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming | cudaEventInterprocess));
	if (tfs_test_fill_kernel_async(p, len, 0, seed, spin_ms * 1000000ull, st)) {
		fprintf(stderr, "consumer: kernel launch failed\n");
		rc = 2;
		goto out;
	}
	CK(cudaEventRecord(ev, st));
	CK(cudaIpcGetEventHandle(&eh, ev));
	if (setxattr(file, "user.tensorfs.event", &eh, sizeof(eh), 0)) {
		perror("consumer: setxattr user.tensorfs.event");
		rc = 2;
		goto out;
	}
	printf("marked\n");
	fflush(stdout);
	CK(cudaStreamSynchronize(st));
	sleep(1);           /* keep the event's process alive while the reader waits */
out:
	if (ev)
		cudaEventDestroy(ev);
	if (st)
		cudaStreamDestroy(st);
	return rc;
}
#endif

/* The driver's VMM calls, from libcuda.so.1 at the first VMM tensor (as the daemon's
 * vmm_drv.c: the build needs no libcuda to link against). */
static struct {
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*MemImportFromShareableHandle)(CUmemGenericAllocationHandle *, void *,
						  CUmemAllocationHandleType);
	CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
				      unsigned long long);
	CUresult (*MemAddressFree)(CUdeviceptr, size_t);
	CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			   unsigned long long);
	CUresult (*MemUnmap)(CUdeviceptr, size_t);
	CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
	CUresult (*MemRelease)(CUmemGenericAllocationHandle);
} drv;

static int drv_load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		fprintf(stderr, "consumer: %s\n", dlerror());
		return -1;
	}
#define SYM(f) if (!(*(void **)&drv.f = dlsym(lib, "cu" #f))) goto missing
	SYM(GetErrorString); SYM(MemImportFromShareableHandle); SYM(MemAddressReserve);
	SYM(MemAddressFree); SYM(MemMap); SYM(MemUnmap); SYM(MemSetAccess); SYM(MemRelease);
#undef SYM
	return 0;
missing:
	fprintf(stderr, "consumer: libcuda lacks the VMM API\n");
	return -1;
}

/* A VMM tensor's memory, mapped here by vmm_map: n chunks (one, or several for a
 * tensor grown in place, docs/vmm.md#growth) one after the other at va. */
static struct {
	int n;
	CUmemGenericAllocationHandle h[TFS_FDREP_FDS_MAX];
	size_t csize[TFS_FDREP_FDS_MAX];
	CUdeviceptr va;
	size_t size;
} vm;

/* path's name in its mount (no leading slash), into out: the part below the highest
 * folder on the same file system. 0 or -1. */
static int name_in_mount(const char *path, char *out, size_t size)
{
	char abs[PATH_MAX], up[PATH_MAX];
	struct stat st, pst;
	size_t root;

	if (!realpath(path, abs) || stat(abs, &st))
		return -1;
	root = (size_t)(strrchr(abs, '/') - abs);
	while (root > 0) {
		size_t u;

		memcpy(up, abs, root);
		up[root] = '\0';
		u = (size_t)(strrchr(up, '/') - up);
		up[u ? u : 1] = '\0';
		if (stat(up, &pst) || pst.st_dev != st.st_dev)
			break;
		root = u;
	}
	if (strlen(abs + root + 1) >= size)
		return -1;
	strcpy(out, abs + root + 1);
	return 0;
}

/* One request on the handle socket sock: the number of descriptors (fds[], their sizes
 * in sizes[], 0 for a one-descriptor reply), or -1 (errno text printed). */
static int sock_fetch(const char *sock, int access, const char *name, int *fds,
		      uint64_t *sizes)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char req[TFS_FDREQ_MAX + 1], line[TFS_FDREP_MAX];
	union {
		char buf[CMSG_SPACE(sizeof(int) * TFS_FDREP_FDS_MAX)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = line, .iov_len = sizeof(line) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	struct cmsghdr *c;
	uint64_t bytes;
	int s, len, got = 0, rc, n = 0;
	ssize_t r;

	len = tfs_fdreq_format(req, sizeof(req), access, name);
	if (len < 0 || strlen(sock) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, sock);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(s, req, (size_t)len) != len || (r = recvmsg(s, &mh, 0)) <= 0) {
		perror("consumer: handle socket");
		if (s >= 0)
			close(s);
		return -1;
	}
	close(s);
	if ((c = CMSG_FIRSTHDR(&mh)) && c->cmsg_type == SCM_RIGHTS) {
		got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		memcpy(fds, CMSG_DATA(c), (size_t)got * sizeof(int));
	}
	rc = tfs_fdrep_parse_chunks(line, (size_t)r, &bytes, sizes, &n);
	if (rc || got != n) {
		fprintf(stderr, "consumer: handle socket: %s for %s\n", rc ? strerror(-rc) :
			"not as many descriptors as the reply says", name);
		while (got > 0)
			close(fds[--got]);
		return -1;
	}
	return n;
}

#define CU(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { const char *m_ = "?"; \
	drv.GetErrorString(r_, &m_); fprintf(stderr, "consumer: %s: %s\n", #call, m_); \
	goto fail; } } while (0)

/* The VMM tensor at path, mapped on dev: its allocation's start, or NULL. */
static uint8_t *vmm_map(const char *path, const uint8_t *handle, int dev)
{
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)], name[TFS_FDREQ_PATH_MAX + 1];
	CUmemAccessDesc acc = { .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev },
				.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	uint64_t sizes[TFS_FDREP_FDS_MAX];
	int fds[TFS_FDREP_FDS_MAX], n, i;
	size_t off = 0;
	ssize_t len;

	memcpy(&vm.size, handle + 16, sizeof(uint64_t));     /* little-endian, as x86 */
	len = getxattr(path, "user.tensor.handle_socket", sock, sizeof(sock) - 1);
	if (len <= 0 || name_in_mount(path, name, sizeof(name))) {
		fprintf(stderr, "consumer: %s: no handle socket or name in the mount\n", path);
		return NULL;
	}
	sock[len] = '\0';
	/* the device's context, for the driver */
	if (drv_load() || cudaFree(NULL) != cudaSuccess)
		return NULL;
	n = sock_fetch(sock, TFS_FDREQ_WRITE, name, fds, sizes);
	if (n < 0)
		n = sock_fetch(sock, TFS_FDREQ_READ, name, fds, sizes);
	if (n < 1)
		return NULL;
	if (n == 1) {
		sizes[0] = vm.size;
	} else {
		vm.size = 0;
		for (i = 0; i < n; i++)
			vm.size += sizes[i];
	}
	for (i = 0; i < n; i++) {
		vm.csize[i] = sizes[i];
		CU(drv.MemImportFromShareableHandle(&vm.h[i], (void *)(uintptr_t)fds[i],
						  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
		vm.n = i + 1;
	}
	/* Aligned as libtensorfs does: the largest power of two dividing the size, a
	 * multiple of the granularity it was rounded to. */
	CU(drv.MemAddressReserve(&vm.va, vm.size, (vm.size & -vm.size) > (1ul << 30) ? 1ul << 30 :
			       vm.size & -vm.size, 0, 0));
	for (i = 0; i < n; off += vm.csize[i++]) {
		CU(drv.MemMap(vm.va + off, vm.csize[i], 0, vm.h[i], 0));
		CU(drv.MemSetAccess(vm.va + off, vm.csize[i], &acc, 1));
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	return (uint8_t *)(uintptr_t)vm.va;
fail:
	for (i = 0; i < n; i++)
		close(fds[i]);
	return NULL;
}

static void vmm_unmap(void)
{
	size_t off = 0;

	for (int i = 0; i < vm.n; off += vm.csize[i++])
		drv.MemUnmap(vm.va + off, vm.csize[i]);
	drv.MemAddressFree(vm.va, vm.size);
	for (int i = 0; i < vm.n; i++)
		drv.MemRelease(vm.h[i]);
}

static int unhex(const char *s, uint8_t *out, size_t n)
{
	size_t i;

	if (strlen(s) != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

int main(int argc, char **argv)
{
	cudaIpcMemHandle_t h;
	const char *mode;
	uint64_t off, len, seed, i;
	uint8_t *host = NULL, *base = NULL, vh[64];
	int rc = 0, dev = 0, vmm = 0;

	if (argc >= 6 && !strcmp(argv[1], "gen")) {
		len = strtoull(argv[4], NULL, 0);
		seed = strtoull(argv[5], NULL, 0);
		for (i = 0; i < len; i++)
			putchar(tfs_pattern_byte(seed, i));
		return fflush(stdout) ? 2 : 0;
	}
	if (argc >= 6 && argv[2][0] == '@') {
		vmm = getxattr(argv[2] + 1, "user.tensor.ipc_handle", vh, sizeof(vh)) == sizeof(vh) &&
		      memcmp(vh, "TFSVMM01", 8) == 0;
		if (!vmm) {
			fprintf(stderr, "consumer: %s: not a VMM tensor\n", argv[2] + 1);
			return 2;
		}
	}
	if (argc < 6 || (!vmm && unhex(argv[2], (uint8_t *)&h, sizeof(h)))) {
		fprintf(stderr, "usage: consumer check|zero|write|kwrite|dump|hold|gen HANDLE_HEX "
			"OFFSET LEN SEED [DEVICE]\n");
		return 2;
	}
	mode = argv[1];
	off = strtoull(argv[3], NULL, 0);
	len = strtoull(argv[4], NULL, 0);
	seed = strtoull(argv[5], NULL, 0);
	if (argc > 6 && strcmp(mode, "kmark"))
		dev = atoi(argv[6]);
	host = malloc(len ? len : 1);
	if (!host)
		return 2;
	CK(cudaSetDevice(dev));
	if (vmm) {
		if (!(base = vmm_map(argv[2] + 1, vh, dev))) {
			rc = 2;
			goto out;
		}
	} else {
		CK(cudaIpcOpenMemHandle((void **)&base, h, cudaIpcMemLazyEnablePeerAccess));
	}
	if (!strcmp(mode, "check") || !strcmp(mode, "zero")) {
		int zero = !strcmp(mode, "zero");

		CK(cudaMemcpy(host, base + off, len, cudaMemcpyDeviceToHost));
		for (i = 0; i < len; i++) {
			uint8_t want = zero ? 0 : tfs_pattern_byte(seed, i);

			if (host[i] != want) {
				fprintf(stderr, "consumer: byte %llu of the range is %u, expected %u\n",
					(unsigned long long)i, host[i], want);
				rc = 1;
				break;
			}
		}
	} else if (!strcmp(mode, "dump")) {
		CK(cudaMemcpy(host, base + off, len, cudaMemcpyDeviceToHost));
		if (fwrite(host, 1, len, stdout) != len || fflush(stdout))
			rc = 2;
	} else if (!strcmp(mode, "hold")) {
		CK(cudaMemcpy(host, base + off, len, cudaMemcpyDeviceToHost));
		printf("holding\n");
		fflush(stdout);
		for (;;)
			pause();
	} else if (!strcmp(mode, "fill")) {
		CK(cudaMemset(base + off, (int)(seed & 0xff), len));
		CK(cudaDeviceSynchronize());
	} else if (!strcmp(mode, "write")) {
		for (i = 0; i < len; i++)
			host[i] = tfs_pattern_byte(seed, i);
		CK(cudaMemcpy(base + off, host, len, cudaMemcpyHostToDevice));
		CK(cudaDeviceSynchronize());
#ifdef TFS_TEST_KERNEL
	} else if (!strcmp(mode, "kmark") && argc > 7) {
		rc = kmark(base + off, len, seed, argv[6], strtoull(argv[7], NULL, 0));
	} else if (!strcmp(mode, "kwrite")) {
		if (tfs_test_fill_kernel(base + off, len, 0, seed)) {
			fprintf(stderr, "consumer: kernel failed\n");
			rc = 2;
		}
#else
	} else if (!strcmp(mode, "kwrite") || !strcmp(mode, "kmark")) {
		rc = 3;
#endif
	} else {
		fprintf(stderr, "consumer: unknown mode %s\n", mode);
		rc = 2;
	}
	if (vmm)
		vmm_unmap();
	else
		CK(cudaIpcCloseMemHandle(base));
out:
	free(host);
	return rc;
}
