/* One message with at most one file descriptor (SCM_RIGHTS; or a few: tfs_send_fds) over a unix socket: the
 * keeper's replies and the REDIS notice (fs/mem/keeper/), the handover to a new keeper
 * (handover.c), and the handle socket (fs/handles/server.c, lib/handle_socket.c). Shared
 * by the daemon and the client library. Thread-safe: no state.
 *
 * A descriptor the receiver cannot take (its RLIMIT_NOFILE reached) is dropped by the
 * kernel, which flags the message MSG_CTRUNC: tfs_recv_fd reports it as TFS_FD_LOST, so a
 * protocol whose reply names a new resource can give that resource back rather than
 * treat the reply as nonsense. */
#ifndef TFS_FD_PASS_H
#define TFS_FD_PASS_H

#include <stddef.h>
#include <sys/types.h>

/* *fd after tfs_recv_fd when a descriptor came but this process could not take it. */
#define TFS_FD_LOST (-2)

/* Sends len bytes of buf as one message on sock, with fd (when fd >= 0) as SCM_RIGHTS; fd
 * stays the caller's. flags are sendmsg's (e.g. MSG_DONTWAIT); MSG_NOSIGNAL is always
 * added, so a peer that went answers -EPIPE, not SIGPIPE. Tried again on EINTR.
 * 0; -EIO when only part went (a stream socket); or -errno (-EAGAIN under MSG_DONTWAIT
 * when the socket is full). */
int tfs_send_fd(int sock, const void *buf, size_t len, int fd, int flags);

/* Receives one message of at most len bytes into buf, and the first descriptor that came
 * with it as *fd (close-on-exec, the caller's to close), -1 when none came, or TFS_FD_LOST
 * when one came that this process could not take. Further descriptors are closed.
 * flags are recvmsg's (e.g. MSG_DONTWAIT). Tried again on EINTR.
 * Returns the message's size (on a stream socket: what was there, up to len), 0 at the end
 * (the peer closed), -EMSGSIZE when a message of a datagram or seqpacket socket was longer
 * than len (its rest is gone, and with it any descriptor: *fd is -1), or -errno (*fd -1). */
ssize_t tfs_recv_fd(int sock, void *buf, size_t len, int flags, int *fd);

/* The most descriptors one message of tfs_send_fds / tfs_recv_fds carries. */
#define TFS_FD_PASS_MAX 16

/* tfs_send_fd with n descriptors (0 to TFS_FD_PASS_MAX, -EINVAL beyond) in one
 * SCM_RIGHTS message: the handle socket's reply of a memory in several pieces. */
int tfs_send_fds(int sock, const void *buf, size_t len, const int *fds, int n, int flags);

/* tfs_recv_fd for up to max (at most TFS_FD_PASS_MAX) descriptors: fds[0..*n) in the
 * order they were sent (the caller's), further ones closed; *n is TFS_FD_LOST (and none
 * kept) when the kernel could not give them all (this process's RLIMIT_NOFILE). Returns
 * as tfs_recv_fd does; *n is 0 on an error. */
ssize_t tfs_recv_fds(int sock, void *buf, size_t len, int flags, int *fds, int max, int *n);

#endif
