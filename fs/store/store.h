/* The Redis key layout and the records of directories and names (store.c): every key
 * format lives here */
#ifndef TFS_STORE_H
#define TFS_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "dtype.h"
#include "meta.h"

/* A name claimed and not yet answered (tfs_store_link_send): private to store.c. */
struct tfs_store_claim {
	struct tfs_writer_call *set;    /* HSETNX of the entry */
	struct tfs_writer_call *exists; /* the parent's record, checked right behind it */
};

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

/* Reads a tensor record: 0, -ENOENT, -EIO, -EBADMSG (garbage: logged). */
int tfs_store_tensor(const char *name, struct tfs_meta *m);
/* Reads a directory record. 0 / -ENOENT / -EIO. */
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
int tfs_store_dir(const char *name, struct tfs_dirrec *d);
int tfs_store_dir_write(const char *name, const struct tfs_dirrec *d);
/* Adds name to its parent's entries ('t' tensor, 'd' dir): -EEXIST when taken,
 * -ENOENT when the parent directory does not exist. */
int tfs_store_link(const char *name, char type);
/* tfs_store_link in two halves: the checks and the claim sent (0 with *claim set, or the
 * errors above but -EEXIST), then its answer awaited (0, -EEXIST or -EIO). parent_rec:
 * the parent's record, which the caller read under ns just before (so it exists); NULL:
 * read it here. */
int tfs_store_link_send(const char *name, char type, const struct tfs_dirrec *parent_rec,
		      struct tfs_store_claim **claim);
int tfs_store_link_wait(const char *name, char type, struct tfs_store_claim *claim);
/* A claim whose answer was lost (-EIO from tfs_store_link_wait: Redis stalled or went away
 * after it was sent) may have taken the name all the same. A later claim of the same name
 * and type by this node takes it over (0, not -EEXIST) while no record is behind it; the
 * rest are given back here, after Redis came back (each entry removed in one script only
 * while still of that type with no record behind it, and not one of this node's tensors).
 * Caller holds ns (the tensor table is read). 0 or -EIO (those not settled are kept). */
int tfs_store_claims_settle(void);
int tfs_store_unlink(const char *name);
/* Looks up the entry type of name in its parent: 't', 'd', or -ENOENT. */
int tfs_store_type(const char *name);
/* The entries of directory name: its HGETALL reply (the caller frees it), or -ENOENT,
 * -ENOTDIR, -EIO. */
int tfs_store_dir_entries(const char *name, redisReply **out);
/* rmdir: -ENOTDIR, -ENOTEMPTY, -ENOENT, -EBUSY (the root), -EIO. */
int tfs_store_rmdir(const char *name);
/* Removes a tensor record and its name, for records with no tensor behind them. */
int tfs_store_remove_tensor(const char *name);
/* Moves directory from and everything under it to to (which must not exist): -EREMOTE
 * when another node's tensor is inside, -EEXIST, -EIO. Caller holds ns. */
int tfs_store_move_dir(const char *from, const char *to);
/* dir + "/" + name (just name when dir is ""), malloc'd; NULL when out of memory. */
char *tfs_path_join(const char *dir, const char *name);

/* An entry of directory name (whose record the caller just read into d) was added or
 * removed: its mtime and ctime become now and its count of subdirectories moves by nsub.
 * Queued: 0, -ENOMEM or -ENAMETOOLONG. */
int tfs_store_dir_changed(const char *name, struct tfs_dirrec *d, int nsub);

/* --- this node's tensor records (tensor.c, holders.c): queued for the writer, so 0 or
 * -ENOMEM; what Redis says later is logged by the writer. --- */
