/* The memory keeper's start from the daemon (keeper_start.h). */
#include <errno.h>
#include <string.h>

#include "keeper_start.h"
#include "log.h"
#include "mem/backend.h"
#include "mem/keeper/handover.h"
#include "mem/keeper/keeper.h"
#include "store/conn.h"
#include "store/lease.h"

/* What the keeper is started with: by this daemon now, or by the daemon for a new one when
 * it dies (handover.h), so it lives as long as the daemon. */
static struct tfs_keeper_conf kconf;

/* The keeper memories of this build, for a keeper started by exec. */
static const struct tfs_keeper_mem *const keeper_mems[] = {
	&tfs_keeper_mem_host,
#ifdef TFS_HAVE_CUDA
	&tfs_keeper_mem_cuda,
	&tfs_keeper_mem_vmm,
#endif
	NULL
};

int tfs_start_keeper(char *argv[], const struct tfs_keeper_start *ks, int restart)
{
	kconf.mem = &tfs_keeper_mem_host;
#ifdef TFS_HAVE_CUDA
	if (strcmp(tfs_mem.ops->name, "cuda") == 0)
		kconf.mem = tfs_mem.vmm ? &tfs_keeper_mem_vmm : &tfs_keeper_mem_cuda;
#endif
	kconf.argv = argv;
	kconf.mountpoint = ks->mountpoint;
	kconf.rundir = tfs_redis.rundir;
	kconf.close_fd = ks->fuse_fd;
	kconf.notify_fd = ks->notify_fd;
	kconf.delay_max_ms = (unsigned)ks->restart_delay_max * 1000;
	kconf.detach_stdio = !ks->foreground;
	kconf.stderr_is_log = ks->log_to_file;
	kconf.lease = tfs_lease_token();
	kconf.secret = tfs_redis.url.password;
	kconf.syslog = !ks->foreground && !ks->log_to_file;
	tfs_keeper_set_conf(&kconf);
	if (!restart && tfs_keeper_fork(&kconf)) {
		tfs_log(LOG_ERR, "cannot start the memory keeper: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void tfs_keeper_exec_main(char **argv)
{
	tfs_handover_keeper_main(argv, keeper_mems);
}
