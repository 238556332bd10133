/* Trust between daemons (auth.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "net/auth.h"

static struct {
	uint8_t *key;                /* mlocked, MADV_DONTDUMP; NULL: no key */
	size_t len;
} ak;

int tfs_net_key_load(const char *path)
{
	struct stat st;
	uint8_t *k;
	ssize_t n;
	size_t len = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		rc = -errno;
		tfs_log(LOG_ERR, "--cluster-key %s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		tfs_log(LOG_ERR, "--cluster-key %s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	/* A key others can read is no secret; one others can write is not the cluster's. */
	if ((st.st_mode & (S_IRWXG | S_IRWXO)) || (st.st_uid != 0 && st.st_uid != geteuid())) {
		tfs_log(LOG_ERR, "--cluster-key %s: readable or writable by others than its owner "
			"(mode %03o, owner %u): refused; chmod 600 it", path,
			(unsigned)(st.st_mode & 0777), (unsigned)st.st_uid);
		close(fd);
		return -EPERM;
	}
	k = mmap(NULL, TFS_NET_KEY_MAX + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (k == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	madvise(k, TFS_NET_KEY_MAX + 1, MADV_DONTDUMP);
	mlock(k, TFS_NET_KEY_MAX + 1);
	while (len <= TFS_NET_KEY_MAX && (n = read(fd, k + len, TFS_NET_KEY_MAX + 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (len && k[len - 1] == '\n')
		len--;
	if (len < TFS_NET_KEY_MIN || len > TFS_NET_KEY_MAX) {
		tfs_log(LOG_ERR, "--cluster-key %s: a key is %d to %d bytes", path,
			TFS_NET_KEY_MIN, TFS_NET_KEY_MAX);
		explicit_bzero(k, TFS_NET_KEY_MAX + 1);
		munmap(k, TFS_NET_KEY_MAX + 1);
		return -EINVAL;
	}
	ak.key = k;
	ak.len = len;
	return 0;
}

int tfs_net_key_present(void)
{
	return ak.key != NULL;
}

static void mac3(const char *label, const uint8_t *a, const uint8_t *b, uint8_t *out)
{
	const void *part[3] = { label, a, b };
	size_t len[3] = { strlen(label), TFS_NET_NONCE, TFS_NET_NONCE };

	tfs_hmac_sha256(ak.key, ak.len, part, len, 3, out);
}

void tfs_net_mac_server(const uint8_t *nc, const uint8_t *ns, uint8_t out[TFS_SHA256_LEN])
{
	mac3("tfs-server", nc, ns, out);
}

void tfs_net_mac_client(const uint8_t *nc, const uint8_t *ns, uint8_t out[TFS_SHA256_LEN])
{
	mac3("tfs-client", ns, nc, out);
}

void tfs_net_session_key(const uint8_t *nc, const uint8_t *ns, uint8_t out[TFS_SHA256_LEN])
{
	mac3("tfs-session", nc, ns, out);
}

void tfs_net_mac_request(const uint8_t *sk, const void *a, size_t alen, const void *b,
			 size_t blen, uint8_t out[TFS_SHA256_LEN])
{
	const void *part[2] = { a, b };
	size_t len[2] = { alen, blen };

	tfs_hmac_sha256(sk, TFS_SHA256_LEN, part, len, 2, out);
}

int tfs_net_random(void *buf, size_t n)
{
	return getrandom(buf, n, 0) == (ssize_t)n ? 0 : -EIO;
}
