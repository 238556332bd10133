/* Extended attributes (docs/contract.md): user.tensor.* are the tensor's metadata, any other user.*
 * name is the user's own and kept in the record as field "x:<name>". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "mem/devices.h"
#include "store/conn.h"
#include "store/mirror.h"
#include "tensors/quota.h"
#include "store/store.h"
#include "tensors/tensor.h"
#include "fuse/xattr.h"
#include "dtype.h"
#include "log.h"
#include "kernel/node.h"
#include "strutil.h"
#include "tier.h"
#include "store/schema.h"
#include "store/records.h"
#include "tensors/tensors.h"
#include "handles/server.h"

#define TP "user.tensor."
#define XATTR_MAX 65536

static const char *const builtin[] = { "dtype", "shape", "device", "bytes", "ipc_handle",
				       "ipc_offset", "refcount", "ctime", "node", "meta",
				       "holds" };
#define NBUILTIN (sizeof(builtin) / sizeof(builtin[0]))

struct xtarget {
	int kind;                 /* 'l' local tensor, 'r' remote tensor, 'd' directory */
	struct tfsd_tensor *t;
	struct tfs_meta m;        /* for 'l' a copy of t->meta */
	struct tfs_dirrec d;
	char key[TFS_KEYMAX];
};

/* w: a path, or the key of an unlinked tensor still open (node.h). Caller holds ns. */
static int xresolve(const struct tfs_where *w, struct xtarget *x)
{
	const char *name = w->path;
	int type, rc;

	x->t = name ? tfs_table_find(name) : tfs_table_find_key(w->ukey);
	if (x->t) {
		if (!tfs_where_is(w, x->t->meta.ino))
			return -ENOENT;
		x->kind = 'l';
		x->m = x->t->meta;
		x->m.refcount = tfs_tensor_refcount(x->t);
		/* The st_ctim a GETATTR gives now, which the record may lag (writes fold in
		 * later): a client matches the metadata to its descriptor's fstat by it. */
		tfs_tensor_fold_times(x->t);
		x->m.ctime_ns = (int64_t)x->t->ctime.tv_sec * 1000000000 + x->t->ctime.tv_nsec;
		snprintf(x->key, sizeof(x->key), "%s", x->t->key);
		return 0;
	}
	if (!name)
		return -ENOENT;
	type = tfs_store_type(name);
	if (type < 0)
		return type;
	x->kind = type == 'd' ? 'd' : 'r';
	if ((rc = tfs_key(x->key, sizeof(x->key), type == 'd' ? "dir" : "tensor", name)))
		return rc;
	if (type == 'd') {
		rc = tfs_store_dir(name, &x->d);
		return rc == 0 && !tfs_where_is(w, x->d.ino) ? -ENOENT : rc;
	}
	rc = tfs_store_tensor(name, &x->m);
	if (rc == 0 && strcmp(x->m.node, tfs_schema.node) == 0)
		rc = -ENOENT;     /* a stale record of ours: see tfs_ops_resolve_path() in ops_common.c */
	if (rc == 0 && !tfs_where_is(w, x->m.ino))
		rc = -ENOENT;
	return rc == -EBADMSG ? -EIO : rc;
}

static int put(char *value, size_t size, const void *data, size_t len)
{
	if (size == 0)
		return (int)len;
	if (len > size)
		return -ERANGE;
	memcpy(value, data, len);
	return (int)len;
}

static int put_u64(char *value, size_t size, unsigned long long v)
{
	char buf[24];
	return put(value, size, buf, (size_t)snprintf(buf, sizeof(buf), "%llu", v));
}

