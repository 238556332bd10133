/* The lifecycle queue protocol (docs/contract.md): commands clients LPUSH as JSON, and the replies
 * the daemon pushes back. Parsing and building only, no I/O. */
#ifndef TFS_CMD_H
#define TFS_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "meta.h"
#include "shape.h"

enum tfs_op { TFS_OP_CREATE = 1, TFS_OP_GET, TFS_OP_DELETE, TFS_OP_RENEW };

#define TFS_CMD_STR 256

struct tfs_cmd {
	enum tfs_op op;
	char name[4096];
	int has_dtype, has_shape, has_device;
	tfs_dtype dtype;
	struct tfs_shape shape;
	int device;
	int64_t pid;                   /* 0 when absent */
	int64_t lease;                 /* get, renew: seconds the hold lasts unless renewed;
	                                  0 when absent (the hold lasts while pid lives) */
	char node[TFS_NODE_MAX];       /* "" when absent */
	char id[TFS_CMD_STR];          /* "" when absent */
	char reply[TFS_CMD_STR];       /* "" when absent: no answer is sent */
};

/* Parses one command. On error returns -EINVAL (or -ENAMETOOLONG, -E2BIG, -EOVERFLOW)
 * with a message in err; even then cmd->id and cmd->reply are filled when they could be
 * read, so the daemon can still answer. Unknown fields are ignored (forward compatible). */
int tfs_cmd_parse(const char *json, size_t len, struct tfs_cmd *cmd, char *err, size_t errlen);

/* Builds a command as JSON (for clients); malloc'd, NULL when out of memory. */
char *tfs_cmd_build(const struct tfs_cmd *cmd);

/* {"id":..,"ok":true, ...metadata} ; malloc'd or NULL. */
char *tfs_reply_ok(const char *id, const char *name, const struct tfs_meta *m);
/* {"id":..,"ok":false,"error":"EEXIST","message":..} ; err is an errno (either sign). */
char *tfs_reply_err(const char *id, int err, const char *message);

/* Parses a reply: 0 with *m filled (when ok), or the negative errno the reply names with
 * its message copied to msg; -EBADMSG when the reply itself is malformed. id_out (may be
 * NULL) receives the id. */
int tfs_reply_parse(const char *json, size_t len, struct tfs_meta *m, char *id_out,
		    size_t idlen, char *msg, size_t msglen);

#endif
