/* The descriptor limit (RLIMIT_NOFILE): each tensor with host memory holds descriptors of
 * its shared-memory object in the daemon (two: its own and the keeper's second holder,
 * mem/keeper/handover.h) and in the keeper (one), so the limit bounds how many such
 * tensors a node serves. Any thread, no locks of ours. */
#ifndef TFS_NOFILE_H
#define TFS_NOFILE_H

/* The fewest seconds between two lines of tfs_nofile_refused. */
#define TFS_NOFILE_LOG_S 60

/* Raises this process's soft limit to its hard one (the default soft limit, 1024, would
 * bound a node to a few hundred tensors). Called first in main(): the keeper, the daemon
 * it forks and runs again, and a keeper started by exec all pass there. Failure changes
 * nothing and is not reported: the refusals name the limit in force. */
void tfs_nofile_raise(void);

/* Says, at most once every TFS_NOFILE_LOG_S seconds (the refusals in between are counted
 * in the next line), that new memory was refused for want of descriptors, naming the
 * limit. what: the operation refused ("a new tensor's memory"). */
void tfs_nofile_refused(const char *what);

#endif
