/* systemd's readiness protocol (notify.c), for a unit of Type=notify: one datagram to
 * $NOTIFY_SOCKET, no libsystemd. */
#ifndef TFS_NOTIFY_H
#define TFS_NOTIFY_H

/* Tells the service manager that the mount answers: "READY=1" and this process as the
 * unit's main PID (the daemon forks into the background, so the process systemd started
 * is gone by then; the unit sets NotifyAccess=all). The environment is left alone: other
 * threads run by then, and unsetenv is not thread-safe.
 * 0 when sent or when no manager asked ($NOTIFY_SOCKET unset), else a negative errno
 * (the caller logs it; the service manager then times the start out). */
int tfs_notify_ready(void);

#endif
