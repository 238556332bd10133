/* The kernel's node ids (the low-level FUSE API's inode numbers), which stat shows.
 *
 * The kernel names every file and directory it has looked up by a 64-bit node id and
 * keeps using it until it FORGETs it. The daemon keys everything else by path (Redis keys
 * are paths), so this table maps an id to its place in the tree: a parent node and a
 * name. A path is built by walking up, so renaming a directory moves one node and its
 * whole subtree follows.
 *
 * A node's id is the inode number its Redis record holds (field "ino", random, made
 * with the tensor or directory and moved with the record by every rename), so a name
 * keeps its number across renames, FORGETs and restarts, and the same on every node.
 * Records made before that field existed get a 64-bit FNV-1a hash of the path (probed
 * past ids in use, never 0 or 1).
 *
 * A node whose name went (unlink, rmdir, replaced by a rename) is detached: it keeps
 * serving the open files the kernel still has on it through the key of its unlinked
 * tensor (tfs_node_where), and no lookup finds it any more. A tensor replaced by a
 * rename lives on while its node does (pinned): an open that looked the name up before
 * the rename opens it, as on a local file system, instead of failing.
 *
 * Locking: one mutex of its own, a leaf: taken under ns or without it, never while
 * calling out of this module. */
#ifndef TFS_NODE_H
#define TFS_NODE_H

#include <stddef.h>
#include <stdint.h>

#define TFS_ROOT_ID 1

/* What a node names now: a path (no leading slash, "" for the root), or for a detached
 * node that still has an open tensor, that tensor's unlinked key. Both malloc'd. id: the
 * node's. */
struct tfs_where {
	char *path;
	char *ukey;
	uint64_t id;
};

int tfs_node_init(void);
void tfs_node_fini(void);

/* The id derived from path (no leading slash): what readdir reports as d_ino. */
uint64_t tfs_node_id_of(const char *path);

/* Where id is: 0, -ESTALE (unknown or detached without a tensor) or -ENOMEM. The caller
 * frees with tfs_where_free. */
int tfs_node_where(uint64_t id, struct tfs_where *w);
void tfs_where_free(struct tfs_where *w);

/* Whether the object w's path holds now, of inode number ino (0: a record without one),
 * is w's node's. A request can find the path's object replaced by another since the
 * node was named (taken between tfs_node_where and the caller's lock, or by another node
 * behind the kernel's back): it must not act on the new object through the old node, so
 * the node names nothing. The root and unlinked keys are always their node's. */
static inline int tfs_where_is(const struct tfs_where *w, uint64_t ino)
{
	return !w->path || !*w->path || !ino || w->id == ino;
}

/* The path of name in directory parent: 0, -ESTALE (parent unknown or detached),
 * -ENAMETOOLONG (name over 255 bytes) or -ENOMEM; *path malloc'd. */
int tfs_node_child_path(uint64_t parent, const char *name, char **path);

/* A new inode number for a tensor or directory record (random, 2 to 2^63 - 1). */
uint64_t tfs_node_new_ino(void);

/* The node of name in parent, with one more lookup the kernel will FORGET: its id, or 0
 * (-ENOMEM, or parent gone). ino: what the record says (0: none), which the node's id
 * then is; a node of that id elsewhere is moved here (the object moved behind the
 * kernel's back), and a node here with another id loses the name. */
uint64_t tfs_node_lookup(uint64_t parent, const char *name, uint64_t ino);

/* The kernel forgot n lookups of id; the node goes with its last one and its children. */
void tfs_node_forget(uint64_t id, uint64_t n);

/* name in parent was removed: its node (if any) is detached. ukey: the key the tensor
 * lives on under while still open (NULL: nothing behind it). */
void tfs_node_detach(uint64_t parent, const char *name, const char *ukey);

/* The same for the tensor a rename replaced, which keeps the kernel's reference while
 * the node lives (tfs_tensor_unlink_replaced): when the node goes, ukey is noted for
 * tfs_node_take_unpinned. 1 when there was a node at name, else 0 (nothing will be
 * noted: the caller unpins the tensor itself). */
int tfs_node_detach_pinned(uint64_t parent, const char *name, const char *ukey);

/* Whether some pinned node went since the last tfs_node_take_unpinned that found
 * nothing; without the lock, so a hint: cheap enough for every FORGET. */
int tfs_node_unpinned_pending(void);

/* The key of a tensor whose pinned node went, malloc'd (the caller frees it and unpins the
 * tensor, under ns), or NULL when there is none. */
char *tfs_node_take_unpinned(void);

/* name in parent moved to newname in newparent; a node that was there is detached. */
void tfs_node_move(uint64_t parent, const char *name, uint64_t newparent, const char *newname);

/* For invalidations: the ids of path's parent and (when the kernel knows it) of path
 * itself. -ENOENT when the kernel knows neither. */
int tfs_node_find(const char *path, uint64_t *parent, uint64_t *id);

#endif
