/* The host backend's handle: TFS_HOST_MAGIC, then the NUL-terminated path of a
 * shared-memory object relative to /dev/shm, zero-padded to TFS_IPC_HANDLE_SIZE bytes:
 *
 *     /tensorfs.<keeper pid>.<8 hex>/<24 hex>
 *
 * The directory is the memory keeper's (mode 0711: others may open what they can name but
 * not list it) and the object's name carries 96 random bits, so the name is the
 * capability: only getxattr through the mount, the queue or Redis gives it (docs/handles.md).
 * Shared by the daemon, which makes these names, and the client, which opens
 * them. No I/O. */
#ifndef TFS_HOST_HANDLE_H
#define TFS_HOST_HANDLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tensorfs.h"      /* TFS_IPC_HANDLE_SIZE */

#define TFS_HOST_SHM_ROOT "/dev/shm"
#define TFS_HOST_DIR_PREFIX "tensorfs."
#define TFS_HOST_DIR_HEX 8       /* the directory's random part: keeps another user from
				  * taking the name first */
#define TFS_HOST_OBJ_HEX 24      /* the object's: 96 bits nobody can guess */
/* The longest path: "/tensorfs." + 10 digits + "." + 8 + "/" + 24, and a NUL. */
#define TFS_HOST_PATH_MAX 56

/* Copies the object's path out of a host handle (magic included) into path (size bytes,
 * at least TFS_HOST_PATH_MAX) when it has exactly the form above: the magic, a path of
 * that grammar (no "..", no extra or doubled slash, lower-case hex), a NUL within the 64
 * bytes. 0, or -EBADMSG with path untouched. */
int tfs_host_handle_path(const uint8_t handle[TFS_IPC_HANDLE_SIZE], char *path, size_t size);

/* The keeper pid a directory entry of /dev/shm names when it is "tensorfs.<pid>.<anything>"
 * (the directories above and the single objects of older daemons), else 0. */
pid_t tfs_host_entry_pid(const char *name);

#endif
