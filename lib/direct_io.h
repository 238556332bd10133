/* O_DIRECT reads for loads of files that are not in the page cache (load_pipe.c): a cold
 * file read through the page cache is copied once more and read ahead by the kernel's
 * own guess; read directly, in large aligned requests from several threads, it goes at
 * the device's speed. Private to libtensorfs. */
#ifndef TFS_DIRECT_IO_H
#define TFS_DIRECT_IO_H

#include <stddef.h>
#include <stdint.h>

/* Offsets, lengths and buffers of direct reads are multiples of this. */
#define TFS_DIO_ALIGN 4096u

/* What a buffer for a direct read of len bytes at any offset needs beyond len. */
#define TFS_DIO_PAD (2 * TFS_DIO_ALIGN)

/* Which way a load reads its file: mode 1 always directly (where the file system allows
 * it), 0 never, -1 (auto) directly when at most a tenth of the file is in the page cache.
 * The environment's TFS_LOAD_DIRECT (0 or 1) overrides auto. Returns a new descriptor
 * open on the same file with O_DIRECT, or -1 for the page cache (also when the file
 * system refuses O_DIRECT, as tmpfs does). Never fails otherwise. */
int tfs_dio_open(int fd, uint64_t size, int mode);

/* Reads len bytes at foff of dfd (open with O_DIRECT) into buf (TFS_DIO_ALIGN-aligned,
 * len + TFS_DIO_PAD bytes at least): the aligned range around them is read, *at set to
 * where the asked bytes start in buf. 0; -ENODATA when the file ends before foff + len;
 * -EINVAL when the file system refused the direct read (the caller reads through the
 * page cache instead); else -errno. */
int tfs_dio_read(int dfd, char *buf, uint64_t foff, size_t len, char **at);

#endif
