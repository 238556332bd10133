/* A one-line progress bar on stderr: bytes, rate, ETA; silent when stderr is not a
 * terminal. Redraws at most ten times a second. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

struct progress {
	const char *label;
	uint64_t total, done;
	double start, last;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void draw(struct progress *p, double t)
{
	char d[32], tot[32], rate[32];
	double el = t - p->start, r = el > 0 ? (double)p->done / el : 0;
	int pct = p->total ? (int)(100.0 * (double)p->done / (double)p->total) : 100;
	long eta = r > 0 ? (long)((double)(p->total - p->done) / r) : 0;
	int fill = pct / 5;

	human_bytes(p->done, d, sizeof(d));
	human_bytes(p->total, tot, sizeof(tot));
	human_bytes((uint64_t)r, rate, sizeof(rate));
	fprintf(stderr, "\r%-16.16s [%.*s%*s] %3d%% %10s / %-10s %10s/s ETA %ld:%02ld ",
		p->label, fill, "####################", 20 - fill, "", pct, d, tot, rate,
		eta / 60, eta % 60);
	p->last = t;
}

struct progress *progress_start(const char *label, uint64_t total, int quiet)
{
	struct progress *p;

	if (quiet || !isatty(STDERR_FILENO) || total < (16u << 20))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->label = label;
	p->total = total;
	p->start = p->last = now();
	return p;
}

void progress_add(struct progress *p, uint64_t n)
{
	double t;

	if (!p)
		return;
	p->done += n;
	t = now();
	if (t - p->last >= 0.1)
		draw(p, t);
}

void progress_end(struct progress *p)
{
	if (!p)
		return;
	draw(p, now());
	fputc('\n', stderr);
	free(p);
}
