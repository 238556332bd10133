/* Per-user lifecycle queues: the table of users --user-queues names, their Redis ACL users
 * and the files that hand each user its credentials (users.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/conn.h"
#include "queue/users.h"
#include "store/store.h"
#include "strutil.h"
#include "log.h"
#include "meta.h"
#include "store/schema.h"
#include "queue/redis.h"

#define MAX_USERS 256

static struct tfs_quser users[MAX_USERS];
static char passwords[MAX_USERS][49];
static size_t nusers;
static char dir[300];

size_t tfs_qusers_count(void)
{
	return nusers;
}

const struct tfs_quser *tfs_qusers_at(size_t i)
{
	return i < nusers ? &users[i] : NULL;
}

const struct tfs_quser *tfs_qusers_by_list(const char *list)
{
	for (size_t i = 0; i < nusers; i++)
		if (strcmp(users[i].list, list) == 0)
			return &users[i];
	return NULL;
}

/* uid, primary group and groups of the user database's pw into u. */
static void fill(struct tfs_quser *u, uid_t uid, gid_t gid, const char *name)
{
	int n = TFS_QUSER_GROUPS;

	u->uid = uid;
	u->gid = gid;
	/* A user with more groups than fit is served with the first ones: never more
	 * access than the user has. */
	if (!name || getgrouplist(name, gid, u->groups, &n) < 0) {
		n = 1;
		u->groups[0] = gid;
	}
	u->ngroups = n < 0 ? 0 : n > TFS_QUSER_GROUPS ? TFS_QUSER_GROUPS : n;
	tfs_store_queue_user_list(u->list, sizeof(u->list), uid);
}

int tfs_qusers_ident(uid_t uid, struct tfs_quser *u)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	for (size_t i = 0; i < nusers; i++) {
		if (users[i].uid == uid) {
			*u = users[i];
			return 0;
		}
	}
	memset(u, 0, sizeof(*u));
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) || !res)
		return -ENOENT;
	fill(u, uid, pw.pw_gid, pw.pw_name);
	return 0;
}

/* One entry of --user-queues: a user name or a uid. */
static int add_user(const char *word)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	uint64_t v;

	if (nusers == MAX_USERS) {
		tfs_log(LOG_ERR, "--user-queues: more than %d users", MAX_USERS);
		return -EINVAL;
	}
	if (tfs_parse_u64(word, strlen(word), &v) == 0) {
		if (v > 0xfffffffeULL)
			goto bad;
		if (getpwuid_r((uid_t)v, &pw, buf, sizeof(buf), &res) || !res) {
			/* A uid with no name still has an identity: its own group only. */
			fill(&users[nusers], (uid_t)v, (gid_t)v, NULL);
			goto added;
		}
	} else if (getpwnam_r(word, &pw, buf, sizeof(buf), &res) || !res) {
		goto bad;
	}
	fill(&users[nusers], pw.pw_uid, pw.pw_gid, pw.pw_name);
added:
	/* Its credentials file is handed to the user (write_creds), which takes root. */
	if (geteuid() != 0 && users[nusers].uid != geteuid()) {
		tfs_log(LOG_ERR, "--user-queues: '%s': a daemon not run by root gives a queue to "
			"its own user only (uid %u)", word, (unsigned)geteuid());
		return -EPERM;
	}
	for (size_t i = 0; i < nusers; i++)
		if (users[i].uid == users[nusers].uid)
			return 0;        /* named twice */
	nusers++;
	return 0;
bad:
	tfs_log(LOG_ERR, "--user-queues: no such user '%s'", word);
	return -EINVAL;
}

int tfs_qusers_parse(const char *spec)
{
	char *copy, *word, *save = NULL;
	int rc = 0;

	if (!spec || !*spec)
		return 0;
	/* The credentials are a URL user name and the list a key pattern: the queue's name
	 * must be safe in both. */
	if (strpbrk(tfs_schema.queue, "@/?[]\\%")) {
		tfs_log(LOG_ERR, "--user-queues needs a --queue name without '@/?[]\\%%'");
		return -EINVAL;
	}
	copy = strdup(spec);
	if (!copy)
		return -ENOMEM;
	for (word = strtok_r(copy, ",", &save); word && !rc; word = strtok_r(NULL, ",", &save))
		rc = add_user(word);
	free(copy);
	return rc;
}