static int get_builtin(struct xtarget *x, const char *attr, char *value, size_t size)
{
	const struct tfs_meta *m = &x->m;
	char buf[512];
	int n, rc;

	if (strcmp(attr, "handle_socket") == 0) {
		/* Not listed: the handle socket of this mount, on every name of it. */
		const char *hp = tfs_handles_path();

		return hp ? put(value, size, hp, strlen(hp)) : -ENODATA;
	}
	if (x->kind == 'd') {
		if (strcmp(attr, "dtype") == 0 && x->d.has_dtype)
			return put(value, size, tfs_dtype_name(x->d.dtype), strlen(tfs_dtype_name(x->d.dtype)));
		if (strcmp(attr, "device") == 0 && x->d.has_device) {
			tfs_tier_name(x->d.device, buf, sizeof(buf));
			return put(value, size, buf, strlen(buf));
		}
		return -ENODATA;
	}
	if (strcmp(attr, "dtype") == 0)
		return put(value, size, tfs_dtype_name(m->dtype), strlen(tfs_dtype_name(m->dtype)));
	if (strcmp(attr, "shape") == 0) {
		n = tfs_shape_format(&m->shape, buf, sizeof(buf));
		return n < 0 ? -EIO : put(value, size, buf, (size_t)n);
	}
	if (strcmp(attr, "device") == 0) {
		tfs_tier_name(m->device, buf, sizeof(buf));
		return put(value, size, buf, strlen(buf));
	}
	if (strcmp(attr, "bytes") == 0)
		return put_u64(value, size, m->bytes);
	if (strcmp(attr, "ipc_offset") == 0)
		return put_u64(value, size, m->ipc_offset);
	if (strcmp(attr, "refcount") == 0)
		return put_u64(value, size, (unsigned long long)m->refcount);
	if (strcmp(attr, "ctime") == 0)
		return put_u64(value, size, (unsigned long long)m->ctime);
	if (strcmp(attr, "node") == 0)
		return put(value, size, m->node, strlen(m->node));
	if (strcmp(attr, "ipc_handle") == 0)
		return m->has_handle ? put(value, size, m->ipc_handle, TFS_IPC_HANDLE_SIZE) : -ENODATA;
	if (strcmp(attr, "handle_type") == 0) {
		/* Not listed: what memory the handle names, by its magic (docs/holders.md). */
		const char *ty = !m->has_handle ? NULL :
				 memcmp(m->ipc_handle, TFS_HOST_MAGIC, 8) == 0 ? "posix_fd" :
				 memcmp(m->ipc_handle, TFS_VMM_MAGIC, 8) == 0 ? "posix_fd" :
				 "cuda_ipc";

		return ty ? put(value, size, ty, strlen(ty)) : -ENODATA;
	}
	if (strcmp(attr, "holds") == 0) {
		size_t len;
		char *text;

		if (x->kind != 'l')
			return -ENODATA;     /* another node's holders are its own */
		if (!(text = tfs_tensor_holds_text(x->t, &len)))
			return -ENOMEM;
		rc = len > XATTR_MAX ? -E2BIG : put(value, size, text, len);
		free(text);
		return rc;
	}
	if (strcmp(attr, "meta") == 0) {
		const char *hp = tfs_handles_path();
		struct tfs_meta mm = *m;
		char *json;

		/* Tells clients to go through the descriptor, not the handle. */
		mm.remote = x->kind == 'r';
		/* A VMM tensor's handle grants nothing: its text names the socket and the
		 * name to ask it for, so that tfs_open_meta maps it (docs/vmm.md). */
		if (x->kind == 'l' && hp && x->t->linked && x->t->name && m->has_handle &&
		    memcmp(m->ipc_handle, TFS_VMM_MAGIC, 8) == 0) {
			snprintf(mm.hsock, sizeof(mm.hsock), "%s", hp);
			json = tfs_meta_to_json(&mm, x->t->name);
		} else {
			json = tfs_meta_to_json(&mm, NULL);
		}
		if (!json)
			return -ENOMEM;
		rc = put(value, size, json, strlen(json));
		free(json);
		return rc;
	}
	return -ENODATA;
}

int tfs_xattr_get(const struct tfs_where *w, const char *name, char *value, size_t size)
{
	struct xtarget x;
	redisReply *r;
	int rc;

	if (strncmp(name, "user.", 5) != 0)
		return -ENODATA;
	tfs_ns_lock();
	rc = xresolve(w, &x);
	if (rc)
		goto out;
	if (strncmp(name, TP, strlen(TP)) == 0) {
		rc = get_builtin(&x, name + strlen(TP), value, size);
		goto out;
	}
	rc = tfs_store_user_get(x.key, name + 5, &r);
	if (rc == 0)
		rc = put(value, size, r->str, r->len);
	freeReplyObject(r);
out:
	tfs_ns_unlock();
	return rc;
}

/* user.tensor.dtype on a tensor that has bytes: the memory is reinterpreted, as numpy's
 * view() does: same itemsize keeps the shape, otherwise the last dim absorbs the change. */
