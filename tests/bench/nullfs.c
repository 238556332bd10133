/* A null FUSE filesystem: the transport's ceiling that tests/bench/fusepath.sh measures
 * tensorfs against. One file, /big, of NULLFS_BYTES bytes (default 2 GiB), opened with
 * direct I/O as tensorfs opens its files; reads reply from a static buffer, writes are
 * discarded. The same request size as tensorfs (max_read, max_write 1 MiB) and the same
 * transport: requests read from /dev/fuse, replies written to it, no splice. Every name
 * in the root is that one file. Opens answer as tensorfs's do (fs/fuse/reply_open.c), with
 * FOPEN_PARALLEL_DIRECT_WRITES, so writes from several streams reach it together;
 * NULLFS_SERIAL_WRITES=1 leaves the flag out (the kernel then takes one write at a time).
 * NULLFS_MEM=1 keeps the file's bytes in memory of its own, touched at start: reads reply
 * from it and writes copy into it at their offset, the one copy a file system that holds
 * its bytes in memory (tmpfs, or tensorfs's host backend) cannot avoid, so that row is the
 * ceiling of such a file system rather than of the transport alone.
 *
 *   nullfs MOUNTPOINT [-f] [-o opts]     (fusermount3 -u MOUNTPOINT ends it)
 */
#include <errno.h>
#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BIG_INO 2
#define MAX_IO (1 << 20)

/* Each worker replies from a buffer of its own, of real pages: with one buffer for all, or
 * the untouched zero page, every reply pins the same pages and 8 streams contend on their
 * reference counts, which tensorfs replying from each stream's own memory does not. */
static pthread_key_t buf_key;
static off_t big_bytes = (off_t)2 << 30;
static char *mem;       /* NULLFS_MEM=1: the file's bytes */

static void stat_of(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = ino == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0644;
	st->st_nlink = ino == FUSE_ROOT_ID ? 2 : 1;
	st->st_size = ino == FUSE_ROOT_ID ? 0 : big_bytes;
	st->st_blksize = MAX_IO;    /* as tensorfs: cat and cp size their buffers from it */
}

static void null_init(void *ud, struct fuse_conn_info *conn)
{
	(void)ud;
	conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE);
	conn->max_write = MAX_IO;
	conn->max_read = MAX_IO;
	conn->max_readahead = MAX_IO;
}

static void null_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	(void)name;
	if (parent != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = BIG_INO;
	e.attr_timeout = e.entry_timeout = 3600;
	stat_of(BIG_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

static void null_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	stat_of(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

/* ftruncate to any size succeeds and changes nothing: the file's size is fixed. */
static void null_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			 struct fuse_file_info *fi)
{
	(void)attr; (void)to_set;
	null_getattr(req, ino, fi);
}

static void null_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != BIG_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	struct fuse_open_out o;
	const char *serial = getenv("NULLFS_SERIAL_WRITES");

	/* libfuse 3.14's fuse_reply_open has no field for the parallel-writes flag */
	memset(&o, 0, sizeof(o));
	o.fh = fi->fh;
	o.open_flags = FOPEN_DIRECT_IO;
	if (!serial || strcmp(serial, "1"))
		o.open_flags |= 1 << 6;     /* FOPEN_PARALLEL_DIRECT_WRITES */
	fuse_reply_buf(req, (const char *)&o, sizeof(o));
}

static void null_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	char *buf = pthread_getspecific(buf_key);

	(void)ino; (void)fi;
	if (!buf) {
		buf = aligned_alloc(4096, MAX_IO);
		if (!buf || pthread_setspecific(buf_key, buf)) {
			free(buf);
			fuse_reply_err(req, ENOMEM);
			return;
		}
		memset(buf, 0x5a, MAX_IO);
	}
	if (off >= big_bytes)
		size = 0;
	else if ((off_t)size > big_bytes - off)
		size = (size_t)(big_bytes - off);
	if (size > MAX_IO)
		size = MAX_IO;
	fuse_reply_buf(req, mem && size ? mem + off : buf, size);
}

static void null_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)ino; (void)fi;
	if (mem) {
		if (off < 0 || off >= big_bytes || (off_t)size > big_bytes - off) {
			fuse_reply_err(req, EFBIG);
			return;
		}
		memcpy(mem + off, buf, size);
	}
	fuse_reply_write(req, size);
}

static const struct fuse_lowlevel_ops null_ops = {
	.init = null_init,
	.lookup = null_lookup,
	.getattr = null_getattr,
	.setattr = null_setattr,
	.open = null_open,
	.read = null_read,
	.write = null_write,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts o = { 0 };
	struct fuse_loop_config *cfg = NULL;
	struct fuse_session *se = NULL;
	const char *env = getenv("NULLFS_BYTES");
	int rc = 1;

	if (env)
		big_bytes = strtoll(env, NULL, 0);
	env = getenv("NULLFS_MEM");
	if (env && !strcmp(env, "1")) {
		mem = aligned_alloc(4096, (size_t)big_bytes);
		if (!mem)
			return 1;
		memset(mem, 0x5a, (size_t)big_bytes);
	}
	if (pthread_key_create(&buf_key, free))
		return 1;
	if (fuse_parse_cmdline(&args, &o) || !o.mountpoint) {
		fprintf(stderr, "usage: %s MOUNTPOINT [-f] [-o opts]\n", argv[0]);
		goto out;
	}
	if (fuse_opt_add_arg(&args, "-omax_read=1048576,fsname=nullfs,subtype=nullfs"))
		goto out;
	se = fuse_session_new(&args, &null_ops, sizeof(null_ops), NULL);
	if (!se || fuse_set_signal_handlers(se) || fuse_session_mount(se, o.mountpoint))
		goto out;
	fuse_daemonize(o.foreground);
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		goto out_unmount;
	fuse_loop_cfg_set_max_threads(cfg, 16);
	fuse_loop_cfg_set_idle_threads(cfg, 16);   /* no thread churn between requests */
	rc = fuse_session_loop_mt(se, cfg) ? 1 : 0;
	fuse_loop_cfg_destroy(cfg);
out_unmount:
	fuse_session_unmount(se);
out:
	if (se) {
		fuse_remove_signal_handlers(se);
		fuse_session_destroy(se);
	}
	free(o.mountpoint);
	fuse_opt_free_args(&args);
	return rc;
}
