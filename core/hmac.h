/* SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for the challenge between daemons that
 * share a cluster key (fs/net/auth.c). Pure computation: no I/O, no allocation, no state
 * outside the caller's context; thread-safe. */
#ifndef TFS_HMAC_H
#define TFS_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define TFS_SHA256_LEN 32

struct tfs_sha256 {
	uint32_t h[8];
	uint64_t bytes;              /* hashed so far */
	uint8_t buf[64];
	size_t fill;
};

void tfs_sha256_init(struct tfs_sha256 *s);
void tfs_sha256_update(struct tfs_sha256 *s, const void *data, size_t n);
void tfs_sha256_final(struct tfs_sha256 *s, uint8_t out[TFS_SHA256_LEN]);

/* HMAC-SHA-256 of the concatenation of nparts parts (part[i], len[i]) under key. */
void tfs_hmac_sha256(const void *key, size_t keylen, const void *const *part,
		     const size_t *len, size_t nparts, uint8_t out[TFS_SHA256_LEN]);
/* Compares n bytes in a time that does not depend on where they differ: 1 equal, 0 not. */
int tfs_mac_equal(const uint8_t *a, const uint8_t *b, size_t n);

#endif
