/* Per-user lifecycle queues (users.c): who sends a queue command, as Redis says.
 *
 * With --user-queues, each listed user gets a Redis ACL user named <queue>:u:<uid> that may
 * push only to the list of that name and read only the replies under <queue>:u:<uid>:reply:.
 * A command popped from that list comes from that uid, whatever its JSON says; the daemon
 * serves it with that uid's permissions (auth.h). The password is random per daemon
 * start and handed over in a file only that user can read. The shared queue stays for the
 * clients the administrator trusts: they act as the daemon's own user. */
#ifndef TFS_QUEUE_USERS_H
#define TFS_QUEUE_USERS_H

#include <stddef.h>
#include <sys/types.h>

#define TFS_QUSER_GROUPS 64
#define TFS_QUSER_LIST 320

/* An identity a command acts with. */
struct tfs_quser {
	uid_t uid;
	gid_t gid;                           /* the primary group: new tensors get it */
	int ngroups;
	gid_t groups[TFS_QUSER_GROUPS];      /* supplementary groups, the primary included */
	char list[TFS_QUSER_LIST];           /* <queue>:u:<uid>: its list and ACL user name */
};

/* Parses --user-queues (comma-separated user names or uids) into the table. 0 or -EINVAL
 * (logged). NULL or "": no per-user queues. Before tfs_qusers_setup. */
int tfs_qusers_parse(const char *spec);
/* Creates the ACL users in Redis and writes each user's credentials, the URL to pass to
 * tfs_connect, to <dir>/<uid>.url (mode 0600, owned by that user) in a fresh directory
 * under /run (mode 0711), whose path it logs. 0 or -errno (logged). */
int tfs_qusers_setup(void);
/* Makes the ACL users again (after Redis came back, possibly empty): 0 or -EIO. */
int tfs_qusers_acl(void);
/* Removes the credential files and their directory, and takes this daemon's passwords
 * back from the ACL users (which stay, with the passwords of other nodes' daemons). */
void tfs_qusers_cleanup(void);
/* The table, which does not change after setup: count, and entry i. */
size_t tfs_qusers_count(void);
const struct tfs_quser *tfs_qusers_at(size_t i);
/* The entry whose list is list, or NULL. */
const struct tfs_quser *tfs_qusers_by_list(const char *list);
/* Fills u for uid, from the table or the user database (a command another node
 * forwarded): 0 or -ENOENT (unknown uid). */
int tfs_qusers_ident(uid_t uid, struct tfs_quser *u);

#endif
