/* A command-line front to libtensorfs for the client tests (client/t_*.sh): each subcommand
 * calls the library once and prints the result, or "error: <errno name>: <message>" and exits 1. */
#include <dirent.h>
#include <dlpack/dlpack.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"
#include "dtype.h"
#include "meta.h"
#include "shape.h"
#include "strutil.h"
#include "tensorfs.h"

/* swapped PATH OTHER: while set, every getxattr by path swaps the two names (three
 * renames through a third name) before it reads and swaps them back after, so a caller
 * that stats PATH, reads its metadata by path and opens it meets the other tensor in
 * between and its own again at the open: the worst a racer can do, every time. */
static const char *swap_a, *swap_b;

static void swap_names(void)
{
	char t[4096];

	snprintf(t, sizeof(t), "%s.swap", swap_a);
	if (rename(swap_a, t) || rename(swap_b, swap_a) || rename(t, swap_b))
		fprintf(stderr, "swap: %s\n", strerror(errno));
}

ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	ssize_t n;

	if (swap_a)
		swap_names();
	n = syscall(SYS_getxattr, path, name, value, size);
	if (swap_a) {
		int e = errno;

		swap_names();
		errno = e;
	}
	return n;
}

/* copy: done and total of the last progress report. */
static uint64_t copy_done, copy_total;

static void copy_progress(void *arg, uint64_t done, uint64_t total)
{
	(void)arg;
	copy_done = done;
	copy_total = total;
}

static int fail(int rc)
{
	const char *name = strerrorname_np(-rc);   /* EBADF, ESTALE...: every errno */

	printf("error: %s: %s\n", name ? name : "E?", tfs_errmsg());
	return 1;
}

static void print_info(const tfs_tensor *t)
{
	struct tfs_tensor_info in;

	tfs_tensor_get_info(t, &in);
	printf("%s [", tfs_dtype_name(in.dtype));
	for (int i = 0; i < in.ndim; i++)
		printf("%s%lld", i ? "," : "", (long long)in.shape[i]);
	printf("] %llu %s %s\n", (unsigned long long)in.bytes, in.on_host ? "host" : "cuda",
	       in.writable ? "rw" : "ro");
}

static int hexdump(tfs_tensor *t, uint64_t off, size_t len)
{
	unsigned char *b = malloc(len ? len : 1);
	int rc;

	if (!b)
		return -ENOMEM;
	if ((rc = tfs_read(t, off, b, len)) == 0) {
		for (size_t i = 0; i < len; i++)
			printf("%02x", b[i]);
		printf("\n");
	}
	free(b);
	return rc;
}

static int unhex(const char *s, unsigned char *out, size_t *n)
{
	size_t l = strlen(s);

	if (l % 2 || l / 2 > 4096 || tfs_hex_decode(s, l, out, l / 2))
		return -EINVAL;
	*n = l / 2;
	return 0;
}

/* qmany: see main. Items that fail print their errno name; returns 0 unless the calls'
 * arguments were refused (then nothing was sent). */
static int many(tfs_client *c, int n, char **args)
{
	struct tfs_create_req reqs[64];
	char names[64][256];
	const char *np[64];
	int64_t dims[64];
	tfs_tensor *out[64];
	int rcs[64], urcs[64], rc;

	if (n < 1 || n > 64)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		char *colon;

		snprintf(names[i], sizeof(names[i]), "%s", args[i]);
		colon = strrchr(names[i], ':');
		dims[i] = colon ? strtoll(colon + 1, NULL, 0) : 8;
		if (colon)
			*colon = '\0';
		np[i] = names[i];
		reqs[i] = (struct tfs_create_req){ names[i], TFS_U8, 1, &dims[i], -1 };
	}
	for (int i = 0; i < n; i++)
		rcs[i] = 1;              /* not sent: the call refused its arguments */
	rc = tfs_create_many(c, (size_t)n, reqs, rcs, out);
	if (rcs[0] == 1)
		return rc;
	for (int i = 0; i < n; i++) {
		unsigned char b = (unsigned char)(i + 1), back = 0;

		if (!rcs[i] && dims[i] > 0 &&
		    (tfs_write(out[i], 0, &b, 1) || tfs_read(out[i], 0, &back, 1) || back != b))
			rcs[i] = -EIO;
		tfs_close(out[i]);
	}
	tfs_unlink_many(c, (size_t)n, np, urcs);
	for (int i = 0; i < n; i++)
		printf("%s %s %s\n", names[i], rcs[i] ? tfs_errno_name(rcs[i]) : "ok",
		       urcs[i] ? tfs_errno_name(urcs[i]) : "ok");
	return 0;
}

