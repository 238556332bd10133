/* make LOCK_STATS=1: how long the namespace lock is held and waited for, logged at
 * unmount. Every metadata operation takes the lock, so these two figures say whether it
 * limits a workload (see tests/bench/RESULTS-gpu.md, "What limited creates"): held per
 * operation is its serial cost; waited, summed over threads, is what the others lost. */
#ifdef TFS_LOCK_STATS
#include <errno.h>
#include <inttypes.h>

#include "log.h"
#include "util/clock.h"
#include "tensors/tensors.h"

static struct {
	uint64_t n, held_ns, waited_ns, max_held_ns;
	uint64_t tag_n[TFS_NS_TAGS], tag_held_ns[TFS_NS_TAGS], tag_waited_ns[TFS_NS_TAGS];
} st;
static __thread uint64_t t_got;
__thread unsigned tfs_ns_tag;

static unsigned tag(void)
{
	return tfs_ns_tag < TFS_NS_TAGS ? tfs_ns_tag : TFS_NS_TAGS - 1;
}

void tfs_ns_lock(void)
{
	uint64_t asked = (uint64_t)tfs_mono_ns();

	pthread_mutex_lock(&tfs_tensors.ns);
	t_got = (uint64_t)tfs_mono_ns();
	st.n++;                          /* under the lock */
	st.waited_ns += t_got - asked;
	st.tag_n[tag()]++;
	st.tag_waited_ns[tag()] += t_got - asked;
}

int tfs_ns_trylock(void)
{
	if (pthread_mutex_trylock(&tfs_tensors.ns))
		return EBUSY;
	t_got = (uint64_t)tfs_mono_ns();
	st.n++;
	st.tag_n[tag()]++;
	return 0;
}

void tfs_ns_unlock(void)
{
	uint64_t held = (uint64_t)tfs_mono_ns() - t_got;

	st.held_ns += held;
	st.tag_held_ns[tag()] += held;
	if (held > st.max_held_ns)
		st.max_held_ns = held;
	pthread_mutex_unlock(&tfs_tensors.ns);
}

void tfs_ns_stats_log(void)
{
	pthread_mutex_lock(&tfs_tensors.ns);
	tfs_log(LOG_NOTICE, "namespace lock: %" PRIu64 " acquisitions, held %" PRIu64 " us in "
		"all (mean %.2f us, longest %" PRIu64 " us), waited for %" PRIu64 " us in all "
		"(summed over threads)", st.n, st.held_ns / 1000,
		st.n ? (double)st.held_ns / 1000.0 / (double)st.n : 0.0, st.max_held_ns / 1000,
		st.waited_ns / 1000);
	for (unsigned k = 0; k < TFS_NS_TAGS; k++)
		if (st.tag_n[k])
			tfs_log(LOG_NOTICE, "namespace lock, %s %u%s: %" PRIu64 " acquisitions, "
				"held %.2f us each, waited for %.2f us each",
				k ? "FUSE opcode" : "other", k,
				k == TFS_NS_TAGS - 1 ? " and above" : "", st.tag_n[k],
				(double)st.tag_held_ns[k] / 1000.0 / (double)st.tag_n[k],
				(double)st.tag_waited_ns[k] / 1000.0 / (double)st.tag_n[k]);
	pthread_mutex_unlock(&tfs_tensors.ns);
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int tfs_lockstats_unused;
#endif
