/* What this node knows of the records Redis holds for it (mirror.c): directory records it
 * made, changed or read, and the user attributes it set on directories and tensors. Kept
 * in memory so that a Redis that comes back empty (no persistence) or loses a record is
 * given them back (store.c tfs_store_restore_dirs, tfs_store_restore_attrs) instead of
 * the daemon's defaults. Keys are full Redis keys (<prefix>:dir:<name>,
 * <prefix>:tensor:<name>, <prefix>:unlinked:...). Every function takes the mirror's own
 * mutex and no other lock, so any thread may call them under any lock. Out of memory: the
 * entry is left as it was (logged once), never a failure of the caller's operation. */
#ifndef TFS_MIRROR_H
#define TFS_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* A directory record, written or read from Redis: d is copied. */
void tfs_mirror_dir_put(const char *key, const struct tfs_dirrec *d);
/* The record of key into *d: 1, or 0 when the mirror has none. */
int tfs_mirror_dir_get(const char *key, struct tfs_dirrec *d);
/* A user attribute (field x:<name>) set to value[size] or removed. Its name and value
 * are charged to owner (the record's uid; -1: whoever it was charged to before), as are
 * from now on the record's other attributes (tfs_mirror_owner alone does that). */
void tfs_mirror_attr_set(const char *key, int64_t owner, const char *name, const char *value,
			 size_t size);
/* Whether name may be set to size bytes on key owned by owner: -ENOSPC when the record's
 * attributes would pass file_max bytes (names and values), -EDQUOT when owner's (never
 * uid 0's) would pass user_max, else 0. A value no larger than the one it replaces is
 * never refused. What is counted is what the mirror holds: the attributes this node set
 * or read from its records since it started (store.c). */
int tfs_mirror_attr_check(const char *key, int64_t owner, const char *name, size_t size,
			  uint64_t file_max, uint64_t user_max);
void tfs_mirror_owner(const char *key, int64_t owner);
void tfs_mirror_attr_drop(const char *key, const char *name);
/* The record of key is gone (rmdir, tensor freed): its record and attributes go too. */
void tfs_mirror_forget(const char *key);
/* The record moved from one key to another (a tensor renamed or unlinked). */
void tfs_mirror_rename(const char *from_key, const char *to_key);
/* A directory moved: every key <prefix>:<kind>:<from> and <prefix>:<kind>:<from>/...
 * becomes the same under to, for kind dir, dirents and tensor. */
void tfs_mirror_move_tree(const char *prefix, const char *from, const char *to);

/* A copy of what the mirror holds for one key (tfs_mirror_snapshot): owned by the caller,
 * freed with tfs_mirror_snapshot_free. */
struct tfs_mirror_attr {
	char *name;                  /* without "user." */
	char *value;
	size_t size;
	struct tfs_mirror_attr *next;
};
struct tfs_mirror_item {
	char *key;
	int has_dir;                 /* d holds a directory record */
	struct tfs_dirrec d;
	struct tfs_mirror_attr *attrs;
};
/* Every entry whose key starts with prefix (all of them for ""), or with exact set
 * only the one of that exact key: an array in *out, its length returned; -ENOMEM. */
int tfs_mirror_snapshot(const char *prefix, int exact, struct tfs_mirror_item **out);
void tfs_mirror_snapshot_free(struct tfs_mirror_item *items, int n);

#endif