/* qwrite: n tensors of bytes (u8) named NAME<i>, in DIR<i % dirs>/ when dirs > 0 (each
 * directory's tensors share other blocks), made by tfs_create_many 64 at a time and all
 * held; each written whole with tfs_write (the byte i % 251 + 1), read back whole with
 * tfs_read. Prints the tensors whose bytes did not come back, and the descriptors this
 * process has open while it holds them all. The tensors stay. */
static int qwrite(tfs_client *c, const char *name, int n, size_t bytes, const char *dir, int dirs)
{
	tfs_tensor **ts = calloc((size_t)n, sizeof(*ts));
	unsigned char *b = malloc(bytes), *back = malloc(bytes);
	char (*names)[256] = calloc((size_t)n, 256);
	int64_t dim = (int64_t)bytes;
	int bad = 0, fds = 0, rc = 0;
	DIR *d;

	if (!ts || !b || !back || !names || n < 1) {
		rc = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n && !rc; i += 64) {
		struct tfs_create_req reqs[64];
		int rcs[64], k = n - i < 64 ? n - i : 64;

		for (int j = 0; j < k; j++) {
			if (dirs > 0)
				snprintf(names[i + j], 256, "%s%d/%s%d", dir, (i + j) % dirs, name, i + j);
			else
				snprintf(names[i + j], 256, "%s%d", name, i + j);
			reqs[j] = (struct tfs_create_req){ names[i + j], TFS_U8, 1, &dim, -1 };
		}
		rc = tfs_create_many(c, (size_t)k, reqs, rcs, ts + i);
	}
	for (int i = 0; i < n && !rc; i++) {
		memset(b, i % 251 + 1, bytes);
		memset(back, 0, bytes);
		if (tfs_write(ts[i], 0, b, bytes) || tfs_read(ts[i], 0, back, bytes) ||
		    memcmp(b, back, bytes)) {
			printf("bad %s\n", names[i]);
			bad++;
		}
	}
	if ((d = opendir("/proc/self/fd"))) {
		while (readdir(d))
			fds++;
		closedir(d);
	}
	printf("bad %d\nfds %d\n", bad, fds - 3);   /* less ., .. and the DIR's own */
out:
	for (int i = 0; ts && i < n; i++)
		tfs_close(ts[i]);
	free(ts);
	free(b);
	free(back);
	free(names);
	return rc;
}

struct qthread {
	const char *url;
	int k, n, bad;
};

/* One client per thread, all in this process: each tensor's answer must be its own. */
static void *qthread_main(void *arg)
{
	struct qthread *q = arg;
	struct tfs_create_req reqs[8];
	char names[8][64];
	const char *np[8];
	int64_t dim = q->k + 1;
	tfs_tensor *out[8];
	tfs_client *c;

	if (tfs_connect(q->url, 10000, &c) ||
	    (getenv("TFS_NODE") && tfs_client_set_node(c, getenv("TFS_NODE")))) {
		q->bad = q->n;
		return NULL;
	}
	for (int r = 0; r < q->n; r++) {
		for (int i = 0; i < 8; i++) {
			snprintf(names[i], sizeof(names[i]), "th%d_%d_%d", q->k, r, i);
			np[i] = names[i];
			reqs[i] = (struct tfs_create_req){ names[i], TFS_U8, 1, &dim, -1 };
		}
		if (tfs_create_many(c, 8, reqs, NULL, out)) {
			q->bad++;
			continue;
		}
		for (int i = 0; i < 8; i++) {
			struct tfs_tensor_info info;

			if (tfs_tensor_get_info(out[i], &info) || info.bytes != (uint64_t)dim)
				q->bad++;
			tfs_close(out[i]);
		}
		if (tfs_unlink_many(c, 8, np, NULL))
			q->bad++;
	}
	tfs_disconnect(c);
	return NULL;
}

