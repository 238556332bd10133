/* Unit tests of the host handle's grammar (core/host_handle.h) on raw bytes: the one form
 * the keeper makes is accepted, everything else is refused before any file is opened. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "host_handle.h"
#include "meta.h"

static int fails;

#define CHECK(cond, ...)                                           \
	do {                                                       \
		int ok_ = !!(cond);                                \
		printf(ok_ ? "ok - " : "not ok - ");               \
		printf(__VA_ARGS__);                               \
		printf("\n");                                      \
		fails += !ok_;                                     \
	} while (0)

#define GOOD "/tensorfs.4242.0badf00d/0123456789abcdef01234567"

/* A handle of the magic, then len bytes of s, then zeros. */
static void make(uint8_t h[TFS_IPC_HANDLE_SIZE], const char *s, size_t len)
{
	memset(h, 0, TFS_IPC_HANDLE_SIZE);
	memcpy(h, TFS_HOST_MAGIC, 8);
	memcpy(h + 8, s, len);
}

/* Is the path s refused? The output buffer must stay as it was. */
static int refused(const char *s)
{
	uint8_t h[TFS_IPC_HANDLE_SIZE];
	char out[TFS_HOST_PATH_MAX] = "untouched";

	make(h, s, strlen(s));
	return tfs_host_handle_path(h, out, sizeof(out)) == -EBADMSG && !strcmp(out, "untouched");
}

int main(void)
{
	static const char *bad[] = {
		"",
		"/",
		"tensorfs.4242.0badf00d/0123456789abcdef01234567",       /* no leading slash */
		"//tensorfs.4242.0badf00d/0123456789abcdef01234567",     /* doubled slash */
		"/tensorfs.4242.0badf00d//0123456789abcdef01234567",
		"/tensorfs.4242.0badf00d/0123456789abcdef01234567/",     /* trailing slash */
		"/tensorfs.4242.0badf00d/../../etc/passwd",
		"/tensorfs.4242.0badf00d/..",
		"/../tensorfs.4242.0badf00d/0123456789abcdef01234567",
		"/tensorfs.4242.0badf00d/0123456789abcdef0123456",       /* 23 hex */
		"/tensorfs.4242.0badf00d/0123456789abcdef012345678",     /* 25 hex */
		"/tensorfs.4242.0badf00d/0123456789ABCDEF01234567",      /* upper case */
		"/tensorfs.4242.0badf0/0123456789abcdef01234567",        /* short directory part */
		"/tensorfs.4242/0123456789abcdef01234567",               /* no directory part */
		"/tensorfs..0badf00d/0123456789abcdef01234567",          /* no pid */
		"/tensorfs.0.0badf00d/0123456789abcdef01234567",         /* pid 0 */
		"/tensorfs.04242.0badf00d/0123456789abcdef01234567",     /* leading zero */
		"/tensorfs.-1.0badf00d/0123456789abcdef01234567",
		"/tensorfs.12345678901.0badf00d/0123456789abcdef01234567",
		"/tensorfsX4242.0badf00d/0123456789abcdef01234567",
		"/other.4242.0badf00d/0123456789abcdef01234567",         /* outside the prefix */
		"/tensorfs.4242.0badf00d",                               /* the directory itself */
		"/tensorfs.4242.1.0badf00d0123",                          /* an older daemon's name */
	};
	uint8_t h[TFS_IPC_HANDLE_SIZE];
	char out[TFS_HOST_PATH_MAX];

	make(h, GOOD, sizeof(GOOD));
	CHECK(tfs_host_handle_path(h, out, sizeof(out)) == 0 && !strcmp(out, GOOD),
	      "the keeper's form is accepted and copied");
	make(h, "/tensorfs.4294967295.ffffffff/ffffffffffffffffffffffff", 54);
	CHECK(tfs_host_handle_path(h, out, sizeof(out)) == 0, "the longest form fits");
	CHECK(tfs_host_handle_path(h, out, 20) == -EBADMSG, "a too small buffer: -EBADMSG");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(refused(bad[i]), "refused: \"%s\"", bad[i]);
	make(h, GOOD, sizeof(GOOD));
	memcpy(h, "TFSHOST2", 8);
	CHECK(tfs_host_handle_path(h, out, sizeof(out)) == -EBADMSG, "another magic: refused");
	memset(h + 8, 'a', TFS_IPC_HANDLE_SIZE - 8);
	memcpy(h, TFS_HOST_MAGIC, 8);
	CHECK(tfs_host_handle_path(h, out, sizeof(out)) == -EBADMSG, "no NUL: refused");
	make(h, GOOD, sizeof(GOOD));
	h[8 + 20] = '\0';
	CHECK(tfs_host_handle_path(h, out, sizeof(out)) == -EBADMSG, "a NUL inside: refused");
	make(h, GOOD, sizeof(GOOD));
	h[8 + 30] = '\n';
	CHECK(tfs_host_handle_path(h, out, sizeof(out)) == -EBADMSG, "a newline inside: refused");

	CHECK(tfs_host_entry_pid("tensorfs.4242.0badf00d") == 4242, "a directory's pid");
	CHECK(tfs_host_entry_pid("tensorfs.4242.1") == 4242, "an older daemon's object's pid");
	CHECK(tfs_host_entry_pid("tensorfs.4242") == 0, "no dot after the pid: not ours");
	CHECK(tfs_host_entry_pid("tensorfs.x.1") == 0 && tfs_host_entry_pid("tensorfs.0.1") == 0 &&
	      tfs_host_entry_pid("tensorfs.99999999999.1") == 0 &&
	      tfs_host_entry_pid("other.4242.1") == 0, "other names: not ours");
	return fails ? 1 : 0;
}
