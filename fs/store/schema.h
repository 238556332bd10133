/* The Redis key layout (schema.c): every key and field name the daemon uses, and the
 * records of directories. A leaf: no I/O, no locks; the names come from tfs_schema, set
 * once at start-up before any thread runs.
 *   <prefix>:tensor:<name>   hash, one per tensor (docs/contract.md)
 *   <prefix>:dir:<name>      hash, one per directory ("" is the root)
 *   <prefix>:dirents:<name>  hash, a directory's entries: child name -> 't' or 'd'
 *   <prefix>:unlinked:<node>:<seq>, <prefix>:alive:<node>, {<queue>}:node:<node>,
 *   <queue>:u:<uid> (and its :reply: keys) */
#ifndef TFS_SCHEMA_H
#define TFS_SCHEMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dtype.h"

struct tfs_schema {
	const char *prefix;          /* of every key: --prefix */
	const char *queue;           /* the shared queue's list: --queue */
	const char *node;            /* this node's name: --node */
};
extern struct tfs_schema tfs_schema;

/* The longest path under the mount: far past PATH_MAX, which limits what one system call
 * names, not how deep a tree may go (a process that chdir()s down names each level
 * relatively). Beyond it, ENAMETOOLONG. */
#define TFS_PATH_MAX 32768
/* Room for any key: a prefix, a kind, a path. */
#define TFS_KEYMAX (TFS_PATH_MAX + 512)
/* <prefix>:<kind>:<name> into buf; -ENAMETOOLONG when it does not fit. */
int tfs_key(char *buf, size_t size, const char *kind, const char *name);
/* The parent directory of name ("" for the root) and the last component. */
void tfs_split(const char *name, char *parent, size_t psize, const char **base);

/* dir + "/" + name (just name when dir is ""), malloc'd; NULL when out of memory. */
char *tfs_path_join(const char *dir, const char *name);

/* A directory's record. */
struct tfs_dirrec {
	uint32_t mode, uid, gid;
	int64_t ctime, mtime;
	int64_t atime;               /* 0: never set (stat shows mtime) */
	uint64_t ino;                /* inode number (node.h), 0: none recorded */
	int64_t nsub;                /* subdirectories: a directory's st_nlink is 2 + nsub */
	int has_dtype, has_device;
	tfs_dtype dtype;
	int device;
};
/* The key an unlinked tensor's record moves to: -ENAMETOOLONG when it does not fit. */
int tfs_store_unlinked_key(char *buf, size_t size, uint64_t seq);
/* Field x:<name> of a record: the user's attribute name (without "user."). -ERANGE when
 * it does not fit. */
int tfs_user_field(char *buf, size_t size, const char *name);
/* Field holder:<node>:<pid> of a tensor record. */
void tfs_holder_field(char *buf, size_t size, const char *node, int64_t pid);
/* The list of commands forwarded to node: {<queue>}:node:<node>. */
void tfs_store_node_queue(char *buf, size_t size, const char *node);
/* The list uid pushes to: <queue>:u:<uid>. Its replies go under <list>:reply:. */
void tfs_store_queue_user_list(char *buf, size_t size, uid_t uid);
/* The Redis ACL user of uid: u<uid>.<queue> (no ':' or '@': it goes in a URL). */
void tfs_store_queue_acl_name(char *buf, size_t size, uid_t uid);
/* The Redis ACL user of uid: u<uid>.<queue> (no ':' or '@': it goes in a URL). */
void tfs_store_queue_acl_name(char *buf, size_t size, uid_t uid);
/* Whether key may be answered on: not one of the daemon's keys or queues. */
int tfs_store_reply_key_ok(const char *key);
/* Whether key is one of uid's reply keys (<queue>:u:<uid>:reply:<x>) and may be answered
 * on (tfs_store_reply_key_ok). */
int tfs_store_reply_key_for(const char *key, uid_t uid);
/* The live-node registry key of node: <prefix>:alive:<node>. */
void tfs_store_alive_key(char *buf, size_t size, const char *node);
/* <prefix>:ucx:<node>: where the node's daemon answers for its tensors' bytes over UCX
 * (store/peer.c; its value's format is fs/net/peer_rec.h's). */
void tfs_store_peer_key(char *buf, size_t size, const char *node);

#endif
