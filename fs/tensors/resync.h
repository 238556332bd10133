/* This node's records written again from its tensors (resync.c): after Redis came back
 * or lost them, and after writes the writer dropped. */
#ifndef TFS_RESYNC_H
#define TFS_RESYNC_H

#include "tensors/tensor.h"

/* Rewrites every local record (after Redis came back), with the directories Redis lost
 * first. Called WITHOUT ns: it takes ns per chunk of tensors and lets it go while the
 * chunk's claims are answered, so metadata operations run between chunks. Tensors made
 * after it started are not its business (their own writes make their records); one freed
 * meanwhile is skipped; one renamed or unlinked is written under its key of then. One
 * resync at a time (the queue thread's, or start-up's before the request loop; another
 * one meanwhile gets -EBUSY). 0, -EIO (the next one retries), -ENOMEM. */
int tfs_tensor_resync(void);
/* Removes this node's records (and their names) that no tensor of the table has: after
 * the writes that would have removed them were dropped (writer.h). Called WITHOUT ns (it
 * takes ns per record, for the look-up). A tensor made meanwhile under a removed key
 * loses its record too: run tfs_tensor_resync after it, which writes it back. 0 or -EIO. */
int tfs_tensor_purge_stale(void);
/* t is being freed (under ns): a resync under way skips it. */
void tfs_tensor_resync_forget(struct tfsd_tensor *t);

#endif
