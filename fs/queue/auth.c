/* Permission checks for per-user queue commands, as the kernel makes them for the same
 * user through the mount (auth.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "queue/auth.h"

enum { R = 4, W = 2, X = 1 };

static int in_group(const struct tfs_quser *u, uint32_t gid)
{
	for (int i = 0; i < u->ngroups; i++)
		if (u->groups[i] == gid)
			return 1;
	return u->gid == gid;
}

/* generic_permission()'s rule: the owner's bits, else the group's, else the others'. Root
 * passes: the daemon's records carry no execute-only tensors that would matter here. */
static int may(const struct tfs_quser *u, uint32_t mode, uint32_t uid, uint32_t gid, int want)
{
	uint32_t bits;

	if (u->uid == 0)
		return 1;
	if (u->uid == uid)
		bits = mode >> 6;
	else if (in_group(u, gid))
		bits = mode >> 3;
	else
		bits = mode;
	return ((int)bits & want) == want;
}

/* Search permission on every directory from the root down to name's parent; the
 * parent's record into *parent when not NULL. */
static int walk(const struct tfs_quser *u, const char *name, struct tfs_dirrec *parent)
{
	char path[TFS_PATH_MAX];
	struct tfs_dirrec d;
	size_t len = 0;
	const char *slash;
	int rc;

	for (;;) {
		path[len] = '\0';
		if ((rc = tfs_store_dir(path, &d)))
			return rc;
		if (!may(u, d.mode, d.uid, d.gid, X))
			return -EACCES;
		slash = strchr(name + len + (len ? 1 : 0), '/');
		if (!slash)
			break;
		len = (size_t)(slash - name);
		if (len >= sizeof(path))
			return -ENAMETOOLONG;
		memcpy(path, name, len);
	}
	if (parent)
		*parent = d;
	return 0;
}

int tfs_qauth_search(const struct tfs_quser *who, const char *name)
{
	int rc;

	if (!who)
		return -ENOENT;
	rc = walk(who, name, NULL);
	return rc == -EACCES ? -EACCES : -ENOENT;
}

int tfs_qauth_create(const struct tfs_quser *who, const char *name,
		     const struct tfs_dirrec *parent)
{
	int rc;

	if (!who)
		return 0;
	if ((rc = walk(who, name, NULL)))
		return rc;
	return tfs_qauth_dir_write(who, parent);
}

int tfs_qauth_dir_write(const struct tfs_quser *who, const struct tfs_dirrec *parent)
{
	if (!who)
		return 0;
	return may(who, parent->mode, parent->uid, parent->gid, W | X) ? 0 : -EACCES;
}

int tfs_qauth_get(const struct tfs_quser *who, const char *name, const struct tfs_meta *m)
{
	int rc;

	if (!who)
		return 0;
	if ((rc = walk(who, name, NULL)))
		return rc;
	return may(who, m->mode, m->uid, m->gid, R) ? 0 : -EACCES;
}

int tfs_qauth_unlink(const struct tfs_quser *who, const char *name, const struct tfs_meta *m)
{
	struct tfs_dirrec p;
	int rc;

	if (!who)
		return 0;
	if ((rc = walk(who, name, &p)))
		return rc;
	if (!may(who, p.mode, p.uid, p.gid, W | X))
		return -EACCES;
	if ((p.mode & S_ISVTX) && who->uid != 0 && who->uid != m->uid && who->uid != p.uid)
		return -EPERM;
	return 0;
}
