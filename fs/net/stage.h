/* Answers staged through host memory on threads of their own (stage.c), so that the
 * network thread goes on sending while the next answer is copied out of device memory:
 * the copy of one request overlaps the sends of the others (serve.c). Generic: an item
 * is work(arg) run on a staging thread, then handed back to the network thread. */
#ifndef TFS_NET_STAGE_H
#define TFS_NET_STAGE_H

#include <stdint.h>

struct tfs_net_stage {
	struct tfs_net_stage *next;
	void *arg;
	int64_t result;              /* work's */
};

/* Starts the staging threads: each item runs work(item->arg) there, then joins the done
 * list and wake() is called (the network thread's eventfd). 0 or -errno. */
int tfs_net_stage_start(int64_t (*work)(void *arg), void (*wake)(void));
/* Stops them, once the item at work is done; items never started or never taken are
 * handed to drop(item). */
void tfs_net_stage_stop(void (*drop)(struct tfs_net_stage *));
/* Queues it: 0, or -EAGAIN when not started. Any thread. */
int tfs_net_stage_put(struct tfs_net_stage *it);
/* The items done, oldest first, taken off the list (NULL: none). Any thread. */
struct tfs_net_stage *tfs_net_stage_take(void);

#endif
