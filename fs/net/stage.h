/* Answers staged through host memory on threads of their own (stage.c), so that the
 * network thread goes on sending while the next answer is copied out of device memory:
 * the copy of one request overlaps the sends of the others (serve.c). Generic: an item
 * is work(arg) run on a staging thread, then handed back to the network thread of its
 * lane (the one that put it, which alone sends on its worker). */
#ifndef TFS_NET_STAGE_H
#define TFS_NET_STAGE_H

#include <stdint.h>

#include "net/peer_rec.h"

#define TFS_NET_STAGE_LANES TFS_NET_ADDRS_MAX

struct tfs_net_stage {
	struct tfs_net_stage *next;
	void *arg;
	int lane;                    /* whose: 0 to TFS_NET_STAGE_LANES - 1 */
	int64_t result;              /* work's */
};

/* Starts the staging threads: each item runs work(item->arg) there, then joins its lane's
 * done list and wake(lane) is called (that network thread's eventfd). 0 or -errno. */
int tfs_net_stage_start(int64_t (*work)(void *arg), void (*wake)(int lane));
/* Stops them, once the item at work is done; items never started or never taken are
 * handed to drop(item). */
void tfs_net_stage_stop(void (*drop)(struct tfs_net_stage *));
/* Queues it: 0, or -EAGAIN when not started, -EINVAL for a lane out of range. Any
 * thread. */
int tfs_net_stage_put(struct tfs_net_stage *it);
/* lane's items done, oldest first, taken off its list (NULL: none). Any thread. */
struct tfs_net_stage *tfs_net_stage_take(int lane);

#endif
