/* The handle socket (docs/holders.md, "Handles as capabilities"): a Unix socket on which a
 * process asks for the descriptor of a tensor's memory by the tensor's path in the mount
 * and the access it wants (core/fd_request.h). The daemon checks, with the credentials the
 * kernel took at connect (SO_PEERCRED, SO_PEERGROUPS), that the process may have that
 * access through the mount: it resolves the path through the mount with its own thread's
 * file-system identity set to the peer's (fsuid, fsgid, groups), so the kernel applies the
 * mount's default_permissions exactly as to the peer; a mount without allow_other serves
 * only its own user and the users --user-queues gives a queue (queue/users.h). It
 * answers with a descriptor (SCM_RIGHTS): read-only for "r", read and write for "w"; EACCES when the access is refused, ENOENT for a name this node does not
 * hold, ENOTSUP for memory that has no descriptor (cuda legacy IPC), ENFILE when the daemon
 * is out of descriptors (its RLIMIT_NOFILE).
 *
 * One thread serves it with poll: at most HANDLES_CONN_MAX connections, each closed after
 * HANDLES_IDLE_MS without a complete request, so that a slow or hostile client holds a
 * slot for a while and nothing else. The socket is mode 0666. */
#ifndef TFS_FS_HANDLES_SERVER_H
#define TFS_FS_HANDLES_SERVER_H

#define HANDLES_CONN_MAX 64
#define HANDLES_IDLE_MS 5000
/* Out of descriptors with no spare to refuse a connection with: the loop's pause. */
#define HANDLES_NOFILE_WAIT_MS 100

/* Starts serving on path (NULL: the default, tfs_handles_default_path) for the mount at
 * mountpoint. 0, or -errno (logged; the daemon serves without it). */
int tfs_handles_start(const char *path, const char *mountpoint, int allow_other);
/* Stops the thread and removes the socket. Nothing when it did not start. */
void tfs_handles_stop(void);
/* The socket's path (user.tensor.handle_socket), NULL when none is served. */
const char *tfs_handles_path(void);
/* The default path for mountpoint into buf: /run/tensorfs/handles.<16 hex>.sock for root,
 * $XDG_RUNTIME_DIR/tensorfs/... (else /tmp/tensorfs-<uid>/...) for another user; the hex
 * a hash of the mount point, so a restarted daemon serves the same path. 0 or -ENAMETOOLONG. */
int tfs_handles_default_path(const char *mountpoint, char *buf, size_t size);

#endif
