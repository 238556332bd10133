/* Tier lists and per-tier sizes (tiers.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

#include "mem/tiers.h"
#include "strutil.h"
#include "tier.h"

/* Splits at ',' (and at sep2 when not 0): calls one() for each entry. */
static int each(const char *text, char sep2, int (*one)(const char *, size_t, void *),
		void *arg)
{
	const char *p = text;
	int rc;

	if (!p || !*p)
		return -EINVAL;
	for (;;) {
		size_t n = strcspn(p, sep2 == ':' ? ",:" : sep2 == '/' ? ",/" : ",");

		if (n == 0 || (rc = one(p, n, arg)))
			return -EINVAL;
		if (p[n] == '\0')
			return 0;
		p += n + 1;
	}
}

struct list { uint64_t mask; int cpu; };

static int list_one(const char *s, size_t n, void *arg)
{
	struct list *l = arg;
	int dev;

	if (tfs_tier_parse(s, n, &dev) || (dev != TFS_DEVICE_CPU && n > 2))
		return -EINVAL;
	if (dev == TFS_DEVICE_CPU) {
		if (l->cpu)
			return -EINVAL;
		l->cpu = 1;
		return 0;
	}
	if (dev >= TFS_DEVICES_MAX || (l->mask >> dev & 1))
		return -EINVAL;
	l->mask |= 1ull << dev;
	return 0;
}

int tfs_tiers_parse_list(const char *text, uint64_t *mask, int *cpu)
{
	struct list l = { 0, 0 };

	if (each(text, ':', list_one, &l))
		return -EINVAL;
	*mask = l.mask;
	*cpu = l.cpu;
	return 0;
}

int tfs_tiers_parse_size(const char *s, size_t n, uint64_t *out)
{
	unsigned shift = 0;
	uint64_t v;

	if (n && strchr("kKmMgGtT", s[n - 1])) {
		shift = strchr("kK", s[n - 1]) ? 10 : strchr("mM", s[n - 1]) ? 20 :
			strchr("gG", s[n - 1]) ? 30 : 40;
		n--;
	}
	if (n == 0 || tfs_parse_u64(s, n, &v) || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

static int size_one(const char *s, size_t n, void *arg)
{
	struct tfs_tier_sizes *t = arg;
	const char *colon = memchr(s, ':', n);
	uint64_t v;
	int dev;

	if (!colon || tfs_tier_parse(s, (size_t)(colon - s), &dev) ||
	    tfs_tiers_parse_size(colon + 1, n - (size_t)(colon - s) - 1, &v))
		return -EINVAL;
	if (dev == TFS_DEVICE_CPU) {
		if (t->has_cpu)
			return -EINVAL;
		t->has_cpu = 1;
		t->cpu = v;
		return 0;
	}
	if (dev >= TFS_DEVICES_MAX || (t->devmask >> dev & 1))
		return -EINVAL;
	t->devmask |= 1ull << dev;
	t->dev[dev] = v;
	return 0;
}

int tfs_tiers_parse_sizes(const char *text, struct tfs_tier_sizes *out)
{
	struct tfs_tier_sizes t;

	memset(&t, 0, sizeof(t));
	if (!text || !*text)
		return -EINVAL;
	if (!strchr(text, ':')) {
		if (tfs_tiers_parse_size(text, strlen(text), &t.all))
			return -EINVAL;
	} else if (each(text, '/', size_one, &t)) {
		return -EINVAL;
	}
	*out = t;
	return 0;
}

uint64_t tfs_tier_size(const struct tfs_tier_sizes *s, int device)
{
	if (device == TFS_DEVICE_CPU)
		return s->has_cpu ? s->cpu : s->all;
	if (device >= 0 && device < TFS_DEVICES_MAX && (s->devmask >> device & 1))
		return s->dev[device];
	return s->all;
}

const char *tfs_tiers_check_prealloc(const struct tfs_tier_sizes *pre,
				     const struct tfs_tier_sizes *caps, int cpu_served)
{
	if (pre->has_cpu && !cpu_served)
		return "cpu: this mount serves no host tier";
	for (int dev = TFS_DEVICE_CPU; dev < TFS_DEVICES_MAX; dev++) {
		uint64_t cap;

		if (dev == TFS_DEVICE_CPU ? !pre->has_cpu : dev < 0 || !(pre->devmask >> dev & 1))
			continue;
		cap = tfs_tier_size(caps, dev);
		if (cap && tfs_tier_size(pre, dev) > cap)
			return "more than --max-bytes for a tier";
	}
	return NULL;
}

/* A field of /proc/meminfo in bytes, 0 when it cannot tell. */
static uint64_t meminfo(const char *field)
{
	char line[128], fmt[48];
	unsigned long long kb;
	FILE *f = fopen("/proc/meminfo", "re");
	uint64_t v = 0;

	if (!f)
		return 0;
	snprintf(fmt, sizeof(fmt), "%s: %%llu kB", field);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &kb) == 1) {
			v = (uint64_t)kb << 10;
			break;
		}
	fclose(f);
	return v;
}

uint64_t tfs_tier_host_available(void)
{
	uint64_t v = meminfo("MemAvailable");

	return v ? v : UINT64_MAX;
}

uint64_t tfs_tier_host_bound(uint64_t total)
{
	uint64_t mem = meminfo("MemTotal");

	if (mem && total > mem) {
		tfs_log(LOG_NOTICE, "the host tier's cap is the machine's memory, %llu MiB",
			(unsigned long long)(mem >> 20));
		return mem;
	}
	return total;
}
