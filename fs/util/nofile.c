/* The descriptor limit (nofile.h). */
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>

#include "util/clock.h"
#include "util/nofile.h"
#include "log.h"

void tfs_nofile_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static struct {
	pthread_mutex_t mu;
	int64_t last_ns;        /* the last line, 0 before the first */
	unsigned long quiet;    /* refusals since, not logged */
} nf = { .mu = PTHREAD_MUTEX_INITIALIZER };

void tfs_nofile_refused(const char *what)
{
	int64_t now = tfs_mono_ns();
	unsigned long quiet;
	struct rlimit rl;

	pthread_mutex_lock(&nf.mu);
	if (nf.last_ns && now - nf.last_ns < (int64_t)TFS_NOFILE_LOG_S * 1000000000) {
		nf.quiet++;
		pthread_mutex_unlock(&nf.mu);
		return;
	}
	nf.last_ns = now;
	quiet = nf.quiet;
	nf.quiet = 0;
	pthread_mutex_unlock(&nf.mu);
	if (getrlimit(RLIMIT_NOFILE, &rl))
		rl.rlim_cur = 0;
	tfs_log(LOG_WARNING, "out of file descriptors (RLIMIT_NOFILE %llu; each tensor with host "
		"memory holds two in the daemon and one in the keeper): %s answers ENOSPC until "
		"tensors are removed or the limit raised (%lu more refused since the last line)",
		(unsigned long long)rl.rlim_cur, what, quiet);
}
