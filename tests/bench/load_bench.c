/* tfs_load / tfs_save timed inside one process, as a program that loads weights sees them
 * (tests/bench/load_bench.sh runs it). The first load pays the CUDA context and the pinned
 * buffers and is reported apart ("cold"); the others reuse both.
 *   load_bench load FILE DEST N          N warm loads (DEST removed before each)
 *   load_bench save FILE DEST OUT N      one load, then N saves of DEST to OUT
 *   load_bench sweep FILE DEST           warm loads over threads x piece sizes
 *   load_bench cold FILE DEST            a fresh process: the CUDA context (cudaFree(0)),
 *                                        16 pinned 8 MiB buffers, then one load
 *   load_bench alloc FILE DEST           safetensors: create and shape every tensor of
 *                                        FILE, no copy (allocation + the daemon's zero-fill)
 * Output: one line per timing, "ROW SECONDS GB/s" (GB = 1e9 bytes of FILE). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "benchutil.h"
#include "dtype.h"
#include "formats.h"
#include "tensorfs.h"

static int rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP || type == FTW_D ? rmdir(p) : unlink(p);
}

static void rm_tree(const char *p)
{
	nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static double fsize(const char *f)
{
	struct stat st;

	return stat(f, &st) ? 0 : (double)st.st_size;
}

static int load_once(const char *row, const char *file, const char *dest, int threads)
{
	struct tfs_load_opts o;
	double t0, dt;
	int rc;

	tfs_load_opts_init(&o);
	o.threads = threads;
	o.via_file = 0;     /* the mapped path, in a process whose CUDA is warm */
	rm_tree(dest);
	t0 = bench_now();
	rc = tfs_load(file, dest, &o);
	dt = bench_now() - t0;
	if (rc) {
		fprintf(stderr, "tfs_load: %s\n", tfs_errmsg());
		return 1;
	}
	printf("%s %.4f %.2f\n", row, dt, fsize(file) / dt / 1e9);
	fflush(stdout);
	return 0;
}

