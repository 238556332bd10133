/* sd_notify(3) in a few lines: the protocol is one datagram on a unix socket whose path
 * (or abstract name, when it starts with '@') is in $NOTIFY_SOCKET. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "mem/keeper/keeper.h"
#include "notify.h"

int tfs_notify_ready(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[64];
	size_t len;
	int fd, n, rc = 0;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path)) {
		rc = -EAFNOSUPPORT;     /* vsock and other forms: not for a local filesystem */
		goto out;
	}
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	/* The keeper is the service's main process: it outlives a crash of this one. */
	n = snprintf(msg, sizeof(msg), "READY=1\nMAINPID=%ld\n", (long)tfs_keeper_pid());
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	if (sendto(fd, msg, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		rc = -errno;
	close(fd);
out:
	return rc;
}
