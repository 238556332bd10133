/* OPEN and CREATE replies built here rather than by libfuse: libfuse 3.14 (Debian 12's)
 * maps only direct_io, keep_cache, cache_readdir and noflush to open flags, and the kernel
 * serialises direct writes to one inode unless the reply says FOPEN_PARALLEL_DIRECT_WRITES
 * (Linux 6.2+; older kernels ignore the bit). The layouts are the kernel's, from
 * <linux/fuse.h>; the conversions follow libfuse's fill_entry and fill_open. */
#include <limits.h>
#include <linux/fuse.h>
#include <string.h>

#include "fuse/reply_open.h"

#ifndef FOPEN_PARALLEL_DIRECT_WRITES
#define FOPEN_PARALLEL_DIRECT_WRITES (1 << 6)
#endif

static void fill_open(struct fuse_open_out *o, const struct fuse_file_info *fi)
{
	o->fh = fi->fh;
	if (fi->direct_io)
		o->open_flags |= FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES;
	if (fi->keep_cache)
		o->open_flags |= FOPEN_KEEP_CACHE;
	if (fi->nonseekable)
		o->open_flags |= FOPEN_NONSEEKABLE;
	if (fi->noflush)
		o->open_flags |= FOPEN_NOFLUSH;
}

static uint64_t tmo_sec(double t)
{
	if (t <= 0)
		return 0;
	if (t >= (double)UINT32_MAX)
		return UINT32_MAX;
	return (uint64_t)t;
}

static uint32_t tmo_nsec(double t)
{
	double f = t - (double)tmo_sec(t);

	if (f <= 0)
		return 0;
	return f >= 0.999999999 ? 999999999 : (uint32_t)(f * 1e9);
}

int tfs_reply_open(fuse_req_t req, const struct fuse_file_info *fi)
{
	struct fuse_open_out o;

	memset(&o, 0, sizeof(o));
	fill_open(&o, fi);
	return fuse_reply_buf(req, (const char *)&o, sizeof(o));
}

int tfs_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
		     const struct fuse_file_info *fi)
{
	struct {
		struct fuse_entry_out e;
		struct fuse_open_out o;
	} r;
	const struct stat *st = &e->attr;

	memset(&r, 0, sizeof(r));
	r.e.nodeid = e->ino;
	r.e.generation = e->generation;
	r.e.entry_valid = tmo_sec(e->entry_timeout);
	r.e.entry_valid_nsec = tmo_nsec(e->entry_timeout);
	r.e.attr_valid = tmo_sec(e->attr_timeout);
	r.e.attr_valid_nsec = tmo_nsec(e->attr_timeout);
	r.e.attr.ino = st->st_ino;
	r.e.attr.mode = st->st_mode;
	r.e.attr.nlink = (uint32_t)st->st_nlink;
	r.e.attr.uid = st->st_uid;
	r.e.attr.gid = st->st_gid;
	r.e.attr.rdev = (uint32_t)st->st_rdev;
	r.e.attr.size = (uint64_t)st->st_size;
	r.e.attr.blksize = (uint32_t)st->st_blksize;
	r.e.attr.blocks = (uint64_t)st->st_blocks;
	r.e.attr.atime = (uint64_t)st->st_atim.tv_sec;
	r.e.attr.mtime = (uint64_t)st->st_mtim.tv_sec;
	r.e.attr.ctime = (uint64_t)st->st_ctim.tv_sec;
	r.e.attr.atimensec = (uint32_t)st->st_atim.tv_nsec;
	r.e.attr.mtimensec = (uint32_t)st->st_mtim.tv_nsec;
	r.e.attr.ctimensec = (uint32_t)st->st_ctim.tv_nsec;
	fill_open(&r.o, fi);
	return fuse_reply_buf(req, (const char *)&r, sizeof(r));
}
