/* Tensor records in Redis (records.c). */
#ifndef TFS_RECORDS_H
#define TFS_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "meta.h"

/* Reads a tensor record: 0, -ENOENT, -EIO, -EBADMSG (garbage: logged). */
int tfs_store_tensor(const char *name, struct tfs_meta *m);
/* --- this node's tensor records (tensor.c, holders.c): queued for the writer, so 0 or
 * -ENOMEM; what Redis says later is logged by the writer. --- */
/* The whole record m under key (replace: DEL first, so a stale record's fields go). */
int tfs_store_save(const char *key, const struct tfs_meta *m, int replace);
int tfs_store_save_refcount(const char *key, int64_t refcount);
int tfs_store_delete(const char *key);
int tfs_store_rename(const char *from_key, const char *to_key);
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
/* create: fail with -EEXIST when set; replace: fail with -ENODATA when not (atomically).
 * owner: the record's uid, charged for it (mirror.h). */
int tfs_store_user_set(const char *key, int64_t owner, const char *name, const char *value,
		       size_t size, int create, int replace);
/* The record's fields: an array reply (freed by the caller), -EIO; tfs_store_user_name
 * gives the user's name an element holds, NULL for the record's other fields. */
int tfs_store_user_list(const char *key, redisReply **out);
const char *tfs_store_user_name(const redisReply *e);
int tfs_store_user_remove(const char *key, const char *name);

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
 * everything in rec is valid only during the call. fn returns 0 to keep the record, 1 to
 * remove it and its directory entry (a malformed record of this node goes too; records of
 * other nodes and non-hash keys are left alone), or a negative errno to stop the walk,
 * keeping that record and every one not read yet. One round trip per record; fn runs
 * under the caller's locks (start-up, adopt.c: ns; after dropped writes,
 * tfs_tensor_purge_stale: none, its fn takes ns for each look-up). 0 once every record was
 * read; -EIO (Redis failed part-way, or answered a record's read with an error), -ENOMEM
 * or fn's error when the walk stopped. */
int tfs_store_node_records(int (*fn)(struct tfs_store_rec *rec, void *arg), void *arg);

#endif
