/* What Redis lost, written back from what this node knows (restore.c, mirror.h). */
#ifndef TFS_RESTORE_H
#define TFS_RESTORE_H


/* After Redis came back: when the root's record is missing (or a lookup found it missing
 * since the last call), every directory the mirror knows that Redis lacks is written back
 * with its record, user attributes and entry in its parent, parents first; each in one
 * script that leaves an existing record alone. 0, -EIO (retried at the next call), -ENOMEM. */
int tfs_store_restore_dirs(void);
/* Redis may have lost any of the records this node wrote (a failover to a replica that
 * lagged): the next tfs_store_restore_dirs writes back every directory the mirror knows
 * that Redis lacks, as after a loss of the root's record. */
void tfs_store_restore_all(void);
/* Whether Redis lost the root's record (missing now, or found missing by a lookup since
 * the last tfs_store_restore_dirs): 1, 0, -EIO. A round trip. */
int tfs_store_lost(void);
/* A lookup found the root's record missing: written back (the mirror's, else the
 * defaults), and the next tfs_store_restore_dirs restores every directory the mirror
 * knows. 0 or -EIO. */
int tfs_store_restore_root(void);
/* The directories above name that Redis lacks, written back (the mirror's records, else
 * tfs_store_dir_default's): 0, -EIO, -ENOMEM, -ENAMETOOLONG. */
int tfs_store_restore_parents(const char *name);
/* The user attributes the mirror knows for record key, queued for the writer: 0, -ENOMEM. */
int tfs_store_restore_attrs(const char *key);

#endif
