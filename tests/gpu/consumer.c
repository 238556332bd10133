/* A second process for tests/gpu/backend_cuda_test.c: opens a tensor's CUDA IPC handle the
 * way a user program does (cudaIpcOpenMemHandle, then add the offset) and reads or writes
 * bytes there.
 *
 *   consumer MODE HANDLE_HEX OFFSET LEN SEED [DEVICE]
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

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
	uint8_t *host = NULL, *base = NULL;
	int rc = 0, dev = 0;

	if (argc >= 6 && !strcmp(argv[1], "gen")) {
		len = strtoull(argv[4], NULL, 0);
		seed = strtoull(argv[5], NULL, 0);
		for (i = 0; i < len; i++)
			putchar(tfs_pattern_byte(seed, i));
		return fflush(stdout) ? 2 : 0;
	}
	if (argc < 6 || unhex(argv[2], (uint8_t *)&h, sizeof(h))) {
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
	CK(cudaIpcOpenMemHandle((void **)&base, h, cudaIpcMemLazyEnablePeerAccess));
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
	CK(cudaIpcCloseMemHandle(base));
out:
	free(host);
	return rc;
}
