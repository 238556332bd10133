/* tensorctl top: live figures of a mount. What the daemon alone knows (FUSE requests,
 * reads, writes, queue commands) comes from its counters (user.tensorfs.stats on the root,
 * fs/fuse/stats_xattr.c); tensors, bytes per device and per owner and holders from a walk of the
 * mount, as a client sees them. */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "topstats.h"

#define MAX_GROUPS 64

struct group { long key; uint64_t tensors, bytes; };

struct sample {
	struct top_stats st;
	uint64_t tensors, bytes, holders, total, freeb;
	struct group dev[MAX_GROUPS], own[MAX_GROUPS];
	int ndev, nown;
	int more_groups;             /* groups past MAX_GROUPS, left out */
};

static struct sample *walking;   /* nftw passes no context */

static void add_group(struct group *g, int *n, long key, uint64_t bytes)
{
	int k;

	for (k = 0; k < *n && g[k].key != key; k++)
		;
	if (k == *n) {
		if (*n == MAX_GROUPS) {
			walking->more_groups = 1;
			return;
		}
		g[k] = (struct group){ .key = key };
		(*n)++;
	}
	g[k].tensors++;
	g[k].bytes += bytes;
}

/* One tensor: its metadata through user.tensor.meta. Files that vanish during the walk,
 * or whose metadata cannot be read, are skipped: the figures are a moment's view. */
static int visit(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	struct tfs_meta m;
	char buf[4096];
	ssize_t n;

	(void)ftw;
	if (ctl_interrupted)
		return 1;
	if (type != FTW_F)
		return 0;
	n = getxattr(p, "user.tensor.meta", buf, sizeof(buf) - 1);
	if (n < 0 || tfs_meta_from_json(buf, (size_t)n, &m))
		return 0;
	walking->tensors++;
	walking->bytes += m.bytes;
	if (m.refcount > 1)
		walking->holders += (uint64_t)m.refcount - 1;
	add_group(walking->dev, &walking->ndev, m.device, m.bytes);
	add_group(walking->own, &walking->nown, (long)st->st_uid, m.bytes);
	return 0;
}

static int by_key(const void *a, const void *b)
{
	long x = ((const struct group *)a)->key, y = ((const struct group *)b)->key;

	return x < y ? -1 : x > y;
}

static int take(const char *mnt, struct sample *s)
{
	char buf[4096];
	struct statvfs sv;
	ssize_t n;
	int rc;

	memset(s, 0, sizeof(*s));
	n = getxattr(mnt, "user.tensorfs.stats", buf, sizeof(buf));
	if (n < 0)
		return err(-errno, "%s: the daemon's counters (user.tensorfs.stats): %s%s", mnt,
			   strerror(errno), errno == ENODATA ? " (a daemon older than tensorctl?)" : "");
	if ((rc = top_stats_parse(buf, (size_t)n, &s->st)))
		return err(rc, "%s: user.tensorfs.stats: %s", mnt, strerror(-rc));
	if (statvfs(mnt, &sv))
		return err(-errno, "%s: %s", mnt, strerror(errno));
	s->total = (uint64_t)sv.f_blocks * sv.f_frsize;
	s->freeb = (uint64_t)sv.f_bavail * sv.f_frsize;
	walking = s;
	nftw(mnt, visit, 16, FTW_PHYS | FTW_MOUNT);
	walking = NULL;
	qsort(s->dev, (size_t)s->ndev, sizeof(s->dev[0]), by_key);
	qsort(s->own, (size_t)s->nown, sizeof(s->own[0]), by_key);
	return 0;
}