static int set_dtype(struct tfsd_tensor *t, tfs_dtype dt)
{
	struct tfs_shape sh = t->meta.shape;
	size_t old = tfs_dtype_size(t->meta.dtype), new = tfs_dtype_size(dt);

	if (t->meta.bytes > 0 && old != new) {
		uint64_t *last;
		if (sh.ndim == 0)
			return -EINVAL;
		last = &sh.dims[sh.ndim - 1];
		if ((*last * old) % new)
			return -EINVAL;
		*last = *last * old / new;
	}
	return tfs_tensor_shape(t, dt, &sh, 0);
}

/* user.tensor.holds = "revoke" (every holder) or "revoke <node>:<pid>": the queue holds
 * go, as the owner or root decides (a lease can run for a day). */
static int revoke(struct xtarget *x, const char *value, size_t size, uid_t uid)
{
	char node[TFS_NODE_MAX];
	const char *colon;
	uint64_t pid;
	int rc;

	if (x->kind != 'l')
		return x->kind == 'r' ? -EREMOTE : -EINVAL;
	if (uid != 0 && uid != x->t->meta.uid)
		return -EPERM;
	tfs_trim(&value, &size);
	if (size == 6 && memcmp(value, "revoke", 6) == 0) {
		rc = tfs_tensor_revoke(x->t, NULL, 0);
		return rc == -ENOENT ? 0 : rc < 0 ? rc : 0;
	}
	if (size < 8 || memcmp(value, "revoke ", 7))
		return -EINVAL;
	value += 7;
	size -= 7;
	colon = memrchr(value, ':', size);
	if (!colon || colon == value || (size_t)(colon - value) >= sizeof(node) ||
	    tfs_parse_u64(colon + 1, size - (size_t)(colon + 1 - value), &pid) ||
	    pid > INT64_MAX)
		return -EINVAL;
	memcpy(node, value, (size_t)(colon - value));
	node[colon - value] = '\0';
	rc = tfs_tensor_revoke(x->t, node, (int64_t)pid);
	return rc < 0 ? (rc == -ENOENT ? -ESRCH : rc) : 0;
}

static int set_builtin(const char *path, struct xtarget *x, const char *attr,
		       const char *value, size_t size, pid_t pid, uid_t uid)
{
	struct tfs_shape sh;
	tfs_dtype dt;
	int dev;
	size_t i;
	int rc;

	for (i = 0; i < NBUILTIN; i++)
		if (strcmp(attr, builtin[i]) == 0)
			break;
	if (i == NBUILTIN) {
		tfs_log(LOG_INFO, "%s: unknown attribute user.tensor.%s refused", path, attr);
		return -EINVAL;
	}
	if (strcmp(attr, "holds") == 0)
		return revoke(x, value, size, uid);
	if (i > 2)
		return -EPERM;                 /* bytes, handle, counts...: read-only */
	if (x->kind == 'r')
		return -EREMOTE;
	if (strcmp(attr, "shape") == 0) {
		if (x->kind == 'd')
			return -EINVAL;        /* directories carry dtype and device defaults only */
		/* "bf16 [4096,1024]": typed and sized in one request (a load's creates) */
		dt = x->t->meta.dtype;
		rc = tfs_shape_parse_typed(value, size, &dt, &sh);
		if (rc < 0)
			return -EINVAL;
		return tfs_tensor_shape(x->t, dt, &sh, pid);
	}
	if (strcmp(attr, "dtype") == 0) {
		if (tfs_dtype_parse(value, size, &dt))
			return -EINVAL;
		if (x->kind == 'd') {
			x->d.has_dtype = 1;
			x->d.dtype = dt;
			return tfs_store_dir_write(path, &x->d);
		}
		return set_dtype(x->t, dt);
	}
	/* device */
	tfs_trim(&value, &size);
	if (tfs_tier_parse(value, size, &dev) || !tfs_device_served(dev))
		return -EINVAL;
	if (x->kind == 'd') {
		x->d.has_device = 1;
		x->d.device = dev;
		return tfs_store_dir_write(path, &x->d);
	}
	return tfs_tensor_set_device(x->t, dev, pid);
}

/* libtensorfs's tfs_mark_written stores the producer's interprocess event here; reads
 * of the tensor wait for it (ops_file.c). Any other value (or a removal) clears the mark. */

