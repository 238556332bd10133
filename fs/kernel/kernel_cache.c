/* The kernel's name cache. A warm open by path is one FUSE request, not two (LOOKUP then
 * OPEN), because names are kept by the kernel for entry_timeout (-o entry_timeout,
 * default 1 s). Names change behind the kernel's back, through the queue and on other
 * nodes, so whatever changes a name or a tensor without passing through this kernel
 * tells it:
 *   - this node's queue: queue.c calls tfs_kcache_forget for each name it creates or removes;
 *   - other nodes and redis-cli: Redis client tracking on the tensor: and dir: prefixes
 *     (dircache.c) reports each key they change.
 * tfs_kcache_forget drops the node's attributes at once (so the next stat, and tfs_open's
 * fstat, which lib/meta_cache.c trusts, asks the daemon) and the name itself soon after,
 * from a thread of its own: dropping a name takes the kernel's lock of its directory,
 * which a request in that directory holds while it waits for ns, so no thread that may
 * hold ns can do it. Until then a name that is gone still has its dentry; a GETATTR or
 * OPEN through it answers ESTALE, so the VFS looks the name up again (stale.h).
 *
 * Entries are cached only while tracking is on: while Redis reports nothing (start-up,
 * Redis away, a Redis without tracking) lookups are not cached, and those cached before
 * expire within entry_timeout. */
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel_cache.h"
#include "log.h"
#include "kernel/node.h"

/* Names waiting for the notifier; more than this are left to expire. */
#define PENDING_MAX 4096

struct pending {
	uint64_t parent;
	struct pending *next;
	char name[];
};

static struct {
	pthread_mutex_t mu;          /* everything below */
	pthread_cond_t cv;
	struct fuse_session *se;
	double want;                 /* entry_timeout asked for; 0: never cache */
	int on;                      /* tracking reported on (may come before init) */
	struct pending *head, **tail;
	size_t npending;
	int running, stop;
	pthread_t thread;
} kc = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

double tfs_kcache_entry_timeout(void)
{
	double t;

	pthread_mutex_lock(&kc.mu);
	t = kc.on ? kc.want : 0;
	pthread_mutex_unlock(&kc.mu);
	return t;
}

static void *notifier(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&kc.mu);
	for (;;) {
		struct pending *p;

		while (!kc.head && !kc.stop)
			pthread_cond_wait(&kc.cv, &kc.mu);
		if (!kc.head)
			break;
		p = kc.head;
		kc.head = p->next;
		if (!kc.head)
			kc.tail = &kc.head;
		kc.npending--;
		pthread_mutex_unlock(&kc.mu);
		/* -ENOENT: the kernel does not have the name, nothing to drop. */
		fuse_lowlevel_notify_inval_entry(kc.se, p->parent, p->name, strlen(p->name));
		free(p);
		pthread_mutex_lock(&kc.mu);
	}
	pthread_mutex_unlock(&kc.mu);
	return NULL;
}

int tfs_kcache_start(struct fuse_session *se, double entry_timeout)
{
	int e;

	pthread_mutex_lock(&kc.mu);
	kc.se = se;
	kc.tail = &kc.head;
	/* --page-cache: a write holds page locks while its request waits for ns, and
	 * dropping a node's pages waits for them. That mode is for measurements: it keeps
	 * no names. */
	kc.want = entry_timeout > 0 ? entry_timeout : 0;
	kc.stop = 0;
	e = pthread_create(&kc.thread, NULL, notifier, NULL);
	kc.running = e == 0;
	pthread_mutex_unlock(&kc.mu);
	if (e) {
		tfs_log(LOG_ERR, "cannot start the kernel cache notifier: %s", strerror(e));
		return -e;
	}
	pthread_setname_np(kc.thread, "tfs-kcache");
	tfs_log(LOG_INFO, "names cached by the kernel for %g s while Redis reports changes",
		kc.want);
	return 0;
}

void tfs_kcache_stop(void)
{
	struct pending *p;

	pthread_mutex_lock(&kc.mu);
	if (!kc.running) {
		pthread_mutex_unlock(&kc.mu);
		return;
	}
	kc.stop = 1;
	pthread_cond_signal(&kc.cv);
	pthread_mutex_unlock(&kc.mu);
	pthread_join(kc.thread, NULL);
	pthread_mutex_lock(&kc.mu);
	kc.running = 0;
	while ((p = kc.head)) {
		kc.head = p->next;
		free(p);
	}
	kc.tail = &kc.head;
	kc.npending = 0;
	kc.se = NULL;
	pthread_mutex_unlock(&kc.mu);
}

void tfs_kcache_tracking(int on)
{
	pthread_mutex_lock(&kc.mu);
	kc.on = on;
	pthread_mutex_unlock(&kc.mu);
}

void tfs_kcache_forget_attr(uint64_t id)
{
	struct fuse_session *se;

	pthread_mutex_lock(&kc.mu);
	se = kc.running ? kc.se : NULL;
	pthread_mutex_unlock(&kc.mu);
	/* A negative offset: attributes only, no pages (which a read may hold locked). */
	if (se)
		fuse_lowlevel_notify_inval_inode(se, id, -1, 0);
}

void tfs_kcache_forget_dir(const char *dir)
{
	uint64_t parent, id;

	if (!dir[0])
		tfs_kcache_forget_attr(TFS_ROOT_ID);
	else if (tfs_node_find(dir, &parent, &id) == 0 && id)
		tfs_kcache_forget_attr(id);
}

void tfs_kcache_forget(const char *name)
{
	uint64_t parent, id;
	const char *base = strrchr(name, '/');
	struct pending *p;
	size_t len;

	/* No node under the name: the kernel has not looked it up (an ENOENT it was
	 * answered is looked up again at its next use), or what it looked up was detached
	 * from the name, and told to go then (queue.c forgets a name before it detaches it;
	 * the mount's own unlink and rename are the kernel's). Nothing to drop: a queue that
	 * makes and removes names the kernel never saw sends it nothing. */
	if (tfs_node_find(name, &parent, &id) || !id)
		return;
	tfs_kcache_forget_attr(id);
	if (!parent)
		return;
	base = base ? base + 1 : name;
	len = strlen(base);
	pthread_mutex_lock(&kc.mu);
	if (kc.running && kc.want > 0 && kc.npending < PENDING_MAX &&
	    (p = malloc(sizeof(*p) + len + 1))) {
		p->parent = parent;
		memcpy(p->name, base, len + 1);
		p->next = NULL;
		*kc.tail = p;
		kc.tail = &p->next;
		kc.npending++;
		pthread_cond_signal(&kc.cv);
	}
	pthread_mutex_unlock(&kc.mu);
}
