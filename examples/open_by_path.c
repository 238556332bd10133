/* Opens a tensor by path and works on it in place.
 *
 *   open_by_path /mnt/tensors/x
 *
 * Host backend: adds 1 to every byte through the mapped pointer (ordinary CPU memory).
 * CUDA backend: info.data is a device pointer; a real program launches its kernels on it
 * (e.g. my_kernel<<<grid, block>>>((float *)info.data, n)). Without nvcc here, this
 * example does the same work through tfs_read/tfs_write, which copy device<->host.
 * Build: cc open_by_path.c $(pkg-config --cflags --libs tensorfs) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include <tensorfs.h>

int main(int argc, char **argv)
{
	struct tfs_tensor_info info;
	unsigned char *p, *tmp = NULL;
	tfs_tensor *t;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s TENSOR_PATH\n", argv[0]);
		return 2;
	}
	rc = tfs_open(argv[1], O_RDWR, &t);
	if (rc) {
		fprintf(stderr, "%s: %s (%s)\n", argv[1], tfs_errmsg(), tfs_strerror(rc));
		return 1;
	}
	tfs_tensor_get_info(t, &info);
	printf("%s: %llu bytes, %d dims, %s memory on device %d\n", argv[1],
	       (unsigned long long)info.bytes, info.ndim, info.on_host ? "host" : "GPU", info.device);
	if (info.on_host) {
		p = info.data;
	} else {
		tmp = malloc(info.bytes ? info.bytes : 1);
		if (!tmp || (rc = tfs_read(t, 0, tmp, info.bytes)))
			goto fail;
		p = tmp;
	}
	for (uint64_t i = 0; i < info.bytes; i++)
		p[i]++;
	if (tmp && (rc = tfs_write(t, 0, tmp, info.bytes)))
		goto fail;
	printf("added 1 to %llu bytes\n", (unsigned long long)info.bytes);
	free(tmp);
	return tfs_close(t) ? 1 : 0;
fail:
	fprintf(stderr, "%s: %s\n", argv[1], rc ? tfs_errmsg() : "out of memory");
	free(tmp);
	tfs_close(t);
	return 1;
}