/* The whole record m under key (replace: DEL first, so a stale record's fields go). */
int tfs_store_save(const char *key, const struct tfs_meta *m, int replace);
int tfs_store_save_refcount(const char *key, int64_t refcount);
int tfs_store_delete(const char *key);
int tfs_store_rename(const char *from_key, const char *to_key);
/* The key an unlinked tensor's record moves to: -ENAMETOOLONG when it does not fit. */
int tfs_store_unlinked_key(char *buf, size_t size, uint64_t seq);
/* A holder's count (field holder:<node>:<pid>) and, when refcount >= 0, the refcount in
 * the same write; the field's removal. The field's value is "<count>" for a hold of the
 * shared queue (uid -1) and "<count> <uid>" for a per-user sender's, so that the owner
 * outlives a restart of the daemon (adopt.c). */
int tfs_store_holder_save(const char *key, const char *node, int64_t pid, int64_t uid,
			  int64_t count, int64_t refcount);
int tfs_store_holder_delete(const char *key, const char *node, int64_t pid);

/* --- the user's own attributes (xattr.c): field x:<name>; name without "user." --- */
/* *out: the value as a string reply the caller frees; -ENODATA, -ERANGE, -EIO. */
int tfs_store_user_get(const char *key, const char *name, redisReply **out);
/* create: fail with -EEXIST when set; replace: fail with -ENODATA when not (atomically). */
int tfs_store_user_set(const char *key, const char *name, const char *value, size_t size,
		       int create, int replace);
/* The record's fields: an array reply (freed by the caller), -EIO; tfs_store_user_name
 * gives the user's name an element holds, NULL for the record's other fields. */
int tfs_store_user_list(const char *key, redisReply **out);
const char *tfs_store_user_name(const redisReply *e);
int tfs_store_user_remove(const char *key, const char *name);

/* --- the lifecycle queue (queue.c) --- */
/* The list of commands forwarded to node: {<queue>}:node:<node>. */
void tfs_store_node_queue(char *buf, size_t size, const char *node);
/* Pops up to count more from list: the reply, or NULL with *rc as tfs_conn_cmdf's (the
 * blocking pop of every list is tfs_store_queue_pop_all). */
redisReply *tfs_store_queue_rpop(int *rc, const char *list, int count);
/* 0 when Redis lacks BLMPOP (before 7.0). */
int tfs_store_has_blmpop(void);
/* Whether key may be answered on: not one of the daemon's keys or queues. */
int tfs_store_reply_key_ok(const char *key);
/* Pushes json onto reply key key, which must be a list or absent (then made a list that
 * expires after ttl seconds): -EPERM for a key that may not be answered on, else queued
 * (0 or -ENOMEM); a key of another type is left alone, silently. */
int tfs_store_queue_reply(const char *key, const char *json, int ttl);

/* --- per-user queues (queue_users.h) --- */
/* The list uid pushes to: <queue>:u:<uid>. Its replies go under <list>:reply:. */
void tfs_store_queue_user_list(char *buf, size_t size, uid_t uid);
/* The Redis ACL user of uid: u<uid>.<queue> (no ':' or '@': it goes in a URL). */
void tfs_store_queue_acl_name(char *buf, size_t size, uid_t uid);
/* Whether key is one of uid's reply keys (<queue>:u:<uid>:reply:<x>) and may be answered
 * on (tfs_store_reply_key_ok). */
int tfs_store_reply_key_for(const char *key, uid_t uid);
/* Makes (or resets) uid's ACL user with password: it may push to its list and pop its
 * replies, nothing else. 0, -EACCES (the daemon may not ACL SETUSER), -EIO. */
int tfs_store_queue_acl(uid_t uid, const char *password);
/* Takes password back from uid's ACL user (at unmount): 0 or tfs_conn_cmdf's errors. */
int tfs_store_queue_acl_drop(uid_t uid, const char *password);
/* Pops (waiting up to 0.5 s) from the shared queue, this node's list and every per-user
 * list: lmpop: BLMPOP ... COUNT count, else BRPOP (one). The reply, or NULL with *rc as
 * tfs_conn_cmdf's. The queue thread's only (a static buffer). */
redisReply *tfs_store_queue_pop_all(int *rc, int count, int lmpop);

/* --- the live-node registry and node lease: <prefix>:alive:<node> = "<token> <pid> <host> <pid space>",
 * with a TTL its daemon renews (lease.c). Both run on the caller's connection c (the
 * lease's own, which a lost lease does not close), not through the writer. --- */
