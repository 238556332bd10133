/* cudaMemcpyPeer of BYTES from device 0 to device 1 and back, with peer access enabled both
 * ways where the devices allow it (as the daemon does), the ceiling a move between devices
 * (setfattr user.tensor.device) is measured against: multi_gpu_bench.sh.
 *   gpu_peer BYTES ROUNDS     prints "peer 0->1 GB/s X" and "peer 1->0 GB/s Y" (best round) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double best(void *dst, int ddev, void *src, int sdev, size_t n, int rounds)
{
	double b = 0;

	for (int i = 0; i < rounds; i++) {
		double t0 = now(), gbs;

		if (cudaMemcpyPeer(dst, ddev, src, sdev, n) != cudaSuccess ||
		    cudaDeviceSynchronize() != cudaSuccess) {
			fprintf(stderr, "cudaMemcpyPeer failed\n");
			exit(2);
		}
		gbs = (double)n / (now() - t0) / 1e9;
		if (gbs > b)
			b = gbs;
	}
	return b;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)1 << 30;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, ndev = 0;
	void *a, *b;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2) {
		fprintf(stderr, "needs 2 GPUs (%d)\n", ndev);
		return 2;
	}
	if (cudaSetDevice(0) || cudaMalloc(&a, n) || cudaSetDevice(1) || cudaMalloc(&b, n)) {
		fprintf(stderr, "cudaMalloc of %zu bytes failed\n", n);
		return 2;
	}
	for (int d = 0; d < 2; d++) {
		int can = 0;

		cudaSetDevice(d);
		if (cudaDeviceCanAccessPeer(&can, d, 1 - d) == cudaSuccess && can &&
		    cudaDeviceEnablePeerAccess(1 - d, 0) != cudaSuccess)
			(void)cudaGetLastError();
		printf("peer access %d->%d %s\n", d, 1 - d, can ? "enabled" : "impossible");
	}
	printf("peer 0->1 GB/s %.2f\n", best(b, 1, a, 0, n, rounds));
	printf("peer 1->0 GB/s %.2f\n", best(a, 0, b, 1, n, rounds));
	return 0;
}
