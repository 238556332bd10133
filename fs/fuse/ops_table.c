/* The FUSE operations table and the connection's settings (init). */
#include <fcntl.h>
#include <unistd.h>

#include "log.h"
#include "fuse/ops.h"
#include "mem/backend.h"

/* Whether a pipe may hold a whole read reply. libfuse splices a reply only into a pipe
 * that holds all of it (the data, the header and a page per piece); otherwise it copies
 * an fd buffer out through a fresh allocation per read, slower than not splicing. Past
 * fs.pipe-max-size (1 MiB by default) that takes CAP_SYS_RESOURCE. */
struct tfs_fuse_conf tfs_fuse;

static int pipe_holds_reply(void)
{
	int p[2], ok;

	if (pipe2(p, O_CLOEXEC))
		return 0;
	ok = fcntl(p[0], F_SETPIPE_SZ, (1 << 20) + (16 << 10)) >= 0;
	close(p[0]);
	close(p[1]);
	return ok;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* Requests are read into the workers' own buffers (loop.c), never through a pipe. */
	conn->want &= ~FUSE_CAP_SPLICE_READ;
	/* Replies to reads write from the backend's memory (read_mem) where it has one: as few
	 * copies as a splice and fewer system calls (tests/bench/RESULTS-gpu.md, issue 19).
	 * Otherwise they splice from its file (read_fd) where a pipe holds a reply. */
	if (tfs_mem.ops->read_mem) {
		tfs_log(LOG_INFO, "reads: replies write from the backend's memory");
	} else if (tfs_mem.ops->read_fd) {
		tfs_fuse.splice_reads = (conn->capable & FUSE_CAP_SPLICE_WRITE) && pipe_holds_reply();
		if (tfs_fuse.splice_reads)
			conn->want |= FUSE_CAP_SPLICE_WRITE;
		tfs_log(tfs_fuse.splice_reads ? LOG_INFO : LOG_NOTICE, "%s",
			tfs_fuse.splice_reads ? "reads: replies splice from pinned memory" :
			"reads: a pipe cannot hold a 1 MiB reply (raise fs.pipe-max-size to 2 MiB, "
			"or give the daemon CAP_SYS_RESOURCE): reads copy once more");
	}
	/* O_TRUNC arrives with the open (tfs_op_open), not as a separate truncate. */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->max_write = 1 << 20;
	conn->max_read = 1 << 20;     /* must match the max_read mount option */
	conn->max_readahead = 1 << 20;
}

const struct fuse_lowlevel_ops tfs_ops = {
	.init = op_init,
	.lookup = tfs_op_lookup,
	.forget = tfs_op_forget,
	.forget_multi = tfs_op_forget_multi,
	.getattr = tfs_op_getattr,
	.setattr = tfs_op_setattr,
	.mknod = tfs_op_mknod,
	.mkdir = tfs_op_mkdir,
	.unlink = tfs_op_unlink,
	.rmdir = tfs_op_rmdir,
	.symlink = tfs_op_symlink,
	.rename = tfs_op_rename,
	.link = tfs_op_link,
	.open = tfs_op_open,
	.read = tfs_op_read,
	.write = tfs_op_write,
	.ioctl = tfs_op_ioctl,
	.release = tfs_op_release,
	.fsync = tfs_op_fsync,
	.opendir = tfs_op_opendir,
	.readdir = tfs_op_readdir,
	.releasedir = tfs_op_releasedir,
	.fsyncdir = tfs_op_fsync,
	.statfs = tfs_op_statfs,
	.setxattr = tfs_op_setxattr,
	.getxattr = tfs_op_getxattr,
	.listxattr = tfs_op_listxattr,
	.removexattr = tfs_op_removexattr,
	.create = tfs_op_create,
	.fallocate = tfs_op_fallocate,
};
