/* Start-up from an earlier run's records and the keeper's memory (adopt.c). */
#ifndef TFS_FS_ADOPT_H
#define TFS_FS_ADOPT_H

/* Rebuilds the tensor table from this node's Redis records and the memory the backend's
 * keeper holds, removes records without memory, frees memory without a record, and
 * rewrites every record kept (reference counts recomputed) and the root's. Runs before the
 * request loop starts, after the backend started; takes ns itself (the caller holds
 * none): the rewrite is tfs_tensor_resync's. 0; -EIO (a Redis failure), -ENOMEM, or the
 * backend's adopt error other than -ENOENT/-EINVAL: what was adopted stays in the table
 * and, when the record walk did not end, nothing is freed (the backend's adopt_end is not
 * called: memory no record took yet may belong to a record not read). fresh: the keeper
 * is new (a first start): no memory to adopt, every record of the node goes. */
int tfs_adopt(int fresh);

#endif
