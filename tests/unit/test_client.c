/* Unit tests of the client API that need no mount: host-backend handles made here as the
 * keeper makes them (a directory of /dev/shm and an object in it), the per-process cache, direct copies, DLPack export, errors. */
#include <dlpack/dlpack.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "client_internal.h"
#include "dtype.h"
#include "meta.h"
#include "tensorfs.h"

static int fails;
/* Evaluates cond once (it often has side effects). */
#define CHECK(cond, ...)                                                   \
	do {                                                               \
		int ok_ = !!(cond);                                        \
		printf(ok_ ? "ok - " : "not ok - ");                       \
		printf(__VA_ARGS__);                                       \
		if (!ok_) {                                                \
			fails++;                                           \
			printf(" [%s]", tfs_errmsg());                     \
		}                                                          \
		printf("\n");                                              \
	} while (0)

/* The directory and the object in it, relative to /dev/shm, as in a handle. */
static char shm_dir[48], shm_name[96];

/* A 4096-byte shm object like the host backend's, and metadata naming bytes at off. */
static void make_meta(struct tfs_meta *m, tfs_dtype dt, uint64_t n, uint64_t off)
{
	memset(m, 0, sizeof(*m));
	m->dtype = dt;
	tfs_shape_1d(&m->shape, n);
	m->bytes = n * tfs_dtype_size(dt);
	strcpy(m->backend, "host");
	strcpy(m->node, "unit");
	m->has_handle = 1;
	memcpy(m->ipc_handle, "TFSHOST1", 8);
	memcpy(m->ipc_handle + 8, shm_name, strlen(shm_name) + 1);
	m->ipc_offset = off;
	m->refcount = 1;
}

static int open_m(const struct tfs_meta *m, tfs_tensor **t)
{
	char *json = tfs_meta_to_json(m, NULL);
	int rc = tfs_open_meta(json, strlen(json), t);

	free(json);
	return rc;
}

static void *thread_open(void *arg)
{
	const struct tfs_meta *m = arg;
	tfs_tensor *t;
	intptr_t bad = 0;

	for (int i = 0; i < 200; i++) {
		if (open_m(m, &t)) {
			bad++;
			continue;
		}
		if (((float *)tfs_tensor_data(t))[0] != 1.5f)
			bad++;
		tfs_close(t);
	}
	return (void *)bad;
}

