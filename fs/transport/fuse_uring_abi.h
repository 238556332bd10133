/* The FUSE-over-io_uring kernel ABI (Linux 6.14+), which the installed <linux/fuse.h> and
 * libfuse 3.14 predate. Source: the kernel's include/uapi/linux/fuse.h (protocol 7.42),
 * checked against fs/fuse/dev_uring.c; libfuse 3.18's include/fuse_kernel.h carries the
 * same definitions. */
#ifndef TFS_FUSE_URING_ABI_H
#define TFS_FUSE_URING_ABI_H

#include <stdint.h>

/* fuse_init_in/out: flags bit 30 says flags2 is there; bits 32..63 are flags2's. */
#define TFS_FUSE_INIT_EXT         (1u << 30)
#define TFS_FUSE_OVER_IO_URING    (1ull << 41)

/* Offsets in struct fuse_init_in (major, minor, max_readahead, flags, flags2) and struct
 * fuse_init_out (major, minor, max_readahead, flags, max_background, congestion_threshold,
 * max_write, time_gran, max_pages, map_alignment, flags2). */
#define TFS_INIT_IN_FLAGS         12
#define TFS_INIT_IN_FLAGS2        16
#define TFS_INIT_OUT_FLAGS        12
#define TFS_INIT_OUT_FLAGS2       32

#define TFS_FUSE_INIT_OPCODE      26

#define FUSE_URING_IN_OUT_HEADER_SZ 128
#define FUSE_URING_OP_IN_OUT_SZ     128

struct fuse_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;      /* the request's unique, to name it in the commit */
	uint32_t payload_sz;     /* bytes in the payload buffer, either way */
	uint32_t padding;
	uint64_t reserved;
};

/* iov[0] of an entry. The kernel writes the fuse_in_header into in_out, the opcode's
 * first argument (fuse_write_in, ...) into op_in and the rest into the payload; a reply
 * puts its fuse_out_header into in_out and every argument into the payload. */
struct fuse_uring_req_header {
	char in_out[FUSE_URING_IN_OUT_HEADER_SZ];
	char op_in[FUSE_URING_OP_IN_OUT_SZ];
	struct fuse_uring_ent_in_out ring_ent_in_out;
};

enum fuse_uring_cmd {
	FUSE_IO_URING_CMD_INVALID = 0,
	FUSE_IO_URING_CMD_REGISTER = 1,          /* give an entry's buffers, wait for a request */
	FUSE_IO_URING_CMD_COMMIT_AND_FETCH = 2,  /* reply to commit_id, wait for the next */
};

/* The command area of a 128-byte SQE (IORING_SETUP_SQE128), IORING_OP_URING_CMD on the
 * /dev/fuse fd; sqe->addr/len: iovec[2] {header, payload} (REGISTER only). */
struct fuse_uring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;            /* the queue: one per possible CPU */
	uint8_t padding[6];
};

#endif