/* qthreads: 4 threads, n batches of 8 each; prints the failures. */
static int threads(const char *url, int n)
{
	struct qthread q[4];
	pthread_t th[4];
	int bad = 0;

	for (int k = 0; k < 4; k++) {
		q[k] = (struct qthread){ url, k, n, 0 };
		pthread_create(&th[k], NULL, qthread_main, &q[k]);
	}
	for (int k = 0; k < 4; k++) {
		pthread_join(th[k], NULL);
		bad += q[k].bad;
	}
	printf("failures %d\n", bad);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	tfs_tensor *t = NULL;
	tfs_client *c = NULL;
	int rc = 0;

	if (!strcmp(cmd, "info") && argc == 3) {                 /* info PATH */
		if ((rc = tfs_open(argv[2], O_RDONLY, &t)))
			return fail(rc);
		print_info(t);
	} else if (!strcmp(cmd, "read") && argc == 5) {          /* read PATH OFF LEN */
		if ((rc = tfs_open(argv[2], O_RDONLY, &t)) ||
		    (rc = hexdump(t, strtoull(argv[3], NULL, 0), strtoul(argv[4], NULL, 0))))
			goto err;
	} else if (!strcmp(cmd, "write") && argc == 5) {         /* write PATH OFF HEX */
		unsigned char b[4096];
		size_t n;

		if (unhex(argv[4], b, &n))
			return fail(-EINVAL);
		if ((rc = tfs_open(argv[2], O_RDWR, &t)) ||
		    (rc = tfs_write(t, strtoull(argv[3], NULL, 0), b, n)))
			goto err;
	} else if (!strcmp(cmd, "write-ro") && argc == 3) {      /* write-ro PATH */
		if ((rc = tfs_open(argv[2], O_RDONLY, &t)) || (rc = tfs_write(t, 0, "x", 1)))
			goto err;
	} else if (!strcmp(cmd, "fill") && argc == 4) {          /* fill PATH BYTE: via pointer */
		if ((rc = tfs_open(argv[2], O_RDWR, &t)))
			goto err;
		if (!tfs_tensor_data(t) || t->meta.backend[0] != 'h') {
			rc = -ENOTSUP;
			goto err;
		}
		memset(tfs_tensor_data(t), (int)strtol(argv[3], NULL, 0), t->meta.bytes);
	} else if (!strcmp(cmd, "data") && argc == 3) {          /* data PATH: the pointer */
		struct tfs_tensor_info in;

		if ((rc = tfs_open(argv[2], O_RDWR, &t)))
			goto err;
		tfs_tensor_get_info(t, &in);
		printf("info.data %s, mapped %d\n", in.data ? "set" : "NULL", tfs_ipc_cache_size());
		if (!tfs_tensor_data(t)) {
			rc = t->via_fd ? -EREMOTE : -ENODATA;
			goto err;
		}
		printf("data set\n");
	} else if (!strcmp(cmd, "copy") && (argc == 4 || argc == 5)) {   /* copy SRC DEST [cancel] */
		struct tfs_copy_opts o;
		volatile int cancel = argc == 5;   /* cancel: set before the copy starts */

		tfs_copy_opts_init(&o);
		o.recursive = 1;
		o.threads = 2;
		o.progress = copy_progress;
		o.cancel = &cancel;
		if ((rc = tfs_copy(argv[2], argv[3], &o)))
			return fail(rc);
		printf("copied %llu of %llu\n", (unsigned long long)copy_done,
		       (unsigned long long)copy_total);
	} else if (!strcmp(cmd, "mark") && argc == 3) {          /* mark PATH */
		if ((rc = tfs_open(argv[2], O_RDWR, &t)) || (rc = tfs_mark_written(t, NULL)))
			goto err;
	} else if (!strcmp(cmd, "wait") && argc == 3) {          /* wait PATH */
		if ((rc = tfs_open(argv[2], O_RDONLY, &t)) || (rc = tfs_wait_written(t, NULL)))
			goto err;
	} else if (!strcmp(cmd, "hold") && argc == 4) {          /* hold PATH SECS */
		if ((rc = tfs_open(argv[2], O_RDONLY, &t)))
			goto err;
		printf("held\n");
		fflush(stdout);
		sleep((unsigned)atoi(argv[3]));
	} else if (!strcmp(cmd, "holdgrow") && argc == 4) {      /* holdgrow PATH GO */
		/* A holder of a tensor that another process grows (docs/vmm.md#growth): opens
		 * and maps it, says "held"; once the file GO exists, reads the bytes it had
		 * again through the same pointer (tfs_read copies from it), says whether the
		 * pointer is still the one tfs_tensor_get_info gave, and writes 8 bytes 5a at
		 * 0 through it; then, still holding it, opens the tensor again: says whether the
		 * new open's pointer is the first one and its size, and writes 8 bytes a5 at
		 * its end through it. */
		struct tfs_tensor_info in0, in1, in2;
		tfs_tensor *t2;
		int i;

		if ((rc = tfs_open(argv[2], O_RDWR, &t)))
			goto err;
		tfs_tensor_get_info(t, &in0);
		printf("held\n");
		fflush(stdout);
		for (i = 0; i < 6000 && access(argv[3], F_OK); i++)
			usleep(20000);
		tfs_tensor_get_info(t, &in1);
		printf("pointer %s\n", in0.data && in0.data == in1.data ? "same" : "moved");
		if ((rc = hexdump(t, 0, (size_t)in0.bytes)) ||
		    (rc = tfs_write(t, 0, "\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a", 8)))
			goto err;
		printf("wrote\n");
		if ((rc = tfs_open(argv[2], O_RDWR, &t2)))
			goto err;
		tfs_tensor_get_info(t2, &in2);
		printf("reopen %s %llu\n", in2.data == in0.data ? "same" : "moved",
		       (unsigned long long)in2.bytes);
		rc = in2.bytes < 8 ? -EINVAL :
		     tfs_write(t2, in2.bytes - 8, "\xa5\xa5\xa5\xa5\xa5\xa5\xa5\xa5", 8);
		tfs_close(t2);
		if (rc)
			goto err;
	} else if (!strcmp(cmd, "reopen") && argc == 4) {       /* reopen PATH SHELLCMD */
		/* One process opens, closes, lets the command change the tensor and opens
		 * again: what the second open shows must not come from the first. */
		for (int pass = 0; pass < 2; pass++) {
			if ((rc = tfs_open(argv[2], O_RDONLY, &t)))
				goto err;
			print_info(t);
			tfs_close(t);
			t = NULL;
			fflush(stdout);
			if (pass == 0 && system(argv[3]) != 0) {
				rc = -ECHILD;
				goto err;
			}
		}
		printf("remembered %ld\n", tfs_mc_hits());
	} else if (!strcmp(cmd, "swapped") && argc == 4) {       /* swapped PATH OTHER */
		/* Opens PATH while its name and OTHER's swap around every read of metadata by
		 * path (getxattr above): prints the tensor and whether its metadata is that of
		 * the file behind its descriptor. */
		struct stat fs;

		swap_a = argv[2];
		swap_b = argv[3];
		rc = tfs_open(argv[2], O_RDONLY, &t);
		swap_a = swap_b = NULL;
		if (rc)
			goto err;
		print_info(t);
		printf(fstat(t->fd, &fs) || (uint64_t)fs.st_size != t->meta.bytes ||
		       (uint64_t)fs.st_ino != t->meta.ino ? "other's metadata\n" : "its own\n");
	} else if (!strcmp(cmd, "replace") && argc == 4) {      /* replace PATH SECS */
		/* Makes PATH.tmp and renames it over PATH, again and again for SECS seconds:
		 * prints how many times. No library call: the racer of rename_open.sh. */
		char tmp[4096];
		time_t end = time(NULL) + atoi(argv[3]);
		long n = 0;
		int fd;

		snprintf(tmp, sizeof(tmp), "%s.tmp", argv[2]);
		while (time(NULL) < end) {
			if ((fd = open(tmp, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) < 0 ||
			    close(fd) || rename(tmp, argv[2]))
				return fail(-errno);
			n++;
		}
		printf("replaced %ld\n", n);
	} else if (!strcmp(cmd, "opens") && argc == 4) {        /* opens PATH SECS */
		/* open(2) and close of PATH for SECS seconds: prints how many, and how many
		 * failed with ENOENT and otherwise. */
		time_t end = time(NULL) + atoi(argv[3]);
		long n = 0, enoent = 0, other = 0;
		int fd;

		while (time(NULL) < end) {
			if ((fd = open(argv[2], O_RDONLY | O_CLOEXEC)) >= 0)
				close(fd);
			else if (errno == ENOENT)
				enoent++;
			else
				other++;
			n++;
		}
		printf("opens %ld enoent %ld other %ld\n", n, enoent, other);
	} else if (!strcmp(cmd, "cold") && (argc == 4 || argc == 5)) {   /* cold PATH N [fork|first] */
		/* Opens and closes N times, each open finding nothing held; counts the tensors
		 * whose metadata does not describe the file behind their descriptor, or whose
		 * first byte is not their length (what the racer in names/t_open_ahead.sh
		 * writes). With fork, a child does the same after the loop. With first, each
		 * open is as the process's first of the path (no stat before the read of the
		 * metadata), and how many went that way is printed too. */
		int n = atoi(argv[3]), child = 0, first = argc == 5 && !strcmp(argv[4], "first");
		int forks = argc == 5 && !first;
		long bad = 0, base = 0, gone = 0, firsts = tfs_open_first_count();

		for (int pass = 0; pass < 1 + forks; pass++) {
			if (pass == 1) {
				fflush(stdout);
				pid_t pid = fork();

				if (pid < 0)
					return fail(-errno);
				if (pid > 0) {
					int ws;

					if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) ||
					    WEXITSTATUS(ws))
						return 1;
					break;
				}
				child = 1;
				base = tfs_ahead_count();
				bad = gone = 0;
			}
			for (int i = 0; i < n; i++) {
				struct stat fs;
				unsigned char b = 0;

				/* ENOENT, which a name replaced by a rename must never give
				 * (names/t_rename_open.sh), is counted apart, as "gone". */
				if (first)
					tfs_mc_path_forget();
				if ((rc = tfs_open(argv[2], O_RDONLY, &t)) == -ENOENT) {
					gone++;
					continue;
				}
				if (rc)
					goto err;
				if (fstat(t->fd, &fs) || (uint64_t)fs.st_size != t->meta.bytes ||
				    (t->meta.bytes && (tfs_read(t, 0, &b, 1) ||
						       b != (unsigned char)t->meta.bytes)))
					bad++;
				tfs_close(t);
				t = NULL;
			}
			printf("%sahead %ld", child ? "child " : "", tfs_ahead_count() - base);
			if (first)
				printf(" first %ld", tfs_open_first_count() - firsts);
			printf(" bad %ld", bad);
			printf(gone ? " gone %ld\n" : "\n", gone);
		}
		if (child) {
			/* Not exit: a sanitizer's leak check in a child of a threaded
			 * process reports the parent's threads as running. */
			fflush(stdout);
			_exit(0);
		}
	} else if (!strcmp(cmd, "share") && argc == 4) {        /* share PATH SHELLCMD */
		/* Opens, lets the command act, opens again while holding the first (shared
		 * when unchanged), closes the first and reads through the second, then opens
		 * read-write (never shared with read-only ones). */
		tfs_tensor *t2 = NULL, *t3 = NULL;
		unsigned char b;

		if ((rc = tfs_open(argv[2], O_RDONLY, &t)))
			goto err;
		if (system(argv[3]) != 0) {
			rc = -ECHILD;
			goto err;
		}
		if ((rc = tfs_open(argv[2], O_RDONLY, &t2)))
			goto err;
		print_info(t2);
		printf("shared %ld\n", tfs_fds_shared());
		tfs_close(t);
		t = t2;
		if ((rc = tfs_read(t, 0, &b, 1)) || (rc = tfs_open(argv[2], O_RDWR, &t3)))
			goto err;
		printf("shared %ld\n", tfs_fds_shared());
		tfs_close(t3);
	} else if (!strcmp(cmd, "cache") && argc >= 3) {        /* cache PATH...: opens all */
		tfs_tensor *ts[16];
		int n = 0;

		for (int i = 2; i < argc && n < 16 && !rc; i++)
			if ((rc = tfs_open(argv[i], O_RDONLY, &ts[n])) == 0)
				n++;
		if (!rc)
			printf("%d\n", tfs_ipc_cache_size());
		for (int i = 0; i < n; i++)
			tfs_close(ts[i]);
		if (rc)
			goto err;
		printf("%d\n", tfs_ipc_cache_size());
	} else if (!strcmp(cmd, "unlinked") && argc == 3) {     /* unlinked PATH */
		int fd = open(argv[2], O_RDWR);

		if (fd < 0)
			return fail(-errno);
		if (unlink(argv[2]))
			return fail(-errno);
		rc = tfs_open_fd(fd, &t);
		close(fd);
		if (rc)
			goto err;
		print_info(t);
		if ((rc = tfs_write(t, 0, "\x2a", 1)) || (rc = hexdump(t, 0, 1)))
			goto err;
	} else if (!strcmp(cmd, "open-meta") && (argc == 3 || argc == 4)) {
		/* open-meta FILE [LEN]: the info, then LEN bytes from 0 as hex */
		char buf[8192];
		FILE *f = fopen(argv[2], "r");
		size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;

		if (f)
			fclose(f);
		if ((rc = tfs_open_meta(buf, n, &t)))
			goto err;
		print_info(t);
		if (argc == 4 && (rc = hexdump(t, 0, strtoul(argv[3], NULL, 0))))
			goto err;
	} else if (!strcmp(cmd, "dlpack") && argc == 3) {       /* dlpack PATH */
		DLManagedTensor *dl;

		if ((rc = tfs_open(argv[2], O_RDONLY, &t)) || (rc = tfs_to_dlpack(t, &dl)))
			goto err;
		tfs_close(t);
		t = NULL;
		printf("device %d code %d bits %d ndim %d first %d\n", dl->dl_tensor.device.device_type,
		       dl->dl_tensor.dtype.code, dl->dl_tensor.dtype.bits, dl->dl_tensor.ndim,
		       dl->dl_tensor.data && dl->dl_tensor.device.device_type == kDLCPU ?
		       ((unsigned char *)dl->dl_tensor.data)[0] : -1);
		printf("cache %d\n", tfs_ipc_cache_size());
		dl->deleter(dl);
		printf("cache %d\n", tfs_ipc_cache_size());
	} else if (!strncmp(cmd, "q", 1) && argc >= 4) {        /* qXXX URL NAME [args] */
		/* A reply comes at once, but a loaded machine (daemons sharing a GPU) may take
		 * seconds: tests that want a give-up name TFS_TIMEOUT_MS. */
		int timeout = getenv("TFS_TIMEOUT_MS") ? atoi(getenv("TFS_TIMEOUT_MS")) : 20000;

		if ((rc = tfs_connect(argv[2], timeout, &c)))
			goto err;
		if (getenv("TFS_NODE") && (rc = tfs_client_set_node(c, getenv("TFS_NODE"))))
			goto err;
		if (getenv("TFS_QUEUE") && (rc = tfs_client_set_queue(c, getenv("TFS_QUEUE"))))
			goto err;
		if (getenv("TFS_LEASE") && (rc = tfs_client_set_lease(c, atoi(getenv("TFS_LEASE")))))
			goto err;
		if (!strcmp(cmd, "qcreate") && argc == 6) {      /* qcreate URL NAME DTYPE SHAPE */
			struct tfs_shape sh;
			int64_t dims[TFS_MAX_DIMS];
			tfs_dtype dt;

			if (tfs_dtype_parse(argv[4], strlen(argv[4]), &dt) ||
			    tfs_shape_parse(argv[5], strlen(argv[5]), &sh)) {
				rc = -EINVAL;
				goto err;
			}
			for (int i = 0; i < sh.ndim; i++)
				dims[i] = (int64_t)sh.dims[i];
			rc = tfs_create(c, argv[3], dt, sh.ndim, dims, -1);
		} else if (!strcmp(cmd, "qget")) {               /* qget URL NAME [SECS] */
			if ((rc = tfs_get(c, argv[3], &t)))
				goto err;
			print_info(t);
			fflush(stdout);
			/* With TFS_LEASE: renewed every second while it sleeps. */
			for (int s = argc > 4 ? atoi(argv[4]) : 0; s > 0; s--) {
				sleep(1);
				if (getenv("TFS_LEASE") && (rc = tfs_renew(c, argv[3])))
					goto err;
			}
		} else if (!strcmp(cmd, "qgetdel")) {            /* qgetdel URL NAME: get, read, delete */
			if ((rc = tfs_get(c, argv[3], &t)))
				goto err;
			print_info(t);
			if ((rc = hexdump(t, 0, t->meta.bytes < 8 ? t->meta.bytes : 8)))
				goto err;
			tfs_close(t);
			t = NULL;
			rc = tfs_delete(c, argv[3]);
		} else if (!strcmp(cmd, "qdelete")) {
			rc = tfs_delete(c, argv[3]);
		} else if (!strcmp(cmd, "qmany")) {             /* qmany URL NAME[:BYTES]...: */
			/* tfs_create_many of u8 [BYTES] (default 8) tensors, each written with its
			 * index + 1 through the mapping the answer gave and read back; then
			 * tfs_unlink_many of the same names. Prints each item's two results. */
			rc = many(c, argc - 3, argv + 3);
		} else if (!strcmp(cmd, "qwrite") && (argc == 6 || argc == 8)) {
			/* qwrite URL NAME N BYTES [DIR DIRS] */
			rc = qwrite(c, argv[3], atoi(argv[4]), strtoul(argv[5], NULL, 0),
				    argc == 8 ? argv[6] : "", argc == 8 ? atoi(argv[7]) : 0);
		} else if (!strcmp(cmd, "qunlinkmany")) {       /* qunlinkmany URL NAME... */
			int rcs[64], n = argc - 3 > 64 ? 64 : argc - 3;

			tfs_unlink_many(c, (size_t)n, (const char *const *)argv + 3, rcs);
			for (int i = 0; i < n; i++)
				printf("%s %s\n", argv[3 + i], rcs[i] ? tfs_errno_name(rcs[i]) : "ok");
			rc = 0;
		} else if (!strcmp(cmd, "qthreads")) {          /* qthreads URL N */
			rc = threads(argv[2], atoi(argv[3]));
		} else if (!strcmp(cmd, "qconnect")) {
			rc = 0;
		} else {
			rc = -EINVAL;
		}
		if (rc)
			goto err;
	} else {
		fprintf(stderr, "usage: tfs_client_tool info|read|write|write-ro|fill|hold|cache|"
			"unlinked|open-meta|dlpack|qcreate|qget|qgetdel|qdelete|qconnect ...\n");
		return 2;
	}
	if ((rc = tfs_close(t)))
		goto err;
	tfs_disconnect(c);
	printf("done\n");
	return 0;
err:
	tfs_close(t);
	tfs_disconnect(c);
	return fail(rc);
}