/* Every tensor of a safetensors file created and shaped one after the other, no copy. */
static int alloc_only(const char *file, const char *dest)
{
	struct st_header h = { 0 };
	uint8_t first[8];
	uint64_t hlen, total = 0;
	char why[256], path[4096], shape[1024], *json;
	double t0, dt;
	int fd = open(file, O_RDONLY), rc = 1;

	if (fd < 0 || pread(fd, first, 8, 0) != 8 || tfs_st_header_len(first, (uint64_t)fsize(file), &hlen))
		return 1;
	json = malloc(hlen);
	if (!json || pread(fd, json, hlen, 8) != (ssize_t)hlen ||
	    tfs_st_parse(json, hlen, (uint64_t)fsize(file) - 8 - hlen, &h, why, sizeof(why)))
		goto out;
	rm_tree(dest);
	mkdir(dest, 0755);
	t0 = bench_now();
	for (size_t i = 0; i < h.n; i++) {
		const char *dn = tfs_dtype_name(h.e[i].dtype);
		int tfd;

		snprintf(path, sizeof(path), "%s/%s", dest, h.e[i].name);
		for (char *s = path + strlen(dest) + 1; (s = strchr(s, '/')); s++) {
			*s = 0;
			mkdir(path, 0755);
			*s = '/';
		}
		tfd = open(path, O_CREAT | O_EXCL | O_RDWR, 0644);
		tfs_shape_format(&h.e[i].shape, shape, sizeof(shape));
		if (tfd < 0 || fsetxattr(tfd, "user.tensor.dtype", dn, strlen(dn), 0) ||
		    fsetxattr(tfd, "user.tensor.shape", shape, strlen(shape), 0)) {
			perror(path);
			goto out;
		}
		close(tfd);
		total += h.e[i].end - h.e[i].begin;
	}
	dt = bench_now() - t0;
	printf("alloc %.4f %.2f\n", dt, (double)total / dt / 1e9);
	rc = 0;
out:
	rm_tree(dest);
	tfs_st_free(&h);
	free(json);
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n, rc = 0;

	if (argc >= 5 && !strcmp(mode, "load")) {
		n = atoi(argv[4]);
		rc |= load_once("lib-load-cold", argv[2], argv[3], 0);
		for (int i = 0; i < n && !rc; i++)
			rc |= load_once("lib-load", argv[2], argv[3], 0);
		rm_tree(argv[3]);
		return rc;
	}
	if (argc >= 6 && !strcmp(mode, "save")) {
		struct tfs_save_opts o;

		n = atoi(argv[5]);
		if (load_once("lib-load-cold", argv[2], argv[3], 0))
			return 1;
		tfs_save_opts_init(&o);
		o.replace = 1;
		if (getenv("LB_THREADS"))
			o.threads = atoi(getenv("LB_THREADS"));
		for (int i = 0; i < n && !rc; i++) {
			double t0, dt;

			unlink(argv[4]);          /* freeing the last one's pages is not the save */
			t0 = bench_now();
			if ((rc = tfs_save(argv[3], argv[4], &o))) {
				fprintf(stderr, "tfs_save: %s\n", tfs_errmsg());
				break;
			}
			dt = bench_now() - t0;
			printf("lib-save%s %.4f %.2f\n", getenv("LB_TAG") ? getenv("LB_TAG") : "", dt, fsize(argv[4]) / dt / 1e9);
			fflush(stdout);
		}
		rm_tree(argv[3]);
		return rc != 0;
	}
	if (argc >= 4 && !strcmp(mode, "sweep")) {
		static const int th[] = { 2, 4, 8, 12, 16 }, mb[] = { 4, 8, 16, 32 };
		char row[64], v[16];

		rc |= load_once("lib-load-cold", argv[2], argv[3], 0);
		for (size_t c = 0; c < sizeof(mb) / sizeof(mb[0]) && !rc; c++) {
			snprintf(v, sizeof(v), "%d", mb[c]);
			setenv("TFS_LOAD_CHUNK_MB", v, 1);
			for (size_t t = 0; t < sizeof(th) / sizeof(th[0]) && !rc; t++) {
				/* the first run of a size allocates its pinned buffers */
				snprintf(row, sizeof(row), "sweep-t%d-c%dM", th[t], mb[c]);
				rc |= load_once("sweep-warmup", argv[2], argv[3], th[t]);
				rc |= load_once(row, argv[2], argv[3], th[t]);
			}
		}
		rm_tree(argv[3]);
		return rc;
	}
	if (argc >= 4 && !strcmp(mode, "cold")) {
		void *h = dlopen("libcudart.so", RTLD_NOW), *p[16];
		int (*cfree)(void *), (*halloc)(void **, size_t, unsigned), (*hfree)(void *);
		double t0;

		if (!h) {
			fprintf(stderr, "no libcudart: %s\n", dlerror());
			return 1;
		}
		*(void **)&cfree = dlsym(h, "cudaFree");
		*(void **)&halloc = dlsym(h, "cudaHostAlloc");
		*(void **)&hfree = dlsym(h, "cudaFreeHost");
		t0 = bench_now();
		cfree(NULL);
		printf("cold-cuda-context %.4f 0\n", bench_now() - t0);
		t0 = bench_now();
		for (int i = 0; i < 16; i++)
			halloc(&p[i], 8u << 20, 1);
		printf("cold-pinned-128MiB %.4f 0\n", bench_now() - t0);
		for (int i = 0; i < 16; i++)
			hfree(p[i]);
		rc = load_once("cold-first-load-after-both", argv[2], argv[3], 0);
		rm_tree(argv[3]);
		return rc;
	}
	if (argc >= 4 && !strcmp(mode, "alloc"))
		return alloc_only(argv[2], argv[3]);
	fprintf(stderr, "usage: load_bench load FILE DEST N | save FILE DEST OUT N | sweep FILE DEST | cold FILE DEST | alloc FILE DEST\n");
	return 2;
}