void tfs_store_alive_key(char *buf, size_t size, const char *node);
/* Takes this node's lease for token (value "<token> <who>", expiring after ttl_ms) when it
 * is free or already token's, in one script: 1 taken while free, 0 ours and renewed,
 * -EBUSY another daemon's (its value in holder), -EPROTO a Redis error (its text in
 * holder), -EIO the connection failed (the caller drops c). */
int tfs_store_lease_take(redisContext *c, const char *token, const char *who, int ttl_ms,
			 char *holder, size_t hsize);
/* Takes the lease for token only while its value is still exactly old (a holder found
 * dead): 0 taken, -EBUSY it changed meanwhile, -EPROTO, -EIO. */
int tfs_store_lease_steal(redisContext *c, const char *old, const char *token, const char *who,
			  int ttl_ms);
/* Deletes the lease if it is token's: 1 deleted, 0 not ours (or gone), -EPROTO, -EIO. */
int tfs_store_lease_drop(redisContext *c, const char *token);
/* Pushes json onto node's list only if node's registry key exists (one script), the list
 * expiring after ttl seconds unless popped: 0, -EHOSTDOWN (node not alive), -EIO.
 * Synchronous: a round trip (bounded by the command timeout). */
int tfs_store_queue_forward_live(const char *node, const char *json, size_t len, int ttl);

/* --- what Redis lost, written back from what this node knows (mirror.h) --- */
/* After Redis came back: when the root's record is missing (or a lookup found it missing
 * since the last call), every directory the mirror knows that Redis lacks is written back
 * with its record, user attributes and entry in its parent, parents first; each in one
 * script that leaves an existing record alone. 0, -EIO (retried at the next call), -ENOMEM. */
int tfs_store_restore_dirs(void);
/* Whether Redis lost the root's record (missing now, or found missing by a lookup since
 * the last tfs_store_restore_dirs): 1, 0, -EIO. A round trip. */
int tfs_store_lost(void);
/* The directories above name that Redis lacks, written back (the mirror's records, else
 * mode 0755 owned by root): 0, -EIO, -ENOMEM, -ENAMETOOLONG. */
int tfs_store_restore_parents(const char *name);
/* The user attributes the mirror knows for record key, queued for the writer: 0, -ENOMEM. */
int tfs_store_restore_attrs(const char *key);

/* --- start-up and change notifications --- */
/* A record of this node found at start-up (tfs_store_node_records). */
struct tfs_store_holder {
	char node[TFS_NODE_MAX];
	int64_t pid, count;
	int64_t uid;                 /* the per-user sender that took it; -1: the shared queue */
};
struct tfs_store_rec {
	const char *key;
	const char *name;            /* the tensor's path; NULL for an unlinked one */
	uint64_t seq;                /* an unlinked one's number (its key's last part) */
	struct tfs_meta meta;
	struct tfs_store_holder *holders;   /* the holder:<node>:<pid> fields, garbage skipped */
	size_t nholders;
};
/* Calls fn for every record this node left in Redis (tensors, then unlinked ones), parsed;
 * everything in rec is valid only during the call. fn returns 0 to keep the record, else
 * the record and its directory entry are removed (a malformed record of this node goes
 * too; records of other nodes and non-hash keys are left alone). One round trip per
 * record; fn runs under the caller's locks (start-up, adopt.c: ns; after dropped writes,
 * tfs_tensor_purge_stale: none, its fn takes ns for each look-up). 0 or -EIO. */
int tfs_store_node_records(int (*fn)(struct tfs_store_rec *rec, void *arg), void *arg);
/* On a fresh connection c: its client id, and c subscribed to the invalidations. */
int tfs_store_subscribe(redisContext *c, uint64_t *id);
/* Tracking of the daemon's keys on c, reported to client redirect; 0: tracking off. The
 * reply as redisCommand gives it. */
redisReply *tfs_store_tracking(redisContext *c, uint64_t redirect);

#endif