int main(void)
{
	struct tfs_tensor_info info;
	struct tfs_meta m, m2;
	tfs_tensor *t = NULL, *t2 = NULL;
	DLManagedTensor *dl = NULL;
	tfs_client *c = NULL;
	char buf[64], path[128], link[128], *json;
	float f[4] = { 1.5f, 2.5f, 3.5f, 4.5f }, g[4];
	pthread_t th[4];
	int fd, rc;

	snprintf(shm_dir, sizeof(shm_dir), "/dev/shm/tensorfs.%d.0badf00d", (int)getpid());
	snprintf(shm_name, sizeof(shm_name), "%s/0123456789abcdef01234567", shm_dir + 8);
	snprintf(path, sizeof(path), "/dev/shm%s", shm_name);
	if (mkdir(shm_dir, 0711) || (fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0 ||
	    ftruncate(fd, 4096)) {
		printf("not ok - an object for the test: %s\n", strerror(errno));
		return 1;
	}
	close(fd);

	make_meta(&m, TFS_F32, 4, 0);
	rc = open_m(&m, &t);
	CHECK(rc == 0, "open a host handle from meta JSON");
	if (rc)
		return 1;
	tfs_tensor_get_info(t, &info);
	CHECK(info.on_host && info.bytes == 16 && info.dtype == TFS_F32 && info.ndim == 1 &&
	      info.shape[0] == 4 && info.data && info.writable, "info: host f32 [4], 16 bytes");
	CHECK(tfs_write(t, 0, f, sizeof(f)) == 0, "tfs_write 16 bytes");
	CHECK(tfs_read(t, 4, g, 8) == 0 && g[0] == 2.5f && g[1] == 3.5f, "tfs_read at an offset");
	CHECK(((float *)info.data)[3] == 4.5f, "the pointer sees the written bytes");
	CHECK(tfs_read(t, 12, g, 8) == -EINVAL, "read past the end: -EINVAL");
	CHECK(tfs_write(t, UINT64_MAX, f, 1) == -EINVAL, "write at a huge offset: -EINVAL");
	CHECK(tfs_read(t, 0, NULL, 4) == -EINVAL, "NULL buffer: -EINVAL");
	CHECK(tfs_read(t, 16, g, 0) == 0, "empty read at the end");

	/* pooled: a second tensor in the same allocation at offset 8 shares the mapping */
	make_meta(&m2, TFS_F32, 2, 8);
	CHECK(open_m(&m2, &t2) == 0, "open a second tensor of the same handle");
	CHECK(tfs_ipc_cache_size() == 1, "one cache entry for both");
	CHECK(t2 && ((float *)tfs_tensor_data(t2))[0] == 3.5f, "ipc_offset is added");
	CHECK(tfs_close(t) == 0 && tfs_ipc_cache_size() == 1, "closing one keeps the mapping");
	CHECK(tfs_mark_written(t2, NULL) == 0 && tfs_wait_written(t2, NULL) == 0,
	      "host backend: mark/wait written are fences");
	CHECK(tfs_mark_written(NULL, NULL) == -EINVAL, "mark written NULL: -EINVAL");
	CHECK(tfs_close(t2) == 0 && tfs_ipc_cache_size() == 0, "closing the last unmaps");
	CHECK(tfs_close(NULL) == 0, "tfs_close(NULL) is a no-op");

	/* DLPack */
	make_meta(&m, TFS_F32, 4, 0);
	m.shape.ndim = 2;
	m.shape.dims[0] = 2;
	m.shape.dims[1] = 2;
	CHECK(open_m(&m, &t) == 0, "open [2,2]");
	CHECK(tfs_to_dlpack(t, &dl) == 0, "export to DLPack");
	tfs_close(t);
	CHECK(tfs_ipc_cache_size() == 1, "the export keeps the mapping after tfs_close");
	CHECK(dl->dl_tensor.device.device_type == kDLCPU && dl->dl_tensor.ndim == 2 &&
	      dl->dl_tensor.shape[1] == 2 && dl->dl_tensor.dtype.code == kDLFloat &&
	      dl->dl_tensor.dtype.bits == 32 && dl->dl_tensor.dtype.lanes == 1 &&
	      !dl->dl_tensor.strides && ((float *)dl->dl_tensor.data)[1] == 2.5f,
	      "DLPack fields: CPU, f32, [2,2], compact, the same bytes");
	dl->deleter(dl);
	CHECK(tfs_ipc_cache_size() == 0, "the deleter releases the last reference");
	make_meta(&m, TFS_F8E4M3, 4, 0);
	CHECK(open_m(&m, &t) == 0 && tfs_to_dlpack(t, &dl) == 0 && dl->dl_tensor.dtype.code == 10 &&
	      dl->dl_tensor.dtype.bits == 8 && dl->dl_tensor.dtype.lanes == 1,
	      "fp8 export: DLPack 1.1's kDLFloat8_e4m3fn, 8 bits");
	if (dl)
		dl->deleter(dl);
	dl = NULL;
	tfs_close(t);

	/* threads */
	make_meta(&m, TFS_F32, 4, 0);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, thread_open, &m);
	rc = 0;
	for (int i = 0; i < 4; i++) {
		void *bad;
		pthread_join(th[i], &bad);
		rc += (int)(intptr_t)bad;
	}
	CHECK(rc == 0 && tfs_ipc_cache_size() == 0, "4 threads open and close 800 times");

	/* the JSON memo: the same text is not parsed again; any other text is */
	{
		tfs_tensor *t1 = NULL, *t2 = NULL;
		char *j0, *j4;
		long h1;

		make_meta(&m, TFS_F32, 4, 0);
		j0 = tfs_meta_to_json(&m, NULL);
		make_meta(&m, TFS_F32, 4, 4);
		j4 = tfs_meta_to_json(&m, NULL);
		CHECK(j0 && j4 && strlen(j0) == strlen(j4) && strcmp(j0, j4),
		      "two metadata texts of one length");
		t1 = NULL;
		rc = tfs_open_meta(j0, strlen(j0), &t1);
		h1 = tfs_mc_json_hits();
		if (rc == 0)
			tfs_close(t1);
		rc = tfs_open_meta(j0, strlen(j0), &t1);
		CHECK(rc == 0 && tfs_mc_json_hits() == h1 + 1, "the same text again: served from the memo");
		CHECK(tfs_open_meta(j4, strlen(j4), &t2) == 0 && tfs_mc_json_hits() == h1 + 1 &&
		      (char *)tfs_tensor_data(t2) == (char *)tfs_tensor_data(t1) + 4,
		      "a text differing in one byte is parsed: its own offset");
		CHECK(tfs_open_meta(j0, strlen(j0) - 1, &t) == -EBADMSG,
		      "a prefix of a remembered text: -EBADMSG");
		tfs_close(t1);
		tfs_close(t2);
		free(j0);
		free(j4);
	}

	/* read-only metadata: no write */
	t = NULL;
	json = tfs_meta_to_json(&m, NULL);
	CHECK(tfs_open_meta(json, strlen(json) - 3, &t) == -EBADMSG && !t, "truncated JSON: -EBADMSG");
	CHECK(tfs_open_meta("{}", 2, &t) == -EBADMSG, "empty object: -EBADMSG");
	free(json);
	m.ipc_handle[8] = 'x';                    /* name without the leading slash */
	CHECK(open_m(&m, &t) == -EBADMSG, "malformed host handle: -EBADMSG");
	make_meta(&m, TFS_F32, 4, 0);
	memset(m.ipc_handle + 8, 'a', 56);        /* no NUL */
	CHECK(open_m(&m, &t) == -EBADMSG, "unterminated host handle: -EBADMSG");
	make_meta(&m, TFS_F32, 2048, 0);
	CHECK(open_m(&m, &t) == -ESTALE, "tensor larger than the memory: -ESTALE");
	make_meta(&m, TFS_F32, 4, 0);
	strcpy(m.backend, "cuda");
	CHECK(open_m(&m, &t) == -EBADMSG, "host handle with backend cuda: -EBADMSG");
	memset(m.ipc_handle, 0x11, sizeof(m.ipc_handle));
	rc = open_m(&m, &t);
	CHECK(rc == -ENODEV || rc == -ESTALE, "a CUDA handle on a machine without a GPU: %d", rc);
	/* Nothing on the way is followed: a directory named like the keeper's that is a link
	 * to it, and a FIFO in it (a plain open would wait for a writer). */
	make_meta(&m, TFS_F32, 4, 0);
	snprintf(link, sizeof(link), "/dev/shm/tensorfs.%d.0badf00e", (int)getpid());
	m.ipc_handle[8 + strlen(shm_dir + 8) - 1] = 'e';
	CHECK(symlink(shm_dir, link) == 0 && open_m(&m, &t) == -ENOTDIR,
	      "a handle through a linked directory: -ENOTDIR");
	unlink(link);
	make_meta(&m, TFS_F32, 4, 0);
	snprintf(link, sizeof(link), "%s/00000000000000000000fffe", shm_dir);
	memcpy(m.ipc_handle + 8 + strlen(shm_dir + 8) + 1, "00000000000000000000fffe", 24);
	CHECK(mkfifo(link, 0600) == 0 && open_m(&m, &t) == -EBADMSG,
	      "a handle naming a FIFO: -EBADMSG, no wait");
	unlink(link);
	make_meta(&m, TFS_F32, 4, 0);
	unlink(path);
	CHECK(open_m(&m, &t) == -ESTALE && strstr(tfs_errmsg(), "no longer exists"),
	      "a handle whose memory is gone: -ESTALE with a message");
	rmdir(shm_dir);

	/* files that are not tensors */
	snprintf(buf, sizeof(buf), "/tmp/tfs-unit-client.%d", (int)getpid());
	fd = open(buf, O_CREAT | O_WRONLY, 0600);
	close(fd);
	rc = tfs_open(buf, O_RDONLY, &t);
	CHECK(rc == -ENOTSUP && strstr(tfs_errmsg(), "not on a tensorfs mount"),
	      "a file outside a mount: -ENOTSUP");
	unlink(buf);
	CHECK(tfs_open(buf, O_RDONLY, &t) == -ENOENT, "a missing path: -ENOENT");
	CHECK(tfs_open("/tmp", O_RDONLY, &t) == -EISDIR, "a directory: -EISDIR");
	CHECK(tfs_open(NULL, O_RDONLY, &t) == -EINVAL, "NULL path: -EINVAL");

	/* one line of /proc/self/mountinfo (lib/mounts.c), no I/O */
	{
		static struct tfs_mount mi;

		CHECK(tfs_mountinfo_line("36 35 0:40 / /mnt/my\\040t\\134s rw,relatime shared:1 - "
					 "fuse.tensorfs tensorfs rw,user_id=1000,group_id=0\n",
					 &mi) == 0 && !strcmp(mi.mp, "/mnt/my t\\s") &&
		      !strcmp(mi.fstype, "fuse.tensorfs") && mi.dev == makedev(0, 40) &&
		      mi.user_id == 1000,
		      "mountinfo: escapes undone, the device, the type after -, user_id");
		CHECK(tfs_mountinfo_line("36 35 8:1 / /x rw - ext4 /dev/sda1 rw", &mi) == 0 &&
		      !strcmp(mi.mp, "/x") && !strcmp(mi.fstype, "ext4") &&
		      mi.dev == makedev(8, 1) && mi.user_id == -1,
		      "mountinfo: no optional fields, no newline, no user_id");
		CHECK(tfs_mountinfo_line("1 2 0:3 / /y rw - fuse.tensorfs t rw,xuser_id=5,"
					 "user_id=7x", &mi) == 0 && mi.user_id == -1,
		      "mountinfo: a malformed user_id is none");
		CHECK(tfs_mountinfo_line("36 35 0:40 / /x rw shared:1", &mi) == -EINVAL,
		      "mountinfo: no \" - \": -EINVAL");
		CHECK(tfs_mountinfo_line("36 35 0:40", &mi) == -EINVAL,
		      "mountinfo: too few fields: -EINVAL");
		CHECK(tfs_mountinfo_line("36 35 zero / /x rw - ext4 /dev/sda1 rw", &mi) == -EINVAL,
		      "mountinfo: a device that is not major:minor: -EINVAL");
		CHECK(tfs_mountinfo_line("1 2 0:3 / /a rw - \n", &mi) == -EINVAL,
		      "mountinfo: an empty type: -EINVAL");
	}

	/* Redis path errors that need no server */
	CHECK(tfs_connect("http://x", 500, &c) == -EINVAL && !c, "bad URL: -EINVAL");
	rc = tfs_connect("unix:///nonexistent/tfs.sock", 500, &c);
	CHECK(rc == -ENOENT || rc == -ECONNREFUSED, "no server: %d (%s)", rc, tfs_errmsg());
	CHECK(strcmp(tfs_strerror(-ENOENT), "No such file or directory") == 0 &&
	      strcmp(tfs_strerror(EEXIST), "File exists") == 0, "tfs_strerror both signs");
	return fails ? 1 : 0;
}