static const char *user_name(long uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid((uid_t)uid);

	if (pw)
		snprintf(buf, size, "%s", pw->pw_name);
	else
		snprintf(buf, size, "%ld", uid);
	return buf;
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(const char *mnt, const struct sample *s, const double *rates,
		       double interval)
{
	char name[256];

	printf("{\"mount\":");
	json_string(mnt);
	printf(",\"node\":");
	json_string(s->st.node);
	printf(",\"backend\":");
	json_string(s->st.backend);
	printf(",\"pid\":%ld,\"uptime\":%.3f,\"tensors\":%llu,\"bytes\":%llu,\"total\":%llu,"
	       "\"free\":%llu,\"holders\":%llu,\"counters\":{", s->st.pid, s->st.uptime,
	       (unsigned long long)s->tensors, (unsigned long long)s->bytes,
	       (unsigned long long)s->total, (unsigned long long)s->freeb,
	       (unsigned long long)s->holders);
	for (int i = 0; i < TOP_NCOUNTERS; i++)
		printf("%s\"%s\":%llu", i ? "," : "", top_counter_names[i],
		       (unsigned long long)s->st.c[i]);
	printf("},\"interval\":%.3f,\"rates\":", interval);
	if (rates) {
		printf("{");
		for (int i = 0; i < TOP_NCOUNTERS; i++)
			printf("%s\"%s\":%.1f", i ? "," : "", top_counter_names[i], rates[i]);
		printf("}");
	} else {
		printf("null");
	}
	printf(",\"devices\":[");
	for (int k = 0; k < s->ndev; k++) {
		char dev[24];

		if (s->dev[k].key == TFS_DEVICE_CPU)
			snprintf(dev, sizeof(dev), "\"cpu\"");
		else
			snprintf(dev, sizeof(dev), "%ld", s->dev[k].key);
		printf("%s{\"device\":%s,\"tensors\":%llu,\"bytes\":%llu}", k ? "," : "",
		       dev, (unsigned long long)s->dev[k].tensors,
		       (unsigned long long)s->dev[k].bytes);
	}
	printf("],\"owners\":[");
	for (int k = 0; k < s->nown; k++) {
		printf("%s{\"uid\":%ld,\"user\":", k ? "," : "", s->own[k].key);
		json_string(user_name(s->own[k].key, name, sizeof(name)));
		printf(",\"tensors\":%llu,\"bytes\":%llu}", (unsigned long long)s->own[k].tensors,
		       (unsigned long long)s->own[k].bytes);
	}
	printf("],\"truncated\":%s}\n", s->more_groups ? "true" : "false");
}

static void print_screen(const char *mnt, const struct sample *s, const double *rates,
			 int clear)
{
	char a[32], b[32], c[32], d[32], name[256];
	unsigned long up = (unsigned long)s->st.uptime;
	time_t now = time(NULL);
	char clock[16];

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	if (clear)
		fputs("\033[H\033[2J", stdout);
	human_bytes(s->total - s->freeb, a, sizeof(a));
	human_bytes(s->total, b, sizeof(b));
	printf("tensorfs %s   node %s, %s backend, pid %ld, up %luh%02lum%02lus   %s\n", mnt,
	       s->st.node, s->st.backend, s->st.pid, up / 3600, up / 60 % 60, up % 60, clock);
	printf("tensors %llu   used %s of %s   holders %llu (open files and queue holds)\n",
	       (unsigned long long)s->tensors, a, b, (unsigned long long)s->holders);
	if (rates) {
		human_bytes((uint64_t)rates[TOP_READ_BYTES], c, sizeof(c));
		human_bytes((uint64_t)rates[TOP_WRITE_BYTES], d, sizeof(d));
		printf("FUSE    %10.0f requests/s   reads %8.0f/s %10s/s   writes %8.0f/s %10s/s\n",
		       rates[TOP_REQUESTS], rates[TOP_READS], c, rates[TOP_WRITES], d);
		printf("queue   %10.0f commands/s\n", rates[TOP_QUEUE]);
	} else {
		printf("FUSE    %10llu requests      queue %llu commands  (rates from the next second)\n",
		       (unsigned long long)s->st.c[TOP_REQUESTS],
		       (unsigned long long)s->st.c[TOP_QUEUE]);
	}
	printf("\n%-10s %10s %14s\n", "DEVICE", "TENSORS", "BYTES");
	for (int k = 0; k < s->ndev; k++) {
		human_bytes(s->dev[k].bytes, a, sizeof(a));
		if (s->dev[k].key == TFS_DEVICE_CPU)
			printf("%-10s %10llu %14s\n", "cpu", (unsigned long long)s->dev[k].tensors,
			       a);
		else
			printf("%-10ld %10llu %14s\n", s->dev[k].key,
			       (unsigned long long)s->dev[k].tensors, a);
	}
	printf("\n%-10s %10s %14s\n", "OWNER", "TENSORS", "BYTES");
	for (int k = 0; k < s->nown; k++) {
		human_bytes(s->own[k].bytes, a, sizeof(a));
		printf("%-10s %10llu %14s\n", user_name(s->own[k].key, name, sizeof(name)),
		       (unsigned long long)s->own[k].tensors, a);
	}
	if (s->more_groups)
		printf("(more than %d devices or owners: the rest are left out)\n", MAX_GROUPS);
	if (!clear)
		putchar('\n');
	fflush(stdout);
}

/* Sleeps seconds, returning early (1) on a signal. */
static int pause_for(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		if (ctl_interrupted)
			return 1;
	return ctl_interrupted;
}

int cmd_top(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' }, { "interval", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'n' }, { NULL, 0, NULL, 0 } };
	char path[PATH_MAX], mnt[PATH_MAX], *end;
	struct sample *prev, *cur, *tmp;
	double interval = 1, rates[TOP_NCOUNTERS];
	long count = -1;
	int c, json = 0, rc = 0, tty = isatty(1), have_prev = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jd:n:", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'd':
			errno = 0;
			interval = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(interval >= 0 && interval <= 3600))
				return usage_error("--interval '%s': seconds from 0 to 3600", optarg);
			break;
		case 'n':
			errno = 0;
			count = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || count < 1)
				return usage_error("--count '%s': a number of screens >= 1", optarg);
			break;
		default:
			return usage_error("bad option");
		}
	}
	if (optind < argc - 1)
		return usage_error("expected at most one PATH");
	if (optind < argc)
		ctl_path(argv[optind], path, sizeof(path));
	else
		snprintf(path, sizeof(path), "%s", getenv("TENSORFS_MOUNT") ? getenv("TENSORFS_MOUNT") : ".");
	if ((rc = on_tensorfs(path, mnt, sizeof(mnt))))
		return rc;
	prev = calloc(1, sizeof(*prev));
	cur = calloc(1, sizeof(*cur));
	if (!prev || !cur) {
		rc = err(-ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	/* --json: one object for scripts, with rates over --interval (0: counters only). */
	if (json) {
		if ((rc = take(mnt, prev)))
			goto out;
		if (interval > 0) {
			if (pause_for(interval))
				goto out;
			if ((rc = take(mnt, cur)))
				goto out;
			have_prev = top_stats_rates(&prev->st, &cur->st, rates) == 0;
			print_json(mnt, cur, have_prev ? rates : NULL, interval);
		} else {
			print_json(mnt, prev, NULL, 0);
		}
		goto out;
	}
	if (interval == 0)
		interval = 1;
	/* On a terminal: one screen, redrawn each interval until Ctrl-C or --count; else a
	 * block per interval, for a log. */
	for (long shown = 0; count < 0 || shown < count; shown++) {
		if ((rc = take(mnt, cur)))
			goto out;
		have_prev = have_prev && top_stats_rates(&prev->st, &cur->st, rates) == 0;
		print_screen(mnt, cur, have_prev ? rates : NULL, tty);
		tmp = prev;
		prev = cur;
		cur = tmp;
		have_prev = 1;
		if ((count < 0 || shown + 1 < count) && pause_for(interval))
			break;
	}
out:
	free(prev);
	free(cur);
	return rc;
}
