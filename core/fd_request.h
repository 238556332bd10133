/* The handle socket's messages (issue 36, docs/holders.md): a process asks the daemon for
 * the descriptor of a tensor's memory, naming it by its path in the mount and the access
 * it wants; the daemon checks, from the socket's peer credentials, that the process may
 * have that access as through the mount, and answers with the descriptor (SCM_RIGHTS) or an
 * errno. Shared by the daemon and the client library. No I/O.
 *
 * Request, one line of at most TFS_FDREQ_MAX bytes, newline included:
 *
 *     <access> <path>\n          access: "r" or "w" ("w" grants reading too)
 *     <access>\n                 by the descriptor that comes with the line
 *
 * path is relative to the mount's root, without a leading slash: components of 1 to 255
 * bytes, none "." or "..", no empty one (no doubled or trailing slash), no NUL or newline.
 * The second form names the tensor by an open file of the mount, sent with it
 * (SCM_RIGHTS): one whose name was replaced or removed since it was opened has no name to
 * ask by, and the descriptor is the proof of the access it was opened for.
 *
 * Reply, one line:  "0 <bytes>\n" with the descriptor, or "-<errno>\n" without. Memory
 * made of several pieces (a VMM tensor grown in place, docs/vmm.md#growth) comes as one
 * descriptor per piece, in address order, in the one message, the line giving each one's
 * size after the tensor's:
 *
 *     "0 <bytes> <size1> <size2> ... <sizeN>\n"     N from 2 to TFS_FDREP_FDS_MAX
 *
 * so that the one-descriptor reply is the same bytes as ever (an older client reads it;
 * one that gets the longer line fails with EBADMSG). Numbers are decimal, without leading
 * zeros, at most UINT64_MAX; sizes are not 0. */
#ifndef TFS_FD_REQUEST_H
#define TFS_FD_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#define TFS_FDREQ_PATH_MAX 4095
#define TFS_FDREQ_MAX (2 + TFS_FDREQ_PATH_MAX + 1)   /* "r " + path + "\n" */
#define TFS_FDREP_FDS_MAX 16
/* "0 " + bytes + 16 x (" " + size) + "\n", each number up to 20 digits. */
#define TFS_FDREP_MAX (2 + 20 + TFS_FDREP_FDS_MAX * 21 + 1 + 1)

enum { TFS_FDREQ_READ = 1, TFS_FDREQ_WRITE = 2 };

struct tfs_fdreq {
	int access;                          /* TFS_FDREQ_READ or TFS_FDREQ_WRITE */
	char path[TFS_FDREQ_PATH_MAX + 1];   /* NUL-terminated; "": by descriptor */
	size_t used;                         /* bytes of the buffer the request took */
};

/* Parses the request at the start of buf (len bytes, what arrived so far). 0 with *out
 * filled; -EAGAIN when the line is not complete yet and may still be (len below
 * TFS_FDREQ_MAX); -ENAMETOOLONG when TFS_FDREQ_MAX bytes hold no newline; -EINVAL for
 * anything else malformed. *out is written only on success. */
int tfs_fdreq_parse(const char *buf, size_t len, struct tfs_fdreq *out);

/* Writes the request for access and path into buf (size bytes, TFS_FDREQ_MAX suffice):
 * its length, or -EINVAL when path is not one the parser accepts (checked by parsing it).
 * path NULL: the request by descriptor (the caller sends the descriptor with it). */
int tfs_fdreq_format(char *buf, size_t size, int access, const char *path);

/* Parses a reply: 0 with *bytes (the descriptor came with it), the negative errno it
 * carries (-1 to -4095), or -EBADMSG when it is not a reply. */
int tfs_fdrep_parse(const char *buf, size_t len, uint64_t *bytes);

/* Writes a reply for rc (0 or a negative errno) and bytes: its length. buf holds
 * TFS_FDREP_MAX bytes. */
int tfs_fdrep_format(char *buf, int rc, uint64_t bytes);

/* Parses a reply of one or more descriptors: 0 with *bytes, *n (1 to TFS_FDREP_FDS_MAX:
 * the descriptors that came with it) and sizes[0..*n) (each piece's; sizes[0] is 0 for
 * the one-descriptor reply, which says none), the negative errno it carries, or -EBADMSG.
 * sizes holds TFS_FDREP_FDS_MAX. Nothing is written unless it returns 0. */
int tfs_fdrep_parse_chunks(const char *buf, size_t len, uint64_t *bytes, uint64_t *sizes,
			   int *n);

/* Writes the reply of n descriptors of sizes (n 1: the one-descriptor reply, sizes
 * unused and may be NULL) for rc 0, or of rc: its length, or -EINVAL for n out of 1 to
 * TFS_FDREP_FDS_MAX or a size 0. buf holds TFS_FDREP_MAX bytes. */
int tfs_fdrep_format_chunks(char *buf, int rc, uint64_t bytes, const uint64_t *sizes, int n);

#endif
