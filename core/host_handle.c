/* Parsing the host backend's handle and /dev/shm names (host_handle.h). */
#include <errno.h>
#include <string.h>

#include "host_handle.h"
#include "meta.h"          /* TFS_HOST_MAGIC */

/* n lower-case hex digits at s; the number read. */
static size_t hex_run(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
		i++;
	return i;
}

/* Decimal digits at s without a leading zero, at most 10; the number read (0: none). */
static size_t pid_run(const char *s)
{
	size_t i = 0;

	if (s[0] < '1' || s[0] > '9')
		return 0;
	while (i < 11 && s[i] >= '0' && s[i] <= '9')
		i++;
	return i > 10 ? 0 : i;
}

int tfs_host_handle_path(const uint8_t handle[TFS_IPC_HANDLE_SIZE], char *path, size_t size)
{
	const char *s = (const char *)handle + 8;
	size_t n = strnlen(s, TFS_IPC_HANDLE_SIZE - 8), at, plen = sizeof(TFS_HOST_DIR_PREFIX) - 1;

	if (memcmp(handle, TFS_HOST_MAGIC, 8) || n == TFS_IPC_HANDLE_SIZE - 8 || n >= size)
		return -EBADMSG;
	if (s[0] != '/' || strncmp(s + 1, TFS_HOST_DIR_PREFIX, plen))
		return -EBADMSG;
	at = 1 + plen;
	if (!(n = pid_run(s + at)))
		return -EBADMSG;
	at += n;
	if (s[at++] != '.' || hex_run(s + at, TFS_HOST_DIR_HEX) != TFS_HOST_DIR_HEX)
		return -EBADMSG;
	at += TFS_HOST_DIR_HEX;
	if (s[at++] != '/' || hex_run(s + at, TFS_HOST_OBJ_HEX) != TFS_HOST_OBJ_HEX)
		return -EBADMSG;
	at += TFS_HOST_OBJ_HEX;
	if (s[at] != '\0')
		return -EBADMSG;
	memcpy(path, s, at + 1);
	return 0;
}

pid_t tfs_host_entry_pid(const char *name)
{
	size_t plen = sizeof(TFS_HOST_DIR_PREFIX) - 1, n;
	long pid = 0;

	if (strncmp(name, TFS_HOST_DIR_PREFIX, plen) || !(n = pid_run(name + plen)) ||
	    name[plen + n] != '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		pid = pid * 10 + (name[plen + i] - '0');
	return pid > 0 && pid <= 0x7fffffff ? (pid_t)pid : 0;
}
