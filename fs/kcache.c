/* The kernel's name cache. A warm open by path was two FUSE round trips, LOOKUP then
 * OPEN, because every lookup asked the daemon (entry_timeout 0): names change behind the
 * kernel's back, through the queue and on other nodes. Entries are now kept for
 * entry_timeout (libfuse's -o entry_timeout, default 1 s), and whatever changes a name or
 * a tensor without passing through this kernel tells it:
 *   - this node's queue: queue.c calls tfs_kc_forget for each name it creates or removes;
 *   - other nodes and redis-cli: Redis client tracking on the tensor: and dir: prefixes
 *     (dcache.c) reports each key they change.
 * tfs_kc_forget marks the node's attributes stale, so the next stat (and tfs_open's fstat,
 * which lib/meta_cache.c trusts) asks the daemon. A name that is gone still has its
 * dentry until it expires; an open through it reaches op_open, which resolves the path
 * afresh and answers ESTALE, so the VFS looks the name up again (and O_CREAT creates).
 *
 * Entries are cached only while tracking is on: while Redis reports nothing (start-up,
 * Redis away, a Redis without tracking) lookups are not cached, and those cached before
 * expire within entry_timeout.
 *
 * libfuse's high-level API keeps no per-reply timeout: the lookup reply takes
 * entry_timeout from the config init was given, so that is where it is switched. */
#define FUSE_USE_VERSION 312
#include <fuse.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "log.h"

static struct {
	pthread_mutex_t mu;          /* init and tracking changes come from different threads */
	struct fuse *fuse;
	struct fuse_config *cfg;
	double want;                 /* entry_timeout asked for; 0: never cache */
	int on;                      /* tracking reported on (may come before init) */
} kc = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void apply(void)
{
	double t = kc.on ? kc.want : 0;

	if (kc.cfg)
		__atomic_store(&kc.cfg->entry_timeout, &t, __ATOMIC_RELEASE);
}

void tfs_kc_init(struct fuse *fuse, struct fuse_config *cfg)
{
	pthread_mutex_lock(&kc.mu);
	kc.fuse = fuse;
	kc.cfg = cfg;
	/* --page-cache: a write holds page locks while its request waits for ns, and
	 * dropping a node's pages waits for them, so the queue could not drop anything
	 * under ns. That mode is for measurements: it keeps no names. */
	kc.want = cfg->entry_timeout > 0 && !tfs_d.o.page_cache ? cfg->entry_timeout : 0;
	apply();
	pthread_mutex_unlock(&kc.mu);
	tfs_log(LOG_INFO, "names cached by the kernel for %g s while Redis reports changes",
		kc.want);
}

void tfs_kc_tracking(int on)
{
	pthread_mutex_lock(&kc.mu);
	kc.on = on;
	apply();
	pthread_mutex_unlock(&kc.mu);
}

void tfs_kc_forget(const char *name)
{
	struct fuse *fuse;
	char path[4096];

	pthread_mutex_lock(&kc.mu);
	fuse = kc.want > 0 ? kc.fuse : NULL;
	pthread_mutex_unlock(&kc.mu);
	if (!fuse)
		return;
	if ((size_t)snprintf(path, sizeof(path), "/%s", name) >= sizeof(path))
		return;
	/* -ENOENT: the kernel has not looked it up, nothing to drop. */
	fuse_invalidate_path(fuse, path);
}
