/* A load's tensors made by batches (load_mk.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "client_internal.h"
#include "load_mk.h"
#include "load_pipe.h"
#include "tier.h"
#include "typed.h"

/* The first batch is small, so that the first tensor is made and filling soon; each
 * next one doubles, up to what the daemon makes under its namespace lock at once. */
#define FIRST_BATCH 8
#define MAX_BATCH 128

/* The process's umask, without changing it (umask() would, for every thread): 0, or -1
 * where /proc does not say. */
static int read_umask(mode_t *out)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");
	int rc = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned m;

		if (sscanf(line, "Umask: %o", &m) == 1) {
			*out = (mode_t)(m & 0777);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

void tfs_load_mk_init(struct tfs_load_mk *mk, const struct tfs_load_spec *spec, int *made,
		      size_t n, int device)
{
	mode_t um;

	memset(mk, 0, sizeof(*mk));
	pthread_mutex_init(&mk->mu, NULL);
	pthread_cond_init(&mk->cv, NULL);
	mk->spec = spec;
	mk->made = made;
	mk->n = n;
	mk->batch = FIRST_BATCH;
	if (device >= 0 || device == TFS_DEVICE_CPU) {
		mk->flags = TFS_MK_DEVICE;
		mk->device = device;
	}
	mk->state = calloc(n ? n : 1, sizeof(*mk->state));
	mk->req = malloc(sizeof(*mk->req));
	/* TFS_LOAD_MKBATCH=0: each tensor its own create, for comparison */
	mk->off = !mk->state || !mk->req || read_umask(&um) ||
		  (getenv("TFS_LOAD_MKBATCH") && !strcmp(getenv("TFS_LOAD_MKBATCH"), "0"));
	if (!mk->off)
		mk->mode = 0644 & ~um;
}

void tfs_load_mk_fini(struct tfs_load_mk *mk)
{
	const char *prof = getenv("TFS_LOAD_PROFILE");

	if (prof && !strcmp(prof, "1") && mk->sent)
		fprintf(stderr, "tfs_load profile:   batch creates: %zu requests, %.3f s in them, "
			"%.3f thread-s waiting for them%s\n", mk->sent, (double)mk->ns * 1e-9,
			(double)mk->wait_ns * 1e-9, mk->off ? " (then turned off)" : "");
	free(mk->req);
	free(mk->state);
	pthread_cond_destroy(&mk->cv);
	pthread_mutex_destroy(&mk->mu);
}

/* Where path's last component begins. */
static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Whether paths a and b name entries of the same directory (as they spell it). */
static int same_dir(const char *a, const char *b)
{
	size_t la = (size_t)(base_of(a) - a), lb = (size_t)(base_of(b) - b);

	return la == lb && !memcmp(a, b, la);
}

/* Sends the batch that begins at item mk->next: that item made by a create of its own
 * (the kernel's checks of a create there: a read-only mount, a security module's rules),
 * then, on its descriptor, the request that types it and makes the items after it in the
 * same directory, as many as fit. An item the request cannot carry (its name) is left to
 * its own create. Caller holds mu, which is let go while the kernel and the daemon work
 * (mk->sending set): threads whose tensors an earlier batch made open them meanwhile. */
static void send_batch(struct tfs_load_mk *mk)
{
	size_t from = mk->next, i, used;
	const struct tfs_load_spec *sp = &mk->spec[from];
	const char *base = base_of(sp->path);
	char dev[TFS_TIER_NAME_MAX];
	uint64_t t0;
	int afd, rc = 0, e = 0;

	tfs_mk_init(mk->req, mk->flags | TFS_MK_SELF, mk->device, mk->mode, &used);
	if (tfs_mk_add(mk->req, &used, base, strlen(base), sp->dtype, &sp->shape)) {
		mk->next = from + 1;       /* made by its own create, which says what is wrong */
		return;
	}
	for (i = from + 1; i < mk->n && i - from < mk->batch; i++) {
		const char *p = mk->spec[i].path, *b = base_of(p);

		if (!same_dir(p, sp->path) || tfs_mk_add(mk->req, &used, b, strlen(b),
							 mk->spec[i].dtype, &mk->spec[i].shape))
			break;
	}
	mk->sending = 1;
	pthread_mutex_unlock(&mk->mu);
	t0 = tfs_pipe_now_ns();
	afd = open(sp->path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
	if (afd < 0)
		e = errno;
	else if ((mk->flags & TFS_MK_DEVICE) &&
		 fsetxattr(afd, "user.tensor.device", tfs_tier_name(mk->device, dev, sizeof(dev)),
			   strlen(dev), 0))
		e = errno;
	else if ((rc = ioctl(afd, TFS_IOC_MKBATCH, mk->req)) != 0) {
		/* An older daemon: this one typed as without batches, by the thread that
		 * opened it (the daemon's busy check is per process, by each open's thread),
		 * and each item after it its own create. */
		char what[256];
		int trc = tfs_set_type(afd, NULL, sp->dtype, &sp->shape, NULL, what, sizeof(what));

		if (trc)
			e = -trc;
	}
	if (afd >= 0)
		close(afd);
	t0 = tfs_pipe_now_ns() - t0;
	pthread_mutex_lock(&mk->mu);
	mk->sending = 0;
	pthread_cond_broadcast(&mk->cv);
	mk->ns += t0;
	mk->sent++;
	if (afd >= 0)
		mk->made[from] = 1;
	mk->next = from + 1;
	if (e) {
		mk->state[from] = -e;      /* its create's own error, as without batches */
		return;
	}
	/* An older daemon (the first typed above), or one that refused the batch past the
	 * first where its check of the caller is stricter than the kernel's would be (an owner
	 * rule it cannot see, groups past the 64 it reads): the first is made and typed; each
	 * item after it its own create, which the kernel checks. */
	if (rc || (mk->req->made == 1 && (mk->req->err == EACCES || mk->req->err == EPERM))) {
		mk->state[from] = 1;
		mk->off = 1;
		return;
	}
	for (i = 0; i < mk->req->made && i < mk->req->count; i++) {
		mk->state[from + i] = 1;
		mk->made[from + i] = 1;
	}
	if (i < mk->req->count && (mk->req->err || i == 0)) {
		mk->state[from + i] = mk->req->err > 0 ? -mk->req->err : -EIO;
		i++;
	}
	mk->next = from + i;
	if (mk->batch < MAX_BATCH)
		mk->batch *= 2;
}

int tfs_load_mk_item(struct tfs_load_mk *mk, size_t i)
{
	uint64_t t0 = 0;
	int st;

	pthread_mutex_lock(&mk->mu);
	for (;;) {
		if (mk->off || i < mk->next) {
			st = mk->state ? mk->state[i] : 0;
			break;
		}
		if (mk->sending) {
			if (!t0)
				t0 = tfs_pipe_now_ns();
			pthread_cond_wait(&mk->cv, &mk->mu);
			continue;
		}
		send_batch(mk);
	}
	if (t0)
		mk->wait_ns += tfs_pipe_now_ns() - t0;
	/* The next batch goes out before the tensors made run short, so that the threads
	 * opening them do not all stop at its end. */
	if (!mk->off && !mk->sending && mk->next < mk->n && mk->next - i <= mk->batch / 4)
		send_batch(mk);
	pthread_mutex_unlock(&mk->mu);
	if (st < 0)
		return tfs_seterr(st, "%s: %s", mk->spec[i].path, tfs_strerror(-st));
	return st;
}