static void follow_mark(struct xtarget *x, const char *name, const char *value, size_t size)
{
	if (x->kind != 'l' || strcmp(name, TFS_EVENT_XATTR))
		return;
	pthread_rwlock_wrlock(&x->t->io);
	x->t->has_mark = value && size == TFS_IPC_HANDLE_SIZE;
	if (x->t->has_mark)
		memcpy(x->t->mark, value, TFS_IPC_HANDLE_SIZE);
	pthread_rwlock_unlock(&x->t->io);
}

int tfs_xattr_set(const struct tfs_where *w, const char *name, const char *value, size_t size,
		  int flags, pid_t pid, uid_t uid)
{
	struct xtarget x;
	int64_t owner;
	int rc;

	if (strncmp(name, "user.", 5) != 0)
		return -ENOTSUP;
	if (size > XATTR_MAX)
		return -E2BIG;
	if (strlen(name) > 255)
		return -ERANGE;
	tfs_ns_lock();
	rc = xresolve(w, &x);
	if (rc)
		goto out;
	if (strncmp(name, TP, strlen(TP)) == 0) {
		rc = set_builtin(w->path ? w->path : w->ukey, &x, name + strlen(TP), value, size,
				 pid, uid);
		goto out;
	}
	if (x.kind == 'r') {
		rc = -EREMOTE;
		goto out;
	}
	/* Charged to the owner, as disk quotas charge a file's blocks. */
	owner = x.kind == 'l' ? (int64_t)x.t->meta.uid : (int64_t)x.d.uid;
	rc = tfs_mirror_attr_check(x.key, owner, name + 5, size, tfs_limits.xattr_file,
				   tfs_limits.xattr_user);
	if (rc)
		goto out;
	/* A mark takes the tensor's io, which a move holds while it copies. */
	if (x.kind == 'l' && x.t->moving && strcmp(name, TFS_EVENT_XATTR) == 0) {
		rc = -EBUSY;
		goto out;
	}
	rc = tfs_store_user_set(x.key, owner, name + 5, value, size, !!(flags & XATTR_CREATE),
				!!(flags & XATTR_REPLACE));
	if (rc == 0)
		follow_mark(&x, name, value, size);
out:
	tfs_ns_unlock();
	return rc;
}

static int list_add(char *list, size_t size, size_t *n, const char *a, const char *b)
{
	size_t len = strlen(a) + strlen(b) + 1;

	if (size && *n + len > size)
		return -ERANGE;
	if (size) {
		strcpy(list + *n, a);
		strcat(list + *n, b);
	}
	*n += len;
	return 0;
}

int tfs_xattr_list(const struct tfs_where *w, char *list, size_t size)
{
	struct xtarget x;
	size_t n = 0;
	redisReply *r;
	int rc;

	tfs_ns_lock();
	rc = xresolve(w, &x);
	if (rc)
		goto out;
	for (size_t i = 0; rc == 0 && i < NBUILTIN; i++) {
		if (x.kind == 'd' && !((i == 0 && x.d.has_dtype) || (i == 2 && x.d.has_device)))
			continue;
		if (x.kind != 'd' && strcmp(builtin[i], "ipc_handle") == 0 && !x.m.has_handle)
			continue;
		if (strcmp(builtin[i], "holds") == 0 && (x.kind != 'l' || !x.t->holders))
			continue;
		rc = list_add(list, size, &n, TP, builtin[i]);
	}
	r = NULL;
	if (rc == 0)
		rc = tfs_store_user_list(x.key, &r);
	for (size_t i = 0; rc == 0 && i < r->elements; i++)
		if (tfs_store_user_name(r->element[i]))
			rc = list_add(list, size, &n, "user.", tfs_store_user_name(r->element[i]));
	freeReplyObject(r);
out:
	tfs_ns_unlock();
	return rc ? rc : (int)n;
}

int tfs_xattr_remove(const struct tfs_where *w, const char *name)
{
	struct xtarget x;
	int rc;

	if (strncmp(name, "user.", 5) != 0)
		return -ENOTSUP;
	if (strncmp(name, TP, strlen(TP)) == 0)
		return -EPERM;
	tfs_ns_lock();
	rc = xresolve(w, &x);
	if (rc == 0 && x.kind == 'r')
		rc = -EREMOTE;
	if (rc)
		goto out;
	rc = tfs_store_user_remove(x.key, name + 5);
	if (rc == 0)
		follow_mark(&x, name, NULL, 0);
out:
	tfs_ns_unlock();
	return rc;
}
