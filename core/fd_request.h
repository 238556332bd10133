/* The handle socket's messages (issue 36, docs/holders.md): a process asks the daemon for
 * the descriptor of a tensor's memory, naming it by its path in the mount and the access
 * it wants; the daemon checks, from the socket's peer credentials, that the process may
 * have that access as through the mount, and answers with the descriptor (SCM_RIGHTS) or an
 * errno. Shared by the daemon and the client library. No I/O.
 *
 * Request, one line of at most TFS_FDREQ_MAX bytes, newline included:
 *
 *     <access> <path>\n          access: "r" or "w" ("w" grants reading too)
 *
 * path is relative to the mount's root, without a leading slash: components of 1 to 255
 * bytes, none "." or "..", no empty one (no doubled or trailing slash), no NUL or newline.
 *
 * Reply, one line:  "0 <bytes>\n" with the descriptor, or "-<errno>\n" without. */
#ifndef TFS_FD_REQUEST_H
#define TFS_FD_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#define TFS_FDREQ_PATH_MAX 4095
#define TFS_FDREQ_MAX (2 + TFS_FDREQ_PATH_MAX + 1)   /* "r " + path + "\n" */
#define TFS_FDREP_MAX 32

enum { TFS_FDREQ_READ = 1, TFS_FDREQ_WRITE = 2 };

struct tfs_fdreq {
	int access;                          /* TFS_FDREQ_READ or TFS_FDREQ_WRITE */
	char path[TFS_FDREQ_PATH_MAX + 1];   /* NUL-terminated */
	size_t used;                         /* bytes of the buffer the request took */
};

/* Parses the request at the start of buf (len bytes, what arrived so far). 0 with *out
 * filled; -EAGAIN when the line is not complete yet and may still be (len below
 * TFS_FDREQ_MAX); -ENAMETOOLONG when TFS_FDREQ_MAX bytes hold no newline; -EINVAL for
 * anything else malformed. *out is written only on success. */
int tfs_fdreq_parse(const char *buf, size_t len, struct tfs_fdreq *out);

/* Writes the request for access and path into buf (size bytes, TFS_FDREQ_MAX suffice):
 * its length, or -EINVAL when path is not one the parser accepts (checked by parsing it). */
int tfs_fdreq_format(char *buf, size_t size, int access, const char *path);

/* Parses a reply: 0 with *bytes (the descriptor came with it), the negative errno it
 * carries (-1 to -4095), or -EBADMSG when it is not a reply. */
int tfs_fdrep_parse(const char *buf, size_t len, uint64_t *bytes);

/* Writes a reply for rc (0 or a negative errno) and bytes: its length. buf holds
 * TFS_FDREP_MAX bytes. */
int tfs_fdrep_format(char *buf, int rc, uint64_t bytes);

#endif
