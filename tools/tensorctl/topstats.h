/* The daemon's counters as tensorctl top reads them: the JSON of the mount root's
 * user.tensorfs.stats attribute (fs/fuse/stats_xattr.c), and rates between two readings. Pure
 * functions, no I/O: tests/unit/test_topstats.c. */
#ifndef TENSORCTL_TOPSTATS_H
#define TENSORCTL_TOPSTATS_H

#include <stddef.h>
#include <stdint.h>

enum { TOP_REQUESTS, TOP_READS, TOP_READ_BYTES, TOP_WRITES, TOP_WRITE_BYTES, TOP_QUEUE,
       TOP_NCOUNTERS };

/* The JSON names of the counters, in the order above. */
extern const char *const top_counter_names[TOP_NCOUNTERS];

struct top_stats {
	long pid;                       /* the daemon's */
	char node[256];
	char backend[32];
	double uptime;                  /* seconds since it started serving (its clock) */
	uint64_t c[TOP_NCOUNTERS];
};

/* Parses the attribute's value (len bytes, no NUL needed). 0, or -EBADMSG when it is not
 * an object of version >= 1 with pid, uptime and every counter as a non-negative integer
 * (fields it does not know are ignored: a newer daemon may add some); -ENOMEM. */
int top_stats_parse(const char *json, size_t len, struct top_stats *out);

/* Per-second rates from reading a to the later reading b, timed by the daemon's uptime.
 * 0, or -ESTALE when they are not of one daemon run (another pid, a counter or the uptime
 * that went back: the daemon restarted), -EINVAL when no time passed. */
int top_stats_rates(const struct top_stats *a, const struct top_stats *b,
		    double rates[TOP_NCOUNTERS]);

#endif