int tfs_qusers_acl(void)
{
	for (size_t i = 0; i < nusers; i++) {
		int rc = tfs_store_queue_acl(users[i].uid, passwords[i]);
		if (rc) {
			tfs_log(LOG_ERR, "queue users: cannot make the Redis ACL user of uid %u: "
				"the daemon's Redis user needs ACL SETUSER (%s)",
				(unsigned)users[i].uid, tfs_errno_name(-rc));
			return rc;
		}
	}
	return 0;
}

/* The URL a user's client connects with: the daemon's, as that ACL user. */
static int user_url(char *buf, size_t size, uid_t uid, const char *password)
{
	const struct tfs_redis_url *u = &tfs_redis.url;
	char name[TFS_QUSER_LIST];
	int n;

	tfs_store_queue_acl_name(name, sizeof(name), uid);
	if (u->nsentinels) {
		int m = snprintf(buf, size, "sentinel://%s:%s@", name, password);

		for (int i = 0; i < u->nsentinels && m > 0 && (size_t)m < size; i++)
			m += snprintf(buf + m, size - (size_t)m, "%s%s:%d", i ? "," : "",
				      u->sentinel[i].host, u->sentinel[i].port);
		n = m < 0 || (size_t)m >= size ? -1 :
		    m + snprintf(buf + m, size - (size_t)m, "/%s?db=%d", u->master, u->db);
	} else if (u->is_unix)
		n = u->db ? snprintf(buf, size, "unix://%s:%s@%s?db=%d", name, password, u->path, u->db)
			  : snprintf(buf, size, "unix://%s:%s@%s", name, password, u->path);
	else
		n = snprintf(buf, size, "redis://%s:%s@%s:%d/%d", name, password, u->host, u->port,
			     u->db);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* <dir>/<uid>.url, written as a fresh file and handed to the user before its bytes go in,
 * so nobody else ever reads them. */
static int write_creds(const struct tfs_quser *u, const char *password)
{
	char path[400], url[1024];
	int fd, rc = 0;
	size_t len;

	if ((rc = user_url(url, sizeof(url), u->uid, password)))
		return rc;
	snprintf(path, sizeof(path), "%s/%u.url", dir, (unsigned)u->uid);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fchown(fd, u->uid, u->gid) || fchmod(fd, 0600)) {
		rc = -errno;
		goto out;
	}
	len = strlen(url);
	url[len++] = '\n';
	if (write(fd, url, len) != (ssize_t)len)
		rc = -EIO;
out:
	close(fd);
	if (rc)
		unlink(path);
	return rc;
}

int tfs_qusers_setup(void)
{
	static const char *const bases[] = { "/run", "/tmp" };
	uint8_t raw[24];
	int rc;

	if (!nusers)
		return 0;
	for (size_t i = 0; i < nusers; i++) {
		if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
			return -EIO;
		for (size_t j = 0; j < sizeof(raw); j++)
			snprintf(&passwords[i][2 * j], 3, "%02x", raw[j]);
	}
	if ((rc = tfs_qusers_acl()))
		return rc;
	for (size_t i = 0; i < 2 && !dir[0]; i++) {
		snprintf(dir, sizeof(dir), "%s/tensorfs-queue.XXXXXX", bases[i]);
		if (!mkdtemp(dir))
			dir[0] = '\0';
	}
	if (!dir[0] || chmod(dir, 0711)) {
		tfs_log(LOG_ERR, "queue users: cannot make a credentials directory: %s",
			strerror(errno));
		return -EIO;
	}
	for (size_t i = 0; i < nusers; i++) {
		if ((rc = write_creds(&users[i], passwords[i]))) {
			tfs_log(LOG_ERR, "queue users: cannot write the credentials of uid %u: %s",
				(unsigned)users[i].uid, strerror(-rc));
			tfs_qusers_cleanup();
			return rc;
		}
	}
	tfs_log(LOG_NOTICE, "queue users: %zu per-user queue(s), credentials in %s/<uid>.url",
		nusers, dir);
	return 0;
}

void tfs_qusers_cleanup(void)
{
	char path[400];

	if (!dir[0])
		return;
	for (size_t i = 0; i < nusers; i++) {
		snprintf(path, sizeof(path), "%s/%u.url", dir, (unsigned)users[i].uid);
		unlink(path);
		tfs_store_queue_acl_drop(users[i].uid, passwords[i]);
	}
	tfs_conn_close_thread();
	rmdir(dir);
	dir[0] = '\0';
}
