/* The lifecycle queue worker (queue.c): one thread */
#ifndef TFS_QUEUE_H
#define TFS_QUEUE_H


/* Starts the thread (0 or a negative errno); stop joins it. */
int tfs_queue_start(void);
void tfs_queue_stop(void);

#endif
