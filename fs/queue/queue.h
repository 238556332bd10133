/* The lifecycle queue worker (queue.c): one thread */
#ifndef TFS_QUEUE_H
#define TFS_QUEUE_H


#include <stdint.h>

/* The queue's bounds, set by main at start-up (-o queue_max_command, queue_max_batch,
 * queue_max_forward; docs/pending/queue.md). */
struct tfs_queue_opts {
	uint64_t max_cmd;            /* a larger command is answered EMSGSIZE, unparsed */
	uint64_t max_batch;          /* bytes taken from the queue in one round trip */
	long max_forward;            /* commands waiting on a node's list: then EAGAIN */
	/* The handle socket's path once it serves (main sets it, __atomic, after the queue
	 * started), NULL before or without: a VMM tensor's reply names it, since its handle
	 * grants nothing (docs/vmm.md). Static storage. */
	const char *hsock;
};
extern struct tfs_queue_opts tfs_queue;

/* Starts the thread (0 or a negative errno); stop joins it. */
int tfs_queue_start(void);
void tfs_queue_stop(void);

#endif
